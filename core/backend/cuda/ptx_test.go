package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
)

// TestPTXMatchesSources fails when a kernel source changed without its PTX
// being regenerated (go generate ./core/backend/cuda on a machine with
// nvcc): each .ptx starts with the sha256 of its .cu and every .cuh, in the
// order kernels/generate.sh hashes them. Runs without a GPU.
func TestPTXMatchesSources(t *testing.T) {
	cus, _ := filepath.Glob("kernels/*.cu")
	cuhs, _ := filepath.Glob("kernels/*.cuh")
	sort.Strings(cuhs)
	if len(cus) == 0 {
		t.Fatal("no kernel sources")
	}
	for _, cu := range cus {
		h := sha256.New()
		for _, f := range append([]string{cu}, cuhs...) {
			b, err := os.ReadFile(f)
			if err != nil {
				t.Fatal(err)
			}
			h.Write(b)
		}
		want := hex.EncodeToString(h.Sum(nil))
		stem := strings.TrimSuffix(filepath.Base(cu), ".cu")
		ptx, ok := ptxFiles[stem]
		if !ok {
			t.Errorf("%s has no embedded kernels/%s.ptx: run go generate", cu, stem)
			continue
		}
		first, _, _ := strings.Cut(ptx, "\n")
		if got := strings.TrimPrefix(first, ptxHashPrefix); got != want {
			t.Errorf("kernels/%s.ptx was generated from other sources (hash %s, sources %s): run go generate ./core/backend/cuda", stem, got, want)
		}
	}
	if len(ptxFiles) != len(cus) {
		t.Errorf("%d embedded PTX modules for %d sources", len(ptxFiles), len(cus))
	}
}

// TestEveryKernelTheBackendLaunchesIsInThePTX: the names ops.go launches
// exist as .entry points (checked without a GPU).
func TestEveryKernelTheBackendLaunchesIsInThePTX(t *testing.T) {
	have := map[string]bool{}
	for _, p := range ptxFiles {
		for _, n := range kernelNames(p) {
			have[n] = true
		}
	}
	want := []string{"rms_norm", "mul_f32", "add_f32", "swiglu", "rope", "store_kv_f16", "store_kv_f32", "attention_f16", "attention_f32",
		"quant_q8_0", "quant_q8_1", "quant_q8_k", "quant_f16", "quant_bf16", "attn_used", "scale_f32", "softcap_f32", "gelu_f32k",
		"sigmoid_f32", "softmax_rows", "mul_rows", "top_k", "moe_weights", "weighted_sum", "matvec_f16f32_1", "matvec_f16f32_b", "matvec_id_f16x512"}
	for _, s := range kernelSuffix {
		want = append(want, "get_rows_"+s, "matvec_"+s+"_1", "matvec_"+s+"_b", "matvec_id_"+s)
	}
	for _, k := range typeKernels {
		want = append(want, k.getRows, k.matvec1, k.matvecB, k.matvecID)
	}
	want = append(want, f16f32Kernel.matvec1, f16f32Kernel.matvecB, f16MatVecID)
	// decode.go's kernels.
	want = append(want, "norm_quant", "swiglu_quant", "rope_pair", "store_kv_pair")
	for _, f := range fastMatVec {
		want = append(want, f.one, f.batch, f.multi)
	}
	for _, f := range stagedMatVec {
		want = append(want, f.one, f.batch, f.multi)
	}
	for _, e := range decodeHeadDims {
		want = append(want, "attn_x_scores"+e, "attn_x_values"+e, "attn_x_vals"+e, "attn_x_one"+e)
	}
	for _, n := range want {
		if !have[n] {
			t.Errorf("kernel %s missing from the PTX", n)
		}
	}
}

// TestNoDriverIsAnOutcome: on a machine without the CUDA driver, opening
// the backend is an error wrapping ErrNoDriver and Status says why; never
// a panic.
func TestNoDriverIsAnOutcome(t *testing.T) {
	if _, err := loadDriver(); err == nil {
		t.Skip("a CUDA driver is present")
	}
	_, err := Open(Options{})
	if err == nil || !strings.Contains(err.Error(), "CUDA driver") {
		t.Errorf("Open without a driver: %v", err)
	}
	if ok, line := Status(); ok || !strings.Contains(line, "not usable") {
		t.Errorf("Status: %v %q", ok, line)
	}
}

// TestPDLPTXEntersEveryKernelWithTheWait: the sm_90 form of every
// embedded module raises the target and starts each kernel's body with
// griddepcontrol.wait then launch_dependents, and changes nothing else;
// PTX it cannot place the wait in is refused. Runs without a GPU.
func TestPDLPTXEntersEveryKernelWithTheWait(t *testing.T) {
	for name, src := range ptxFiles {
		out, err := pdlPTX(src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		n := len(kernelNames(src))
		if got := strings.Count(out, "\tgriddepcontrol.wait;\n\tgriddepcontrol.launch_dependents;\n"); got != n || n == 0 {
			t.Errorf("%s: %d waits for %d kernels", name, got, n)
		}
		if !strings.Contains(out, "\n.target sm_90\n") || strings.Contains(out, "sm_80") {
			t.Errorf("%s: target not raised to sm_90", name)
		}
		back := strings.ReplaceAll(out, "\tgriddepcontrol.wait;\n\tgriddepcontrol.launch_dependents;\n", "")
		if back != strings.Replace(src, "\n.target sm_80\n", "\n.target sm_90\n", 1) {
			t.Errorf("%s: the sm_90 form changed more than the target and the waits", name)
		}
		// Each wait is the first line of an entry's body.
		lines := strings.Split(out, "\n")
		for i, l := range lines {
			if l == "\tgriddepcontrol.wait;" && (i == 0 || strings.TrimSpace(lines[i-1]) != "{") {
				t.Fatalf("%s: a wait at line %d is not the first of a body", name, i+1)
			}
		}
	}
	if _, err := pdlPTX(".version 7.8\n.target sm_86\n"); err == nil {
		t.Error("PTX for another target was accepted")
	}
	if _, err := pdlPTX("//\n.target sm_80\n.visible .entry k(\n)\n"); err == nil {
		t.Error("an entry without a body was accepted")
	}
}

// TestPDLPTXAssembles: ptxas, where the machine has it, assembles the
// sm_90 form of every module for sm_90 (the driver's JIT does the same at
// start on a Hopper GPU).
func TestPDLPTXAssembles(t *testing.T) {
	ptxas, err := exec.LookPath("ptxas")
	if err != nil {
		t.Skip("no ptxas on this machine")
	}
	if testing.Short() {
		t.Skip("short: ptxas takes tens of seconds")
	}
	dir := t.TempDir()
	for name, src := range ptxFiles {
		out, err := pdlPTX(src)
		if err != nil {
			t.Fatal(err)
		}
		p := filepath.Join(dir, name+".ptx")
		if err := os.WriteFile(p, []byte(out), 0o644); err != nil {
			t.Fatal(err)
		}
		if b, err := exec.Command(ptxas, "-arch=sm_90", "-o", filepath.Join(dir, name+".cubin"), p).CombinedOutput(); err != nil {
			t.Errorf("ptxas -arch=sm_90 %s: %v\n%s", name, err, b)
		}
	}
}
