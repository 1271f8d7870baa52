package cpu

import (
	"fmt"
	"math"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
)

// The kernels follow ggml's CPU arithmetic where it changes results:
// float32 element math, float64 sums where ggml sums in ggml_float, Q and
// the softmaxed attention weights rounded to F16 before the two attention
// products (as ggml's F16 mat-mul does with an F16 cache), activations
// quantized to the weight's vec-dot type.

func (c *CPU) getRows(n *graph.Node, out, table []byte, ids []int32) error {
	t := n.Src[0].Type
	rowLen := n.Src[0].Shape[0]
	nRows := n.Src[0].Rows()
	rb := rowBytes(t, rowLen)
	dst := f32s(out)
	for i, id := range ids {
		if id < 0 || int64(id) >= nRows {
			return fmt.Errorf("token id %d outside the %d-row table %q", id, nRows, n.Src[0].Name)
		}
		row := table[int64(id)*rb : int64(id+1)*rb]
		if err := quant.Dequantize(t, row, dst[int64(i)*rowLen:int64(i+1)*rowLen]); err != nil {
			return err
		}
	}
	return nil
}

// rmsNorm: ggml sums x² (each product in float32) in double, then
// scale = 1/sqrtf(mean + eps) in float32.
func (c *CPU) rmsNorm(out, x []float32, rowLen int, eps float32) {
	rows := len(x) / rowLen
	c.w.For(rows, 1, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			xr := x[r*rowLen : (r+1)*rowLen]
			var sum float64
			for _, v := range xr {
				sum += float64(v * v)
			}
			mean := float32(sum / float64(rowLen))
			scale := 1 / float32(math.Sqrt(float64(mean+eps)))
			or := out[r*rowLen : (r+1)*rowLen]
			for i, v := range xr {
				or[i] = v * scale
			}
		}
	})
}

func (c *CPU) broadcast(out, x, y []float32, rowLen int, add bool) {
	rows := len(x) / rowLen
	yRows := len(y) / rowLen
	for r := 0; r < rows; r++ {
		xr := x[r*rowLen : (r+1)*rowLen]
		yr := y[(r%yRows)*rowLen : (r%yRows+1)*rowLen]
		or := out[r*rowLen : (r+1)*rowLen]
		if add {
			for i := range or {
				or[i] = xr[i] + yr[i]
			}
		} else {
			for i := range or {
				or[i] = xr[i] * yr[i]
			}
		}
	}
}

// matMul: out[t][i] = w_i · x_t with x_t quantized once to the weight's
// vec-dot type, rows split across workers (each weight row is read once
// for all tokens of the batch).
func (c *CPU) matMul(n *graph.Node, out []float32, w []byte, x []float32) error {
	wt := n.Src[0].Type
	in := int(n.Src[0].Shape[0])
	rows := int(n.Src[0].Rows())
	tokens := int(n.Src[1].Rows())
	vt := quant.VecDotType(wt)
	if !quant.Supported(wt) {
		return fmt.Errorf("%w: weight %q of type %s", quant.ErrUnsupported, n.Src[0].Name, wt)
	}
	xrb := int(rowBytes(vt, int64(in)))
	need := xrb * tokens
	if cap(c.scratch) < need {
		c.scratch = make([]byte, need)
	}
	xq := c.scratch[:need]
	for t := 0; t < tokens; t++ {
		if err := quant.QuantizeRow(vt, x[t*in:(t+1)*in], xq[t*xrb:(t+1)*xrb]); err != nil {
			return err
		}
	}
	wrb := int(rowBytes(wt, int64(in)))
	// VecDot panics on a bad call (it runs in the hot loop without an error
	// return); check the shapes once here instead.
	if err := quant.CheckVecDot(wt, in, wrb, xrb); err != nil {
		return fmt.Errorf("weight %q: %w", n.Src[0].Name, err)
	}
	if len(w) < wrb*rows {
		return fmt.Errorf("weight %q has %d bytes, %d rows of %d need %d", n.Src[0].Name, len(w), rows, wrb, wrb*rows)
	}
	c.weightReads.Add(int64(wrb * rows))
	if f16F32(wt, in) {
		c.w.For(rows, 16, func(lo, hi int) {
			for i := lo; i < hi; i++ {
				wr := w[i*wrb : (i+1)*wrb]
				for t := 0; t < tokens; t++ {
					out[t*rows+i] = quant.DotF16F32(wr, x[t*in:(t+1)*in])
				}
			}
		})
		return nil
	}
	c.w.For(rows, 16, func(lo, hi int) {
		for i := lo; i < hi; i++ {
			wr := w[i*wrb : (i+1)*wrb]
			for t := 0; t < tokens; t++ {
				out[t*rows+i] = quant.VecDot(wt, in, wr, xq[t*xrb:(t+1)*xrb])
			}
		}
	})
	return nil
}

