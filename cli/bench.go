package cli

import (
	"context"
	"fmt"
	"os"
	"runtime/pprof"
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
	fs := newFlagSet("bench", "-m FILE.gguf [-p 128] [-n 32] [-t THREADS] [-r RUNS]", e)
	lf := addLoadFlags(fs)
	fs.IntVar(lf.threads, "t", 0, "same as -threads (llama-bench's spelling)")
	prompt := fs.Int("p", 128, "prompt tokens (one prefill)")
	decode := fs.Int("n", 32, "decode tokens (one at a time)")
	reps := fs.Int("r", 1, "repetitions; with more than one, an untimed warm-up run first and mean ± stddev")
	asJSON := fs.Bool("json", false, "print JSON")
	cpuProfile := fs.String("cpuprofile", "", "write a Go CPU profile of the measured runs (not the load) to this file; the bandwidth meter's samples carry the label bench=meter (pprof -tagignore bench=meter leaves them out)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *prompt <= 0 || *decode <= 0 || *reps <= 0 {
		return usagef("-p, -n and -r must be positive")
	}
	var r core.BenchResult
	err := lf.withSession(e, func(ctx context.Context, s *core.Session) (err error) {
		if *cpuProfile != "" {
			stop, err := startCPUProfile(*cpuProfile)
			if err != nil {
				return err
			}
			defer func() {
				if perr := stop(); err == nil {
					err = perr
				}
			}()
		}
		r, err = s.BenchN(ctx, *prompt, *decode, *reps, *reps > 1)
		return err
	})
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(e.Stdout, r)
	}
	fmt.Fprintf(e.Stdout, "%s · %d threads · %s kernels · %d run(s)\nprefill %d tokens: %.1f ± %.1f tok/s\ndecode  %d tokens: %.2f ± %.2f tok/s (%.2f GB/s of weights; memory reads %.2f GB/s here, %s of %d readings around the decode runs, max %.2f: %.0f%%)\n",
		r.Model, r.Threads, r.KernelLevel, r.Repetitions, r.PromptTokens, r.PrefillTokS, r.PrefillStdDev,
		r.DecodeTokens, r.DecodeTokS, r.DecodeStdDev, r.DecodeGBs, r.MemGBs, r.MemBasis, len(r.MemSamples), r.MemGBsMax, 100*r.RatioOfMem)
	if r.PrefillCPUms > 0 && r.DecodeCPUms > 0 {
		fmt.Fprintf(e.Stdout, "cpu time per token: prefill %.1f ms, decode %.1f ms (all threads)\n", r.PrefillCPUms, r.DecodeCPUms)
	}
	if r.CPUWeights != "" {
		fmt.Fprintf(e.Stdout, "CPU weights: %s\n", r.CPUWeights)
	}
	if r.Device != "" {
		fmt.Fprintf(e.Stdout, "device %s: %d of %d blocks; device-to-device copy %.0f GB/s: decode reads weights at %.1f%% of it\n",
			r.Device, min(r.GPULayers, r.NLayers), r.NLayers, r.DevCopyGBs, 100*r.RatioOfCopy)
	}
	if r.DecodeDeviceMs > 0 {
		fmt.Fprintf(e.Stdout, "decode step %.3f ms (one more run, timers on): the device busy %.3f ms of it (%.0f%%), the rest host, copies and launches\n",
			r.DecodeStepMs, r.DecodeDeviceMs, 100*r.DecodeDeviceMs/r.DecodeStepMs)
	}
	if len(r.DecodePhasesMs) > 0 {
		fmt.Fprintf(e.Stdout, "decode step phases (ms):")
		for _, name := range core.StepPhaseNames {
			fmt.Fprintf(e.Stdout, " %s %.3f", name, r.DecodePhasesMs[name])
		}
		if r.DecodeWaitMs > 0 {
			fmt.Fprintf(e.Stdout, " (read: wait %.3f, copy %.3f)", r.DecodeWaitMs, r.DecodeCopyMs)
		}
		fmt.Fprintln(e.Stdout)
	}
	return nil
}

// startCPUProfile starts a Go CPU profile into path and returns what stops
// it and closes the file.
func startCPUProfile(path string) (stop func() error, err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, err
	}
	if err := pprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("cpu profile: %w", err)
	}
	return func() error {
		pprof.StopCPUProfile()
		return f.Close()
	}, nil
}

func runSynth(e Env, args []string) error {
	fs := newFlagSet("synth", "--preset 1b --type Q4_K -o FILE.gguf", e)
	preset := fs.String("preset", "tiny", "model shape: "+synth.PresetNames())
	typ := fs.String("type", "Q4_K", "weight type of the block matmuls, or a llama.cpp mix (Q4_K_M, Q5_K_M)")
	out := fs.String("o", "", "output file")
	seed := fs.Uint64("seed", 1, "random seed")
	layers := fs.Int("layers", 0, "number of blocks (0: the preset's); the shape of a big model at a fraction of its size")
	if err := fs.Parse(args); err != nil {
		return err
	}
	cfg, ok := synth.Presets[*preset]
	if !ok {
		return usagef("--preset %q: want one of %s", *preset, synth.PresetNames())
	}
	if *layers < 0 {
		return usagef("--layers %d: want a positive number of blocks (0: the preset's)", *layers)
	}
	if *layers > 0 {
		cfg.NLayer = *layers
	}
	name := strings.ToUpper(*typ)
	if m, ok := synth.Mixes[name]; ok {
		cfg.Mix, name = name, m.Base.String()
	}
	t, ok := gguf.TypeByName(name)
	if !ok {
		return usagef("--type %q is not a ggml type or a mix (Q4_K_M, Q5_K_M)", *typ)
	}
	if *out == "" {
		return usagef("-o FILE.gguf is required")
	}
	cfg.Type, cfg.Seed = t, *seed
	b, err := synth.Build(cfg)
	if err != nil {
		return err
	}
	if err := b.WriteFile(*out); err != nil { // a temporary beside it, renamed into place
		return err
	}
	st, _ := os.Stat(*out)
	fmt.Fprintf(e.Stderr, "wrote %s (%s)\n", *out, units.Bytes(st.Size()))
	return nil
}
