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

// TestPDLPTXPlacesEveryKernelsWait: the sm_90 form of every embedded
// module raises the target, starts each kernel's body with
// launch_dependents, has each kernel pass a griddepcontrol.wait before any
// global load, store or atomic of its own (before its first instruction
// where the source marks no place; the marked mat-vecs issue only their
// weights' asynchronous copies first), and changes nothing else; PTX it
// cannot place the wait in is refused. Runs without a GPU.
func TestPDLPTXPlacesEveryKernelsWait(t *testing.T) {
	const wait, launch = "\tgriddepcontrol.wait;", "\tgriddepcontrol.launch_dependents;"
	marked := 0
	for name, src := range ptxFiles {
		out, err := pdlPTX(src)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(out, "\n.target sm_90\n") || strings.Contains(out, "sm_80") || strings.Contains(out, pdlMark) {
			t.Errorf("%s: target not raised, or a mark left", name)
		}
		var got, want []string
		for _, l := range strings.Split(out, "\n") {
			if l != wait && l != launch {
				got = append(got, l)
			}
		}
		for _, l := range strings.Split(strings.Replace(src, "\n.target sm_80\n", "\n.target sm_90\n", 1), "\n") {
			if !strings.Contains(l, pdlMark) {
				want = append(want, l)
			}
		}
		if strings.Join(got, "\n") != strings.Join(want, "\n") {
			t.Errorf("%s: the sm_90 form changed more than the target, the waits and the launches", name)
		}
		lines := strings.Split(out, "\n")
		kernels := 0
		for i, l := range lines {
			if !strings.Contains(l, ".entry ") {
				continue
			}
			kernels++
			k := i
			for strings.TrimSpace(lines[k]) != "{" {
				k++
			}
			if lines[k+1] != launch {
				t.Fatalf("%s line %d: a body that does not start with launch_dependents", name, k+2)
			}
			if lines[k+2] != wait {
				marked++
			}
			for m := k + 2; ; m++ {
				if lines[m] == wait {
					break
				}
				f := strings.Fields(lines[m])
				if lines[m] == "}" || (len(f) > 0 && (strings.HasPrefix(f[0], "ld.global") || strings.HasPrefix(f[0], "st.global") ||
					strings.HasPrefix(f[0], "atom.") || strings.HasPrefix(f[0], "red.") || strings.HasPrefix(f[0], "ld.") && !strings.HasPrefix(f[0], "ld.param"))) {
					t.Fatalf("%s line %d: %q before the kernel's wait", name, m+1, strings.TrimSpace(lines[m]))
				}
			}
		}
		if kernels != len(kernelNames(src)) || kernels == 0 {
			t.Errorf("%s: %d kernels seen, %d listed", name, kernels, len(kernelNames(src)))
		}
	}
	if marked == 0 {
		t.Error("no kernel places its wait after its first instruction (the mat-vecs' PDL_WAIT)")
	}
	if _, err := pdlPTX(".version 7.8\n.target sm_86\n"); err == nil {
		t.Error("PTX for another target was accepted")
	}
	if _, err := pdlPTX("//\n.target sm_80\n.visible .entry k(\n)\n"); err == nil {
		t.Error("an entry without a body was accepted")
	}
	if _, err := pdlPTX("//\n.target sm_80\n" + pdlMark + "\n.visible .entry k(\n)\n{\n\tret;\n}\n"); err == nil {
		t.Error("a mark outside a kernel body was accepted")
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
