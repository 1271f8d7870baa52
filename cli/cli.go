// Package cli is Minfer's command line: every subcommand drives the same
// core surface as the window, so anything the app does can be scripted and
// tested without a display.
package cli

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
)

// Version is the app version (FyneApp.toml carries the same).
var Version = "0.1.0"

// Env is what a command reads from its surroundings; tests replace it.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	LookupEnv      func(string) (string, bool)
}

// DefaultEnv is the process's own.
func DefaultEnv() Env {
	return Env{Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, LookupEnv: os.LookupEnv}
}

type command struct {
	summary string
	run     func(e Env, args []string) error
}

var commands = map[string]command{}

func register(name, summary string, run func(e Env, args []string) error) {
	commands[name] = command{summary, run}
}

func init() {
	register("version", "print the version", func(e Env, args []string) error {
		fs := newFlags("version", "", e)
		if err := fs.Parse(args); err != nil {
			return err
		}
		fmt.Fprintf(e.Stdout, "minfer %s\n", Version)
		return nil
	})
}

// errUsage marks argument errors: usage is printed, exit code 2.
var errUsage = errors.New("usage")

// flagSet is a FlagSet that accepts flags after positional arguments.
type flagSet struct{ *flag.FlagSet }

func newFlagSet(name, argsUsage string, e Env) *flagSet {
	return &flagSet{newFlags(name, argsUsage, e)}
}

// Parse parses flags anywhere in args and refuses stray arguments.
func (f *flagSet) Parse(args []string) error {
	pos, err := parseInterspersed(f.FlagSet, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		f.Usage()
		return usagef("unexpected argument %q", pos[0])
	}
	return nil
}

func newFlags(name, argsUsage string, e Env) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(e.Stderr)
	fs.Usage = func() {
		fmt.Fprintf(e.Stderr, "usage: minfer %s [flags] %s\n%s\n", name, argsUsage, commands[name].summary)
		fs.PrintDefaults()
	}
	return fs
}

// Usage prints the subcommand list.
func Usage(w io.Writer) {
	fmt.Fprintf(w, "minfer %s: local LLM chat and inference for GGUF models\n\n", Version)
	fmt.Fprintf(w, "usage: minfer                 open the window\n       minfer COMMAND [flags]\n\ncommands:\n")
	var names []string
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintf(w, "\n'minfer COMMAND --help' shows a command's flags.\n")
}

// Main runs one command and returns the process exit code.
func Main(e Env, args []string) int {
	if len(args) == 0 || args[0] == "help" || args[0] == "--help" || args[0] == "-h" {
		Usage(e.Stdout)
		return 0
	}
	c, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(e.Stderr, "minfer: unknown command %q\n", args[0])
		Usage(e.Stderr)
		return 2
	}
	err := c.run(e, args[1:])
	switch {
	case err == nil:
		return 0
	case errors.Is(err, flag.ErrHelp):
		return 0
	case errors.Is(err, errUsage):
		if msg := strings.TrimPrefix(err.Error(), errUsage.Error()+": "); msg != errUsage.Error() {
			fmt.Fprintf(e.Stderr, "minfer %s: %s\n", args[0], msg)
		}
		return 2
	default:
		fmt.Fprintf(e.Stderr, "minfer %s: %v\n", args[0], err)
		return 1
	}
}

func usagef(format string, a ...any) error {
	return fmt.Errorf("%w: %s", errUsage, fmt.Sprintf(format, a...))
}

// oneFile parses flags around exactly one FILE argument.
func oneFile(fs *flag.FlagSet, args []string) (string, error) {
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return "", err
	}
	if len(pos) != 1 {
		fs.Usage()
		return "", usagef("want one FILE.gguf, got %d arguments", len(pos))
	}
	return pos[0], nil
}

// parseInterspersed lets flags follow positional arguments
// (`minfer inspect FILE --json`), as users type them.
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		rest := fs.Args()
		if len(rest) == 0 {
			return pos, nil
		}
		if rest[0] == "--" {
			return append(pos, rest[1:]...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
	}
}