// f16F32 reports whether a mat-mul with weights of type t and rows of in
// elements keeps its activations in F32 (F16 weights, as llama.cpp's
// tinyBLAS runs them when the row length is a multiple of its lanes).
func f16F32(t gguf.GGMLType, in int) bool {
	return t == gguf.TypeF16 && in%quant.F16F32Lanes == 0
}

// rope follows ggml's rope cache: theta starts at the position and is
// multiplied by theta_scale = base^(-2/dims) in float32 for each pair. The
// rotation is written as the C compiler contracts it in ggml-cpu (built
// with FMA and GCC's default -ffp-contract=fast): x0·cos − x1·sin becomes
// fma(x0, cos, −(x1·sin)) and x0·sin + x1·cos becomes fma(x0, sin, x1·cos).
func (c *CPU) rope(n *graph.Node, p graph.RopeParams, out, x []float32, pos []int32, freqs []float32) {
	headDim := int(n.Shape[0])
	heads := int(n.Shape[1])
	tokens := int(n.Shape[2])
	dims := p.Dims
	neox := p.Mode == graph.RopeNeoX
	base, freqScale := p.FreqBase, p.FreqScale
	thetaScale := float32(math.Pow(float64(base), -2.0/float64(dims)))
	c.w.For(tokens, 1, func(lo, hi int) {
		cs := make([]float32, dims)
		for t := lo; t < hi; t++ {
			theta := float32(pos[t])
			for i := 0; i < dims; i += 2 {
				ff := float32(1)
				if freqs != nil {
					ff = freqs[i/2]
				}
				th := freqScale * (theta / ff)
				cs[i] = float32(math.Cos(float64(th)))
				cs[i+1] = float32(math.Sin(float64(th)))
				theta *= thetaScale
			}
			for h := 0; h < heads; h++ {
				off := (t*heads + h) * headDim
				xr, or := x[off:off+headDim], out[off:off+headDim]
				for i := 0; i < dims; i += 2 {
					cos, sin := cs[i], cs[i+1]
					a, b := i, i+1
					if neox {
						a, b = i/2, i/2+dims/2
					}
					x0, x1 := xr[a], xr[b]
					or[a] = fma32(x0, cos, -(x1 * sin))
					or[b] = fma32(x0, sin, x1*cos)
				}
				copy(or[dims:], xr[dims:])
			}
		}
	})
}

func (c *CPU) storeKV(n *graph.Node, cache []byte, x []float32, rows []int32) error {
	rowLen := int(n.Src[0].Shape[0])
	ctx := int(n.Src[0].Shape[1])
	t := n.Src[0].Type
	rb := int(rowBytes(t, int64(rowLen)))
	for i, r := range rows {
		if r < 0 || int(r) >= ctx {
			return fmt.Errorf("cache row %d outside the %d-row cache %q", r, ctx, n.Src[0].Name)
		}
		if err := quant.QuantizeRow(t, x[i*rowLen:(i+1)*rowLen], cache[int(r)*rb:(int(r)+1)*rb]); err != nil {
			return err
		}
	}
	return nil
}

