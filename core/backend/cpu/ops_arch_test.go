package cpu

import (
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
)

func randRow(r *rand.Rand, n int, scale float64) []float32 {
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64() * scale)
	}
	return out
}

func relErr(got, want float64) float64 {
	return math.Abs(got-want) / max(math.Abs(want), 1e-30)
}

// TestGELUMatchesFormula: ggml's table GELU against the tanh formula in
// float64: the input is rounded to F16 and so is the result, so each is
// within about two F16 half-ulps (plus the slope times the input's
// rounding); outside ±10 it is 0 or the input, exactly.
func TestGELUMatchesFormula(t *testing.T) {
	ref := func(x float64) float64 {
		return 0.5 * x * (1 + math.Tanh(math.Sqrt(2/math.Pi)*(x+0.044715*x*x*x)))
	}
	for x := float32(-12); x <= 12; x += 0.001 {
		got := float64(gelu(x))
		switch {
		case x <= -10:
			if got != 0 {
				t.Fatalf("gelu(%g) = %g, want 0", x, got)
			}
		case x >= 10:
			if got != float64(x) {
				t.Fatalf("gelu(%g) = %g, want the input", x, got)
			}
		default:
			want := ref(float64(x))
			tol := 2e-3*math.Abs(want) + 2e-3*math.Abs(float64(x))*1.2 + 1e-7
			if math.Abs(got-want) > tol {
				t.Fatalf("gelu(%g) = %g, formula %g", x, got, want)
			}
		}
	}
	// The table entry is the F16 rounding of the float32 formula at the
	// F16-rounded input.
	x := float32(0.7183)
	h := quant.F16ToF32(quant.F32ToF16(x))
	if g, w := gelu(x), quant.F16ToF32(quant.F32ToF16(geluF32(h))); g != w {
		t.Errorf("gelu(%g) = %g, want %g", x, g, w)
	}
}

func TestSoftCapAndSigmoidAndScale(t *testing.T) {
	c := New(1)
	defer c.Close()
	r := rand.New(rand.NewSource(1))
	x := randRow(r, 1000, 40)
	out := make([]float32, len(x))
	c.softCap(out, x, 30)
	for i, v := range x {
		want := 30 * math.Tanh(float64(v)/30)
		if e := relErr(float64(out[i]), want); e > 1e-6 {
			t.Fatalf("softcap(%g) = %g, want %g", v, out[i], want)
		}
		if math.Abs(float64(out[i])) > 30 {
			t.Fatalf("softcap(%g) = %g exceeds the cap", v, out[i])
		}
	}
	x = randRow(r, 1000, 5)
	c.sigmoid(out, x, 1)
	for i, v := range x {
		want := 1 / (1 + math.Exp(-float64(v)))
		if e := relErr(float64(out[i]), want); e > 1e-6 {
			t.Fatalf("sigmoid(%g) = %g, want %g", v, out[i], want)
		}
	}
	c.scale(out, x, 0.25)
	for i, v := range x {
		if out[i] != v*0.25 {
			t.Fatalf("scale: %g, want %g", out[i], v*0.25)
		}
	}
}

// TestRoutingOps: softmax rows sum to 1 and match float64; top-k picks the
// k largest, largest first; the picked weights are the probabilities,
// renormalised to sum 1 when asked.
func TestRoutingOps(t *testing.T) {
	c := New(1)
	defer c.Close()
	r := rand.New(rand.NewSource(2))
	const nExp, T, k = 8, 5, 3
	logits := randRow(r, nExp*T, 2)
	probs := make([]float32, len(logits))
	c.softMax(probs, logits, nExp)
	ids := make([]int32, k*T)
	c.topK(ids, probs, nExp, k)
	w := make([]float32, k*T)
	wn := make([]float32, k*T)
	if err := c.moeWeights(w, probs, ids, nExp, k, false); err != nil {
		t.Fatal(err)
	}
	if err := c.moeWeights(wn, probs, ids, nExp, k, true); err != nil {
		t.Fatal(err)
	}
	for tk := 0; tk < T; tk++ {
		row := logits[tk*nExp : (tk+1)*nExp]
		var z float64
		for _, v := range row {
			z += math.Exp(float64(v))
		}
		for e, v := range row {
			if err := relErr(float64(probs[tk*nExp+e]), math.Exp(float64(v))/z); err > 1e-6 {
				t.Fatalf("softmax token %d expert %d: %g", tk, e, probs[tk*nExp+e])
			}
		}
		order := make([]int, nExp)
		for i := range order {
			order[i] = i
		}
		sort.Slice(order, func(a, b int) bool { return row[order[a]] > row[order[b]] })
		var sum float64
		for j := 0; j < k; j++ {
			if int(ids[tk*k+j]) != order[j] {
				t.Fatalf("token %d: top-k %v, want %v", tk, ids[tk*k:(tk+1)*k], order[:k])
			}
			if w[tk*k+j] != probs[tk*nExp+order[j]] {
				t.Fatalf("token %d: weight %g, want the probability %g", tk, w[tk*k+j], probs[tk*nExp+order[j]])
			}
			sum += float64(wn[tk*k+j])
		}
		if math.Abs(sum-1) > 1e-6 {
			t.Fatalf("token %d: renormalised weights sum to %g", tk, sum)
		}
	}
	if err := c.moeWeights(w, probs, []int32{0, 9, 1, 2, 3, 4, 5, 6, 7, 0, 1, 2, 3, 4, 5}, nExp, k, false); err == nil {
		t.Error("an expert id outside the experts was accepted")
	}
}

