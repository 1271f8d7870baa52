package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"github.com/minfer/minfer/core"
	"math"
	"path/filepath"
	"testing"

	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/ggtest"
)

// TestBenchRepetitionsJSON: `bench -r 3 -t 2 --json` reports three samples
// of each rate, their mean as prefill_tok_s / decode_tok_s, a stddev, the
// kernel level and the bandwidth fraction.
func TestBenchRepetitionsJSON(t *testing.T) {
	var out, errb bytes.Buffer
	model := ggtest.Path(t, "models", "stories260K.gguf")
	if code := runCLI(&out, &errb, "bench", "-m", model, "-p", "8", "-n", "4", "-t", "2", "-r", "3", "--json"); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var r struct {
		Threads        int       `json:"threads"`
		Level          string    `json:"kernel_level"`
		Reps           int       `json:"repetitions"`
		Prefill        float64   `json:"prefill_tok_s"`
		PrefillSD      float64   `json:"prefill_tok_s_stddev"`
		Decode         float64   `json:"decode_tok_s"`
		DecodeSD       float64   `json:"decode_tok_s_stddev"`
		PrefillSamples []float64 `json:"prefill_tok_s_samples"`
		DecodeSamples  []float64 `json:"decode_tok_s_samples"`
		Ratio          *float64  `json:"decode_fraction_of_memory_bandwidth"`
		PrefillCPU     float64   `json:"prefill_cpu_ms_per_tok"`
		DecodeCPU      float64   `json:"decode_cpu_ms_per_tok"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if r.Threads != 2 || r.Reps != 3 || r.Level == "" || len(r.PrefillSamples) != 3 || len(r.DecodeSamples) != 3 || r.Ratio == nil {
		t.Fatalf("report %+v", r)
	}
	mean := func(xs []float64) float64 { return (xs[0] + xs[1] + xs[2]) / 3 }
	if d := r.Prefill - mean(r.PrefillSamples); d > 1e-9*r.Prefill || d < -1e-9*r.Prefill {
		t.Errorf("prefill_tok_s %g is not the mean of %v", r.Prefill, r.PrefillSamples)
	}
	if d := r.Decode - mean(r.DecodeSamples); d > 1e-9*r.Decode || d < -1e-9*r.Decode {
		t.Errorf("decode_tok_s %g is not the mean of %v", r.Decode, r.DecodeSamples)
	}
	if r.PrefillSD < 0 || r.DecodeSD < 0 || r.Prefill <= 0 || r.Decode <= 0 || r.PrefillCPU < 0 || r.DecodeCPU < 0 {
		t.Errorf("report %+v", r)
	}
	if code := runCLI(&out, &errb, "bench", "-m", model, "-r", "0"); code == 0 {
		t.Error("-r 0 was accepted")
	}
}

// TestBenchMemorySamplesJSON: `bench -r 2 --json` reads the bandwidth
// meter just before and just after each measured decode run and reports
// the readings (measured_memory_gb_s_samples: two per run), their mean as
// measured_memory_gb_s (measured_memory_basis "mean"), their largest as
// measured_memory_gb_s_max, and the roofline fraction against the mean;
// a missing field or one inconsistent with the samples fails.
func TestBenchMemorySamplesJSON(t *testing.T) {
	var out, errb bytes.Buffer
	model := ggtest.Path(t, "models", "stories260K.gguf")
	const reps = 2
	if code := runCLI(&out, &errb, "bench", "-m", model, "-p", "8", "-n", "4", "-t", "2", "-r", fmt.Sprint(reps), "--json"); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(out.Bytes(), &raw); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	for _, k := range []string{"measured_memory_gb_s", "measured_memory_basis", "measured_memory_gb_s_max",
		"measured_memory_gb_s_samples", "decode_fraction_of_memory_bandwidth", "decode_weight_gb_s"} {
		if _, ok := raw[k]; !ok {
			t.Errorf("field %s missing: %s", k, out.String())
		}
	}
	var r struct {
		Mem     float64   `json:"measured_memory_gb_s"`
		Basis   string    `json:"measured_memory_basis"`
		Max     float64   `json:"measured_memory_gb_s_max"`
		Samples []float64 `json:"measured_memory_gb_s_samples"`
		Ratio   float64   `json:"decode_fraction_of_memory_bandwidth"`
		Weights float64   `json:"decode_weight_gb_s"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	if r.Basis != "mean" {
		t.Errorf("measured_memory_basis %q, want \"mean\"", r.Basis)
	}
	if len(r.Samples) != 2*reps {
		t.Fatalf("%d memory samples %v, want %d (before and after each of %d decode runs)", len(r.Samples), r.Samples, 2*reps, reps)
	}
	var sum, hi float64
	for _, g := range r.Samples {
		if !(g > 0) || math.IsInf(g, 0) {
			t.Errorf("memory sample %g in %v", g, r.Samples)
		}
		sum += g
		hi = max(hi, g)
	}
	near := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Abs(b) }
	if mean := sum / float64(len(r.Samples)); !near(r.Mem, mean) {
		t.Errorf("measured_memory_gb_s %g is not the mean %g of %v", r.Mem, mean, r.Samples)
	}
	if r.Max != hi {
		t.Errorf("measured_memory_gb_s_max %g, the samples' largest is %g (%v)", r.Max, hi, r.Samples)
	}
	if r.Max < r.Mem {
		t.Errorf("max %g below the mean %g", r.Max, r.Mem)
	}
	if !(r.Weights > 0) || !near(r.Ratio, r.Weights/r.Mem) {
		t.Errorf("decode_fraction_of_memory_bandwidth %g, want decode_weight_gb_s / mean = %g / %g", r.Ratio, r.Weights, r.Mem)
	}
}

