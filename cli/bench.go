package cli

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/synth"
	"github.com/minfer/minfer/internal/units"
)

func init() {
	register("bench", "measure prefill and decode tokens/s (and decode vs memory bandwidth)", runBench)
	register("synth", "write a random-weight llama model of a given size and type (for benchmarks)", runSynth)
}

func runBench(e Env, args []string) error {
	fs := newFlagSet("bench", "-m FILE.gguf [-p 128] [-n 32]", e)
	lf := addLoadFlags(fs)
	prompt := fs.Int("p", 128, "prompt tokens (one prefill)")
	decode := fs.Int("n", 32, "decode tokens (one at a time)")
	asJSON := fs.Bool("json", false, "print JSON")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *prompt <= 0 || *decode <= 0 {
		return usagef("-p and -n must be positive")
	}
	var r core.BenchResult
	err := lf.withSession(e, func(ctx context.Context, s *core.Session) (err error) {
		r, err = s.Bench(ctx, *prompt, *decode)
		return err
	})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.Stdout, r)
	}
	fmt.Fprintf(e.Stdout, "%s · %d threads\nprefill %d tokens: %.1f tok/s\ndecode  %d tokens: %.2f tok/s (%.2f GB/s of weights; memory reads %.2f GB/s here: %.0f%%)\n",
		r.Model, r.Threads, r.PromptTokens, r.PrefillTokS, r.DecodeTokens, r.DecodeTokS, r.DecodeGBs, r.MemGBs, 100*r.RatioOfMem)
	if r.Device != "" {
		fmt.Fprintf(e.Stdout, "device %s: %d of %d blocks; device-to-device copy %.0f GB/s: decode reads weights at %.1f%% of it\n",
			r.Device, min(r.GPULayers, r.NLayers), r.NLayers, r.DevCopyGBs, 100*r.RatioOfCopy)
	}
	return nil
}

func runSynth(e Env, args []string) error {
	fs := newFlagSet("synth", "--preset 1b --type Q4_K -o FILE.gguf", e)
	preset := fs.String("preset", "tiny", "model shape: "+synth.PresetNames())
	typ := fs.String("type", "Q4_K", "weight type of the block matmuls")
	out := fs.String("o", "", "output file")
	seed := fs.Uint64("seed", 1, "random seed")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, ok := synth.Presets[*preset]
	if !ok {
		return usagef("--preset %q: want one of %s", *preset, synth.PresetNames())
	}
	t, ok := gguf.TypeByName(strings.ToUpper(*typ))
	if !ok {
		return usagef("--type %q is not a ggml type", *typ)
	}
	if *out == "" {
		return usagef("-o FILE.gguf is required")
	}
	cfg.Type, cfg.Seed = t, *seed
	tmp, err := os.CreateTemp(filepath.Dir(*out), ".synth-*")
	if err != nil {
		return err
	}
	w := bufio.NewWriterSize(tmp, 1<<20)
	if err := synth.Write(w, cfg); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := w.Flush(); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return err
	}
	if err := tmp.Close(); err != nil {
		os.Remove(tmp.Name())
		return err
	}
	if err := os.Rename(tmp.Name(), *out); err != nil {
		return err
	}
	st, _ := os.Stat(*out)
	fmt.Fprintf(e.Stderr, "wrote %s (%s)\n", *out, units.Bytes(st.Size()))
	return nil
}
