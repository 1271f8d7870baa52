package cuda

import (
	"strings"
	"testing"
)

// ptxEntries splits a PTX module into its .entry functions: name → the
// body's instruction lines (trimmed, blank lines dropped).
func ptxEntries(t *testing.T, ptx string) map[string][]string {
	t.Helper()
	out := map[string][]string{}
	lines := strings.Split(ptx, "\n")
	for i := 0; i < len(lines); i++ {
		names := kernelNames(lines[i])
		if len(names) != 1 {
			continue
		}
		for i < len(lines) && strings.TrimSpace(lines[i]) != "{" {
			i++
		}
		var body []string
		for i++; i < len(lines); i++ {
			l := strings.TrimSpace(lines[i])
			if l == "}" && !strings.HasPrefix(lines[i], "\t") {
				break
			}
			if l != "" {
				body = append(body, l)
			}
		}
		out[names[0]] = body
	}
	return out
}

// stagedMatVecEntry: the kernels that may copy weights (cp.async) before
// their wait.
func stagedMatVecEntry(name string) bool {
	return strings.HasPrefix(name, "mvs_") || strings.HasPrefix(name, "mvp_") || strings.HasPrefix(name, "mvk_")
}

// inputPrologueEntry: the kernels that may read (global loads, cp.async
// into shared memory, L2 prefetches; never a store or an atomic) what the
// kernel before them does not write, before their wait: the one-block
// attention with the rope group reads the step's inputs (mask, cache row)
// and the cache rows of earlier steps (pdl.go).
func inputPrologueEntry(name string) bool { return strings.HasPrefix(name, "attn_x_one_rope_") }

// pdlPrologueViolation checks one entry's body against pdl.go's rule and
// returns what breaks it ("" when nothing): exactly one wait and one
// launch, the launch after the wait; before the wait no return or exit, no
// branch to a label after it (so every path runs it), and no global,
// generic or atomic memory access but the staged mat-vecs' cp.async.
func pdlPrologueViolation(name string, body []string) string {
	wait, launch := -1, -1
	for i, l := range body {
		switch l {
		case pdlWaitMarker:
			if wait >= 0 {
				return "two waits"
			}
			wait = i
		case pdlLaunchMarker:
			if launch >= 0 {
				return "two launches"
			}
			launch = i
		}
	}
	if wait < 0 || launch < 0 {
		return "no wait or no launch marker"
	}
	if launch < wait {
		return "the launch before the wait"
	}
	labelsBefore := map[string]bool{}
	for _, l := range body[:wait] {
		if strings.HasSuffix(l, ":") {
			labelsBefore[strings.TrimSuffix(l, ":")] = true
		}
	}
	for _, l := range body[:wait] {
		if strings.HasPrefix(l, "//") || strings.HasSuffix(l, ":") || strings.HasPrefix(l, ".") || l == "{" || l == "}" {
			continue
		}
		ins := l
		if strings.HasPrefix(ins, "@") { // a predicate
			if _, rest, ok := strings.Cut(ins, " "); ok {
				ins = strings.TrimSpace(rest)
			}
		}
		op, args, _ := strings.Cut(strings.ReplaceAll(ins, "\t", " "), " ")
		switch {
		case strings.TrimSuffix(op, ";") == "ret" || strings.TrimSuffix(op, ";") == "exit":
			return "returns before the wait: " + l
		case strings.HasPrefix(op, "bra"):
			if target := strings.TrimSuffix(strings.TrimSpace(args), ";"); !labelsBefore[target] {
				return "a branch past the wait: " + l
			}
		case strings.HasPrefix(op, "cp.async"):
			if !stagedMatVecEntry(name) && !inputPrologueEntry(name) {
				return "cp.async before the wait: " + l
			}
		case (strings.HasPrefix(op, "ld.global") || strings.HasPrefix(op, "prefetch.global")) && inputPrologueEntry(name):
		case strings.HasPrefix(op, "ld.") || strings.HasPrefix(op, "st.") || strings.HasPrefix(op, "atom") || strings.HasPrefix(op, "red.") ||
			strings.HasPrefix(op, "prefetch") || strings.HasPrefix(op, "ldu"):
			if !strings.HasPrefix(op, "ld.param") && !strings.HasPrefix(op, "ld.shared") && !strings.HasPrefix(op, "st.shared") {
				return "memory access before the wait: " + l
			}
		}
	}
	return ""
}