// TestBenchStepPhasesJSON: --json carries the mean wall time of each phase
// of a decode step, every phase named, none negative, and together no more
// than the mean step of the run they were timed in (decode_step_ms: one
// more run after the measured ones); the issue (the CPU computes the nodes
// there) is a part of it.
func TestBenchStepPhasesJSON(t *testing.T) {
	var out, errb bytes.Buffer
	model := ggtest.Path(t, "models", "stories260K.gguf")
	if code := runCLI(&out, &errb, "bench", "-m", model, "-p", "8", "-n", "16", "-t", "2", "-r", "2", "--json"); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var r struct {
		Decode []float64          `json:"decode_tok_s_samples"`
		Step   float64            `json:"decode_step_ms"`
		Phases map[string]float64 `json:"decode_step_phases_ms"`
	}
	if err := json.Unmarshal(out.Bytes(), &r); err != nil {
		t.Fatalf("%v: %s", err, out.String())
	}
	var sum float64
	for _, name := range core.StepPhaseNames {
		v, ok := r.Phases[name]
		if !ok || v < 0 {
			t.Errorf("phase %q: %v (present %v) in %v", name, v, ok, r.Phases)
		}
		sum += v
	}
	if len(r.Phases) != len(core.StepPhaseNames) {
		t.Errorf("phases %v, want exactly %v", r.Phases, core.StepPhaseNames)
	}
	if len(r.Decode) != 2 {
		t.Errorf("%d measured runs' decode rates %v, want 2 (the timed run is not one)", len(r.Decode), r.Decode)
	}
	if !(sum > 0) || sum > r.Step*1.0001 {
		t.Errorf("phases sum to %g ms, the timed run's mean step is %g ms", sum, r.Step)
	}
	if !(r.Phases["issue"] > 0) {
		t.Errorf("issue phase %v: the CPU computes there", r.Phases["issue"])
	}
}

// TestSynthLayers: `synth --layers 3` writes the preset's shape with three
// blocks (read back through gguf), `--type q4_k_m` writes llama.cpp's mix,
// and a negative count is refused.
func TestSynthLayers(t *testing.T) {
	var out, errb bytes.Buffer
	dir := t.TempDir()
	path, mixed := filepath.Join(dir, "m.gguf"), filepath.Join(dir, "mixed.gguf")
	if code := runCLI(&out, &errb, "synth", "--preset", "tiny", "--layers", "3", "--type", "Q8_0", "-o", path); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	f, err := gguf.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if n, err := f.Meta.Uint32("llama.block_count"); err != nil || n != 3 {
		t.Fatalf("block_count %d (%v), want 3", n, err)
	}
	_, last := f.Tensor("blk.2.ffn_down.weight")
	_, beyond := f.Tensor("blk.3.ffn_down.weight")
	if !last || beyond {
		t.Fatal("tensors do not match three blocks")
	}
	if code := runCLI(&out, &errb, "synth", "--preset", "tiny", "--layers", "8", "--type", "q4_k_m", "-o", mixed); code != 0 {
		t.Fatalf("Q4_K_M: exit %d: %s", code, errb.String())
	}
	g, err := gguf.Open(mixed)
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close()
	if v, ok := g.Tensor("blk.0.attn_v.weight"); !ok || v.Type != gguf.TypeQ6_K {
		t.Errorf("Q4_K_M blk.0.attn_v: %+v", v)
	}
	if q, ok := g.Tensor("blk.0.attn_q.weight"); !ok || q.Type != gguf.TypeQ4_K {
		t.Errorf("Q4_K_M blk.0.attn_q: %+v", q)
	}
	if code := runCLI(&out, &errb, "synth", "--preset", "tiny", "--layers", "-1", "-o", path); code == 0 {
		t.Error("--layers -1 was accepted")
	}
}
