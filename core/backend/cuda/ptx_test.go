package cuda

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
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
	want = append(want, "norm_quant", "swiglu_quant", "rope_pair", "store_kv_pair", "rope_store_pair", "swiglu_mmq_q8", "swiglu_mmq_q8k")
	for _, f := range fastMatVec {
		want = append(want, f.one, f.batch, f.multi)
	}
	for _, f := range stagedMatVec {
		want = append(want, f.one, f.batch, f.multi)
	}
	// fattn.go's: the exact flash kernels and the tensor-core ones.
	want = append(want, "fattn_f16_128w")
	for _, m := range []map[int]string{fattnHeadDims, fattnMMAHeadDims} {
		for _, n := range m {
			want = append(want, n)
		}
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
