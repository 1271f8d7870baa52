package cpu

import (
	"fmt"
	"math"
	"sync"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
)

// Kernels of the ops the architectures beyond llama add, each following
// ggml's CPU arithmetic: float32 element math, double sums where ggml sums
// in ggml_float, tanhf and expf per element.

func tanhf(x float32) float32 { return float32(math.Tanh(float64(x))) }

func (c *CPU) scale(out, x []float32, s float32) {
	for i, v := range x {
		out[i] = v * s
	}
}

// softCap is ggml_scale(1/cap), ggml_tanh, ggml_scale(cap).
func (c *CPU) softCap(out, x []float32, cap float32) {
	inv := 1 / cap
	c.w.For(len(x), 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = tanhf(x[i]*inv) * cap
		}
	})
}

// ggml's GELU constants.
const (
	geluCoefA    = float32(0.044715)
	sqrt2OverPi  = float32(0.79788456080286535587989211986876)
	geluTableMin = float32(-10)
	geluTableMax = float32(10)
)

// geluF32 is ggml_gelu_f32: 0.5·x·(1 + tanhf(√(2/π)·x·(1 + a·x²))), each
// step rounded to float32.
func geluF32(x float32) float32 {
	inner := float32(sqrt2OverPi*x) * float32(1+float32(float32(geluCoefA*x)*x))
	return float32(float32(0.5)*x) * float32(1+tanhf(inner))
}

// geluTable is ggml_table_gelu_f16, widened: the index is the F16 bits of
// the input. Built on first use.
var geluTable = sync.OnceValue(func() []float32 {
	tab := make([]float32, 1<<16)
	for i := range tab {
		f := quant.F16ToF32(uint16(i))
		tab[i] = quant.F16ToF32(quant.F32ToF16(geluF32(f)))
	}
	return tab
})

// gelu is ggml's GGML_GELU_FP16 path: inputs ≤ −10 give 0, ≥ 10 give the
// input; the rest are rounded to F16 and read from a table of F16 results.
func gelu(x float32) float32 { return geluFrom(geluTable(), x) }

// geluFrom is gelu with the table already fetched.
func geluFrom(tab []float32, x float32) float32 {
	switch {
	case x <= geluTableMin:
		return 0
	case x >= geluTableMax:
		return x
	}
	return tab[quant.F32ToF16(x)]
}

func (c *CPU) gelu(out, x []float32) {
	tab := geluTable()
	c.w.For(len(x), 4096, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			out[i] = geluFrom(tab, x[i])
		}
	})
}

// sigmoid is silu(x)/x as llama.cpp's Qwen-MoE graph writes it. The gate
// has one element per row, so ggml's SiLU takes its scalar tail path: the
// C library's expf (siluRow16 over a row of one).
func (c *CPU) sigmoid(out, x []float32, rowLen int) {
	for r := 0; r < len(x)/rowLen; r++ {
		siluRow16(out[r*rowLen:(r+1)*rowLen], x[r*rowLen:(r+1)*rowLen])
	}
	for i, v := range x {
		out[i] /= v
	}
}

// softMax is ggml_soft_max_f32 without scale or mask: the row's max
// subtracted, the AVX-512 build's blocks and tail (softmaxSum16), then the
// row scaled by float32(1/sum).
func (c *CPU) softMax(out, x []float32, rowLen int) {
	for r := 0; r < len(x)/rowLen; r++ {
		xr, or := x[r*rowLen:(r+1)*rowLen], out[r*rowLen:(r+1)*rowLen]
		maxv := float32(math.Inf(-1))
		for _, v := range xr {
			maxv = max(maxv, v)
		}
		for i, v := range xr {
			or[i] = v - maxv
		}
		inv := float32(1 / softmaxSum16(or))
		for i := range or {
			or[i] *= inv
		}
	}
}

// topK sorts each row's indices by descending value the way ggml_argsort
// does (an exchange sort, so ties order as there) and keeps the first k.
func (c *CPU) topK(out []int32, x []float32, rowLen, k int) {
	if cap(c.topIdx) < rowLen {
		c.topIdx = make([]int32, rowLen)
	}
	idx := c.topIdx[:rowLen]
	for r := 0; r < len(x)/rowLen; r++ {
		xr := x[r*rowLen : (r+1)*rowLen]
		for j := range idx {
			idx[j] = int32(j)
		}
		for j := 0; j < rowLen; j++ {
			for m := j + 1; m < rowLen; m++ {
				if xr[idx[j]] < xr[idx[m]] {
					idx[j], idx[m] = idx[m], idx[j]
				}
			}
		}
		copy(out[r*k:(r+1)*k], idx[:k])
	}
}

// moeWeights: get_rows of the probabilities, then (Mixtral) a division by
// their double-summed total.
func (c *CPU) moeWeights(out, probs []float32, ids []int32, nExp, k int, normalize bool) error {
	for t := 0; t < len(ids)/k; t++ {
		var sum float64
		for j := 0; j < k; j++ {
			e := ids[t*k+j]
			if e < 0 || int(e) >= nExp {
				return fmt.Errorf("expert %d outside %d experts", e, nExp)
			}
			out[t*k+j] = probs[t*nExp+int(e)]
			sum += float64(out[t*k+j])
		}
		if normalize {
			s := float32(sum)
			for j := 0; j < k; j++ {
				out[t*k+j] /= s
			}
		}
	}
	return nil
}