// attention: per (token, head) row, as llama.cpp computes it without flash
// attention over an F16 cache: q rounded to F16, scores = ggml_vec_dot_f16
// of q and each K row, scaled and masked, softmax over llama.cpp's n_kv
// entries (nkvPad) as ggml_vec_soft_max_f32, the weights rounded to F16,
// then each output element ggml_vec_dot_f16 of the weights and one V column
// — all in the AVX-512 build's order (ggml512.go). With an F32 cache nothing
// is rounded to F16 and the dot products are plain float64 sums.
func (c *CPU) attention(n *graph.Node, p graph.AttentionParams, out, q []float32, kc, vc []byte, mask []float32) error {
	qn := n.Src[0]
	headDim := int(qn.Shape[0])
	heads := int(qn.Shape[1])
	tokens := int(qn.Shape[2])
	kvHeads := p.KVHeads
	kvLen := p.KVLen
	scale, softCap := p.Scale, p.SoftCap
	group := heads / kvHeads
	kvRow := headDim * kvHeads
	f16 := n.Src[1].Type == gguf.TypeF16
	if n.Src[2].Type != n.Src[1].Type {
		return fmt.Errorf("K cache %s and V cache %s differ", n.Src[1].Type, n.Src[2].Type)
	}
	var k16, v16 []uint16
	var k32, v32 []float32
	if f16 {
		k16, v16 = u16s(kc), u16s(vc)
	} else {
		k32, v32 = f32s(kc), f32s(vc)
	}
	// The cells in use: the last unmasked entry of any row, plus one.
	used := 0
	for t := 0; t < tokens; t++ {
		mr := mask[t*kvLen : (t+1)*kvLen]
		for j := kvLen - 1; j >= used; j-- {
			if !math.IsInf(float64(mr[j]), -1) {
				used = j + 1
				break
			}
		}
	}
	nkv := nkvPad(used)
	npV := nkv &^ 63
	npK := headDim &^ 63
	ninf := float32(math.Inf(-1))
	c.w.For(tokens*heads, 1, func(lo, hi int) {
		scores := make([]float32, nkv)
		qh := make([]float32, headDim)
		accs := make([]dotF16Acc, headDim)
		var kacc dotF16Acc
		for job := lo; job < hi; job++ {
			t, h := job/heads, job%heads
			kvh := h / group
			qr := q[(t*heads+h)*headDim : (t*heads+h+1)*headDim]
			for d, v := range qr {
				if f16 {
					qh[d] = quant.F16ToF32(quant.F32ToF16(v))
				} else {
					qh[d] = v
				}
			}
			mr := mask[t*kvLen : (t+1)*kvLen]
			maxv := ninf
			for j := range scores {
				if j >= kvLen || math.IsInf(float64(mr[j]), -1) {
					scores[j] = ninf
					continue
				}
				off := j*kvRow + kvh*headDim
				var s float64
				if f16 {
					kacc.reset()
					for d, kv := range k16[off : off+headDim] {
						kacc.add(d, npK, qh[d]*quant.F16ToF32(kv))
					}
					s = kacc.sum()
				} else {
					for d, kv := range k32[off : off+headDim] {
						s += float64(qh[d] * kv)
					}
				}
				sc := float32(s)
				if softCap > 0 {
					sc = tanhf(sc*(1/softCap)) * softCap
				}
				scores[j] = sc*scale + mr[j]
				maxv = max(maxv, scores[j])
			}
			for j := range scores {
				scores[j] -= maxv
			}
			inv := float32(1 / softmaxSum16(scores))
			for d := range accs {
				accs[d].reset()
			}
			for j, w := range scores {
				if w == 0 {
					continue
				}
				w *= inv
				off := j*kvRow + kvh*headDim
				if f16 {
					w = quant.F16ToF32(quant.F32ToF16(w))
					for d, vv := range v16[off : off+headDim] {
						accs[d].add(j, npV, w*quant.F16ToF32(vv))
					}
				} else {
					for d, vv := range v32[off : off+headDim] {
						accs[d].tail += float64(w * vv)
					}
				}
			}
			or := out[t*heads*headDim+h*headDim : t*heads*headDim+(h+1)*headDim]
			for d := range or {
				or[d] = float32(accs[d].sum())
			}
		}
	})
	return nil
}

// swiglu: ggml_silu then ggml_mul, row by row: silu(x) = x/(1+exp(−x)) in
// float32 as ggml_vec_silu_f32 computes it on AVX-512 (siluRow16), then
// times up.
func (c *CPU) swiglu(out, g, u []float32, rowLen int) {
	rows := len(out) / rowLen
	c.w.For(rows, 1, func(lo, hi int) {
		for r := lo; r < hi; r++ {
			o := out[r*rowLen : (r+1)*rowLen]
			siluRow16(o, g[r*rowLen:(r+1)*rowLen])
			for i, v := range u[r*rowLen : (r+1)*rowLen] {
				o[i] *= v
			}
		}
	})
}