// TestMatMulIDMatchesPerExpertMatMul: the expert mat-mul equals, for each
// (token, slot), a dense mat-mul by that expert's rows (a view of the 3-D
// tensor), for a shared [in, T] input and a per-slot [in, k, T] one; it
// counts only the selected experts' bytes; the weighted sum adds the slots
// in order.
func TestMatMulIDMatchesPerExpertMatMul(t *testing.T) {
	c := New(2)
	defer c.Close()
	r := rand.New(rand.NewSource(3))
	const in, out, nExp, k, T = 64, 24, 6, 2, 4
	for _, wt := range []gguf.GGMLType{gguf.TypeF32, gguf.TypeQ8_0} {
		wf := randRow(r, in*out*nExp, 0.1)
		rb, _ := wt.RowBytes(in)
		w := make([]byte, int(rb)*out*nExp)
		for row := 0; row < out*nExp; row++ {
			if err := quant.QuantizeRow(wt, wf[row*in:(row+1)*in], w[row*int(rb):(row+1)*int(rb)]); err != nil {
				t.Fatal(err)
			}
		}
		ids := []int32{0, 3, 3, 5, 1, 3, 5, 0} // experts 2 and 4 unused
		wn := &graph.Node{Op: graph.OpWeight, Type: wt, Shape: [4]int64{in, out, nExp, 1}, Name: "exps"}
		idn := &graph.Node{Op: graph.OpInput, Type: gguf.TypeI32, Shape: [4]int64{k, T, 1, 1}}
		for _, perSlot := range []bool{false, true} {
			xs := [4]int64{in, T, 1, 1}
			if perSlot {
				xs = [4]int64{in, k, T, 1}
			}
			xn := &graph.Node{Op: graph.OpInput, Type: gguf.TypeF32, Shape: xs}
			x := randRow(r, int(xs[0]*xs[1]*xs[2]), 1)
			n := &graph.Node{Op: graph.OpMatMulID, Type: gguf.TypeF32, Shape: [4]int64{out, k, T, 1}, Src: [4]*graph.Node{wn, xn, idn}}
			got := make([]float32, out*k*T)
			before := c.WeightBytesRead()
			if err := c.matMulID(n, got, w, x, ids); err != nil {
				t.Fatal(err)
			}
			if read := c.WeightBytesRead() - before; read != 4*rb*out {
				t.Errorf("%s: read %d bytes, want 4 experts of %d", wt, read, rb*out)
			}
			for p, e := range ids {
				xr := x[(p/k)*in : (p/k+1)*in]
				if perSlot {
					xr = x[p*in : (p+1)*in]
				}
				dense := &graph.Node{Op: graph.OpMatMul, Type: gguf.TypeF32, Shape: [4]int64{out, 1, 1, 1},
					Src: [4]*graph.Node{{Op: graph.OpView, Type: wt, Shape: [4]int64{in, out, 1, 1}}, {Op: graph.OpInput, Type: gguf.TypeF32, Shape: [4]int64{in, 1, 1, 1}}}}
				want := make([]float32, out)
				if err := c.matMul(dense, want, w[int(e)*out*int(rb):(int(e)+1)*out*int(rb)], quant.LayoutFile, xr); err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if got[p*out+i] != want[i] {
						t.Fatalf("%s perSlot=%v pair %d row %d: %g, dense %g", wt, perSlot, p, i, got[p*out+i], want[i])
					}
				}
			}
			weights := randRow(r, k*T, 1)
			sum := make([]float32, out*T)
			c.weightedSum(sum, got, weights, out, k)
			for tk := 0; tk < T; tk++ {
				for i := 0; i < out; i++ {
					want := got[(tk*k)*out+i] * weights[tk*k]
					for j := 1; j < k; j++ {
						want += got[(tk*k+j)*out+i] * weights[tk*k+j]
					}
					if sum[tk*out+i] != want {
						t.Fatalf("weighted sum token %d row %d: %g, want %g", tk, i, sum[tk*out+i], want)
					}
				}
			}
		}
		bad := &graph.Node{Op: graph.OpMatMulID, Type: gguf.TypeF32, Shape: [4]int64{out, k, T, 1},
			Src: [4]*graph.Node{wn, {Op: graph.OpInput, Type: gguf.TypeF32, Shape: [4]int64{in, T, 1, 1}}, idn}}
		if err := c.matMulID(bad, make([]float32, out*k*T), w, make([]float32, in*T), []int32{0, 6, 0, 0, 0, 0, 0, 0}); err == nil {
			t.Errorf("%s: expert id 6 of 6 accepted", wt)
		}
	}
}