// TestPTXPDLMarkers: every kernel of every embedded module follows pdl.go's
// rule, so a kernel added without PDL_ENTRY, or one that touches global
// memory (or can return) before its wait, fails here without a GPU.
func TestPTXPDLMarkers(t *testing.T) {
	n := 0
	for mod, ptx := range ptxFiles {
		entries := ptxEntries(t, ptx)
		if len(entries) != len(kernelNames(ptx)) {
			t.Fatalf("%s: %d entries parsed of %d", mod, len(entries), len(kernelNames(ptx)))
		}
		for name, body := range entries {
			n++
			if v := pdlPrologueViolation(name, body); v != "" {
				t.Errorf("%s.%s: %s", mod, name, v)
			}
		}
	}
	if n < 100 {
		t.Errorf("only %d kernels checked", n)
	}
}

// TestPDLRuleCatches: the checker itself fails the shapes it is there to
// catch.
func TestPDLRuleCatches(t *testing.T) {
	w, l := pdlWaitMarker, pdlLaunchMarker
	for _, c := range []struct {
		name string
		body []string
		bad  bool
	}{
		{"k", []string{"ld.param.u64 %rd1, [p];", w, l, "ld.global.f32 %f1, [%rd1];", "ret;"}, false},
		{"k", []string{"ld.param.u64 %rd1, [p];", "ld.global.f32 %f1, [%rd1];", w, l, "ret;"}, true},
		{"k", []string{"st.global.f32 [%rd1], %f1;", w, l}, true},
		{"k", []string{"atom.global.add.u32 %r1, [%rd1], 1;", w, l}, true},
		{"k", []string{"ld.u32 %r1, [%rd1];", w, l}, true}, // generic
		{"k", []string{l, w}, true},
		{"k", []string{w}, true},
		{"k", []string{w, l, w}, true},
		{"k", []string{"@%p1 bra $L__BB0_2;", w, l, "$L__BB0_2:", "ret;"}, true},  // skips the wait
		{"k", []string{"@%p1 ret;", w, l}, true},                                  // returns first
		{"k", []string{"$L__BB0_1:", "@%p1 bra $L__BB0_1;", w, l, "ret;"}, false}, // a loop before it
		{"k", []string{"cp.async.cg.shared.global [%r1], [%rd1], 16;", w, l}, true},
		{"mvs_q4_k_1", []string{"cp.async.cg.shared.global [%r1], [%rd1], 16;", w, l}, false},
		{"mvs_q4_k_1", []string{"ld.global.u32 %r1, [%rd1];", w, l}, true},
		{"attn_x_one_rope_64", []string{"ld.global.u32 %r1, [%rd1];", "prefetch.global.L2 [%rd2];", "cp.async.cg.shared.global [%r1], [%rd1], 16;", w, l}, false},
		{"attn_x_one_rope_64", []string{"st.global.f32 [%rd1], %f1;", w, l}, true},
		{"attn_x_one_rope_64", []string{"atom.global.add.u32 %r1, [%rd1], 1;", w, l}, true},
		{"attn_x_one_rope_64", []string{"ld.u32 %r1, [%rd1];", w, l}, true}, // generic
		{"attn_x_one_64", []string{"ld.global.u32 %r1, [%rd1];", w, l}, true},
	} {
		if got := pdlPrologueViolation(c.name, c.body) != ""; got != c.bad {
			t.Errorf("%s %q: violation %v, want %v (%s)", c.name, c.body, got, c.bad, pdlPrologueViolation(c.name, c.body))
		}
	}
}

// TestPDLPTXForm: the loader's PDL form of every module targets sm_90,
// keeps no marker and has one wait and one launch instruction per kernel;
// a module without its sm_80 target line is an error.
func TestPDLPTXForm(t *testing.T) {
	for mod, ptx := range ptxFiles {
		got, err := pdlPTX(ptx)
		if err != nil {
			t.Fatalf("%s: %v", mod, err)
		}
		k := len(kernelNames(ptx))
		if strings.Contains(got, ptxTarget80) || !strings.Contains(got, ptxTarget90+"\n") {
			t.Errorf("%s: target not sm_90", mod)
		}
		if strings.Contains(got, "minfer-pdl") {
			t.Errorf("%s: markers left", mod)
		}
		if w, l := strings.Count(got, "griddepcontrol.wait;"), strings.Count(got, "griddepcontrol.launch_dependents;"); w != k || l != k {
			t.Errorf("%s: %d waits, %d launches for %d kernels", mod, w, l, k)
		}
		if len(got) != len(ptx)-len(pdlWaitMarker)*k-len(pdlLaunchMarker)*k+len("griddepcontrol.wait;")*k+len("griddepcontrol.launch_dependents;")*k {
			t.Errorf("%s: more than the target and the markers changed", mod)
		}
	}
	if _, err := pdlPTX("// no target\n.version 7.8\n"); err == nil {
		t.Error("a module without .target sm_80 was accepted")
	}
	if pdlUsable(8, 1) || pdlUsable(9, 0) || !pdlUsable(9, 1) || !pdlUsable(10, 1) {
		t.Error("pdlUsable")
	}
}