// matMulID multiplies each (token, slot) by its expert, grouping the
// pairs by expert so each selected expert's rows are read once per step
// and experts nobody selected are not read at all.
func (c *CPU) matMulID(n *graph.Node, out []float32, w []byte, x []float32, ids []int32) error {
	wn := n.Src[0]
	wt := wn.Type
	in, rows, nExp := int(wn.Shape[0]), int(wn.Shape[1]), int(wn.Shape[2])
	k, tokens := int(n.Shape[1]), int(n.Shape[2])
	shared := n.Src[1].Shape[1] != int64(k) || n.Src[1].Shape[2] != int64(tokens) // x is [in, T]
	kern, err := quant.NewKernel(wt, in)
	if err != nil {
		return fmt.Errorf("weight %q: %w", wn.Name, err)
	}
	vt := quant.VecDotType(wt)
	xrb, wrb := kern.ActRowBytes(), kern.WeightRowBytes()
	if len(w) < wrb*rows*nExp {
		return fmt.Errorf("weight %q has %d bytes, want %d", wn.Name, len(w), wrb*rows*nExp)
	}
	nx := tokens * k
	if shared {
		nx = tokens
	}
	need := xrb * nx
	if cap(c.scratch) < need {
		c.scratch = make([]byte, need)
	}
	xq := c.scratch[:need]
	for r := 0; r < nx; r++ {
		if err := quant.QuantizeRow(vt, x[r*in:(r+1)*in], xq[r*xrb:(r+1)*xrb]); err != nil {
			return err
		}
	}
	f16 := wt == gguf.TypeF16
	// Group the (token, slot) pairs by expert, in pair order: a counting
	// sort into buffers kept from step to step.
	if cap(c.moeEnd) < nExp {
		c.moeEnd = make([]int32, nExp)
	}
	if cap(c.moePairs) < tokens*k {
		c.moePairs = make([]int32, tokens*k)
	}
	end, sorted := c.moeEnd[:nExp], c.moePairs[:tokens*k]
	clear(end)
	for _, e := range ids[:tokens*k] {
		if e < 0 || int(e) >= nExp {
			return fmt.Errorf("expert %d outside the %d experts of %q", e, nExp, wn.Name)
		}
		end[e]++ // a count for now
	}
	var off int32
	for e, n := range end {
		end[e], off = off, off+n // each group's start, moved to its end below
	}
	for p, e := range ids[:tokens*k] {
		sorted[end[e]] = int32(p)
		end[e]++
	}
	var begin int32
	for e, stop := range end {
		pairs := sorted[begin:stop]
		begin = stop
		if len(pairs) == 0 {
			continue
		}
		we := w[e*rows*wrb : (e+1)*rows*wrb] // the expert: a view of its rows
		c.weightReads.Add(int64(rows * wrb))
		c.w.For(rows, 16, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				wr := we[i*wrb : (i+1)*wrb]
				for _, p := range pairs {
					xr := int(p)
					if shared {
						xr = int(p) / k
					}
					if f16 {
						out[int(p)*rows+i] = dotF16x512(wr, xq[xr*xrb:(xr+1)*xrb], in)
						continue
					}
					out[int(p)*rows+i] = kern.Dot(wr, xq[xr*xrb:(xr+1)*xrb])
				}
			}
		})
	}
	return nil
}

// dotF16x512 is ggml_vec_dot_f16 on AVX-512 over two F16 rows of n: what
// ggml's mul_mat_id computes for F16 experts (it rounds the activations to
// F16 and has no tinyBLAS path).
func dotF16x512(w, x []byte, n int) float32 {
	var acc dotF16Acc
	np := n &^ 63
	for i := 0; i < n; i++ {
		p := quant.F16ToF32(uint16(w[2*i])|uint16(w[2*i+1])<<8) * quant.F16ToF32(uint16(x[2*i])|uint16(x[2*i+1])<<8)
		acc.add(i, np, p)
	}
	return float32(acc.sum())
}

// weightedSum: ggml_mul by the weights, then the slots added in order.
func (c *CPU) weightedSum(out, x, w []float32, n, k int) {
	for t := 0; t < len(out)/n; t++ {
		or := out[t*n : (t+1)*n]
		for j := 0; j < k; j++ {
			wj := w[t*k+j]
			xr := x[(t*k+j)*n : (t*k+j+1)*n]
			if j == 0 {
				for i, v := range xr {
					or[i] = v * wj
				}
				continue
			}
			for i, v := range xr {
				or[i] += v * wj
			}
		}
	}
}

// mulRows multiplies each row of x by its own scalar y[r].
func (c *CPU) mulRows(out, x, y []float32, rowLen int) {
	for r, s := range y {
		xr, or := x[r*rowLen:(r+1)*rowLen], out[r*rowLen:(r+1)*rowLen]
		for i, v := range xr {
			or[i] = v * s
		}
	}
}
