package core

import (
	"context"
	"math"
	"testing"

	"github.com/minfer/minfer/internal/ggtest"
)

// TestEvalIntoMatchesEval: EvalInto gives the bits Eval gives for the same
// steps (a prompt, then tokens one at a time, on two sessions of one
// file), reads each step into the slice it was handed when that is large
// enough (the same memory every step), and allocates when handed an empty
// one.
func TestEvalIntoMatchesEval(t *testing.T) {
	path := ggtest.Path(t, "models", "stories260K.gguf")
	ctx := context.Background()
	a, err := Load(ctx, path, cpuOnly(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := Load(ctx, path, cpuOnly(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	prompt := []int32{1, 50, 60, 70}
	want, err := a.Eval(ctx, prompt, false)
	if err != nil {
		t.Fatal(err)
	}
	got, err := b.EvalInto(ctx, prompt, nil)
	if err != nil {
		t.Fatal(err)
	}
	same := func(step int, got, want []float32) {
		t.Helper()
		if len(got) != len(want) {
			t.Fatalf("step %d: %d logits, want %d", step, len(got), len(want))
		}
		for i := range want {
			if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
				t.Fatalf("step %d: logit %d is %v, Eval gave %v", step, i, got[i], want[i])
			}
		}
	}
	same(0, got, want)
	buf := got
	for step, tok := range []int32{80, 90, 100, 110} {
		want, err := a.Eval(ctx, []int32{tok}, false)
		if err != nil {
			t.Fatal(err)
		}
		got, err := b.EvalInto(ctx, []int32{tok}, buf)
		if err != nil {
			t.Fatal(err)
		}
		if &got[0] != &buf[0] {
			t.Fatalf("step %d: EvalInto allocated instead of reading into the slice it was given", step+1)
		}
		same(step+1, got, want)
	}
	if a.NPast() != b.NPast() || b.NPast() != len(prompt)+4 {
		t.Fatalf("positions %d and %d, want %d", a.NPast(), b.NPast(), len(prompt)+4)
	}
}
