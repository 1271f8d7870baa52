// Command minfer is a desktop chat app for local LLMs in GGUF files, with
// its own inference runtime. With no arguments it opens the window; with a
// command it runs that command in the terminal (`minfer help`).
package main

import (
	"fmt"
	"os"

	"github.com/minfer/minfer/cli"
	"github.com/minfer/minfer/ui"
)

func main() {
	if len(os.Args) < 2 || os.Args[1] == "gui" {
		var args []string
		if len(os.Args) > 2 {
			args = os.Args[2:]
		}
		if err := ui.Run(args); err != nil {
			fmt.Fprintf(os.Stderr, "minfer: %v\n", err)
			os.Exit(1)
		}
		return
	}
	os.Exit(cli.Main(cli.DefaultEnv(), os.Args[1:]))
}
