package cli

import (
	"bufio"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"math"
	"os"
	"os/signal"
	"strconv"
	"strings"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/internal/units"
)

func init() {
	register("logits", "run tokens as one batch and write every position's logits (float32 LE)", runLogits)
}

// tokenIDs reads token ids separated by commas or spaces; bad is the first
// field that is not an id below limit (ok false).
func tokenIDs(s string, limit int64) (ids []int32, bad string, ok bool) {
	for _, f := range strings.FieldsFunc(s, func(r rune) bool { return r == ',' || r == ' ' }) {
		v, err := strconv.ParseInt(f, 10, 32)
		if err != nil || v < 0 || v >= limit {
			return nil, f, false
		}
		ids = append(ids, int32(v))
	}
	return ids, "", true
}

func parseTokens(s string) ([]int32, error) {
	out, bad, ok := tokenIDs(s, math.MaxInt32+1)
	if !ok {
		return nil, usagef("--tokens: %q is not a token id", bad)
	}
	if len(out) == 0 {
		return nil, usagef("--tokens: no token ids")
	}
	return out, nil
}

// loadFlags are shared by the commands that load a model.
type loadFlags struct {
	*planFlags
	model      *string
	threads    *int
	cpuWeights *string
}

func addLoadFlags(fs *flagSet) *loadFlags {
	return &loadFlags{planFlags: addPlanFlags(fs.FlagSet), model: fs.String("m", "", "model file (.gguf)"), threads: fs.Int("threads", 0, "CPU threads (default: all cores)"),
		cpuWeights: fs.String("cpu-weights", "", "how the CPU holds its weights: auto (copy into memory when they take at most half of the available memory), copy, or map (use them from the file); default $MINFER_CPU_WEIGHTS, else auto")}
}

func (l *loadFlags) load(ctx context.Context, e Env, progress bool) (*core.Session, error) {
	if *l.model == "" {
		return nil, usagef("-m FILE.gguf is required")
	}
	opts, err := l.options(e)
	if err != nil {
		return nil, err
	}
	lo := core.LoadOptions{PlanOptions: opts, Threads: *l.threads, CPUWeights: *l.cpuWeights, Logf: func(f string, a ...any) { fmt.Fprintf(e.Stderr, "warning: "+f+"\n", a...) }}
	var prog core.Progress
	width := 0 // of the progress line, to clear it
	if progress {
		last := -1
		prog = func(done, total int64) {
			// Called per tensor; the line changes once per percent.
			if pct := int(100 * done / max(total, 1)); pct != last {
				line := fmt.Sprintf("loading %3d%% · %s of %s", pct, units.Bytes(done), units.Bytes(total))
				fmt.Fprintf(e.Stderr, "\r%-*s", width, line)
				width, last = max(width, len(line)), pct
			}
		}
	}
	s, err := core.Load(ctx, *l.model, lo, prog)
	if width > 0 {
		fmt.Fprintf(e.Stderr, "\r%*s\r", width, "")
	}
	if err != nil {
		return nil, err
	}
	if r := s.OffloadReport(); r.Fallback != "" {
		fmt.Fprintf(e.Stderr, "%s\n", r)
	}
	return s, nil
}

// withSession loads the model and runs fn with it; Ctrl-C cancels both.
func (l *loadFlags) withSession(e Env, fn func(ctx context.Context, s *core.Session) error) error {
	ctx, stop := interruptible()
	defer stop()
	s, err := l.load(ctx, e, isTerminal(e.Stderr))
	if err != nil {
		return err
	}
	defer s.Close()
	return fn(ctx, s)
}

// isTerminal reports whether w is a terminal (a progress line on a pipe or
// in a log file would be noise).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}

// interruptible cancels ctx on Ctrl-C for the duration of a call.
func interruptible() (context.Context, context.CancelFunc) {
	return signal.NotifyContext(context.Background(), os.Interrupt)
}

func runLogits(e Env, args []string) error {
	fs := newFlagSet("logits", "-m FILE.gguf --tokens 1,2,3 --out F.f32", e)
	lf := addLoadFlags(fs)
	tokens := fs.String("tokens", "", "comma-separated token ids")
	out := fs.String("out", "", "output file (n_tokens × n_vocab float32, little-endian)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *out == "" {
		return usagef("--out is required")
	}
	toks, err := parseTokens(*tokens)
	if err != nil {
		return err
	}
	var logits []float32
	var nVocab int
	err = lf.withSession(e, func(ctx context.Context, s *core.Session) error {
		logits, err = s.Eval(ctx, toks, true)
		nVocab = s.NVocab()
		return err
	})
	if err != nil {
		return err
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	w := bufio.NewWriter(f)
	var b [4]byte
	for _, v := range logits {
		binary.LittleEndian.PutUint32(b[:], math.Float32bits(v))
		w.Write(b[:])
	}
	if err := w.Flush(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	fmt.Fprintf(e.Stderr, "wrote %d × %d logits to %s\n", len(toks), nVocab, *out)
	return nil
}
