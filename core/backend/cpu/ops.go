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
	c.nt = normTask{out: out, x: x, rowLen: rowLen, eps: eps}
	c.w.run(len(x)/rowLen, 1, &c.nt)
}

type normTask struct {
	out, x []float32
	rowLen int
	eps    float32
}

func (t *normTask) run(_, lo, hi int) {
	rowLen := t.rowLen
	for r := lo; r < hi; r++ {
		xr := t.x[r*rowLen : (r+1)*rowLen]
		var sum float64
		for _, v := range xr {
			sum += float64(v * v)
		}
		mean := float32(sum / float64(rowLen))
		scale := 1 / float32(math.Sqrt(float64(mean+t.eps)))
		or := t.out[r*rowLen : (r+1)*rowLen]
		for i, v := range xr {
			or[i] = v * scale
		}
	}
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

// matMul: out[t][i] = w_i · x_t. The activations are quantized once to
// the weight's vec-dot type and the kernel resolved once; then the pool
// hands out chunks of rows, and within a chunk each weight row is used for
// four tokens at a time (Kernel.Dot4), so prefill reads each weight block
// once per four tokens and a chunk's rows stay in cache across the
// token groups.
func (c *CPU) matMul(n *graph.Node, out []float32, w []byte, x []float32) error {
	wt := n.Src[0].Type
	in := int(n.Src[0].Shape[0])
	rows := int(n.Src[0].Rows())
	tokens := int(n.Src[1].Rows())
	k, err := quant.NewKernel(wt, in)
	if err != nil {
		return fmt.Errorf("weight %q: %w", n.Src[0].Name, err)
	}
	wrb, xrb := k.WeightRowBytes(), k.ActRowBytes()
	if len(w) < wrb*rows {
		return fmt.Errorf("weight %q has %d bytes, %d rows of %d need %d", n.Src[0].Name, len(w), rows, wrb, wrb*rows)
	}
	if len(x) < in*tokens || len(out) < rows*tokens {
		return fmt.Errorf("matmul %q: %d activations and %d outputs for %d×%d by %d tokens", n.Src[0].Name, len(x), len(out), rows, in, tokens)
	}
	need := xrb * tokens
	if cap(c.scratch) < need {
		c.scratch = make([]byte, need)
	}
	xq := c.scratch[:need]
	vt := quant.VecDotType(wt)
	// The first row reports a bad shape; the rest cannot fail after it.
	if err := quant.QuantizeRow(vt, x[:in], xq[:xrb]); err != nil {
		return err
	}
	if tokens > 1 {
		c.qt = quantTask{vt: vt, x: x, xq: xq, in: in, xrb: xrb}
		c.w.run(tokens-1, 4, &c.qt)
	}
	c.mt = matTask{c: c, k: k, w: w, xq: xq, out: out, rows: rows, tokens: tokens}
	grain := 16
	if tokens == 1 {
		// Decode: enough chunks to balance two threads on a busy machine,
		// big enough that claiming one is noise.
		grain = max(16, rows/(8*c.w.n))
	}
	c.w.run(rows, grain, &c.mt)
	c.mt = matTask{}
	return nil
}

// quantTask quantizes activation rows 1..tokens-1 (item i is row i+1).
type quantTask struct {
	vt      gguf.GGMLType
	x       []float32
	xq      []byte
	in, xrb int
}

func (t *quantTask) run(_, lo, hi int) {
	for r := lo + 1; r < hi+1; r++ {
		// Same shape as row 0, which matMul checked.
		_ = quant.QuantizeRow(t.vt, t.x[r*t.in:(r+1)*t.in], t.xq[r*t.xrb:(r+1)*t.xrb])
	}
}

type matTask struct {
	c            *CPU
	k            quant.Kernel
	w, xq        []byte
	out          []float32
	rows, tokens int
}

func (t *matTask) run(worker, lo, hi int) {
	wrb, xrb, rows := t.k.WeightRowBytes(), t.k.ActRowBytes(), t.rows
	o := &t.c.ws[worker].dot4 // a local would escape through the kernel's func value
	tok := 0
	for ; tok+4 <= t.tokens; tok += 4 {
		x := t.xq[tok*xrb : (tok+4)*xrb]
		out := t.out[tok*rows : (tok+4)*rows]
		for i := lo; i < hi; i++ {
			t.k.Dot4(t.w[i*wrb:(i+1)*wrb], x, o)
			out[i], out[rows+i], out[2*rows+i], out[3*rows+i] = o[0], o[1], o[2], o[3]
		}
	}
	for ; tok < t.tokens; tok++ {
		x := t.xq[tok*xrb : (tok+1)*xrb]
		out := t.out[tok*rows : (tok+1)*rows]
		for i := lo; i < hi; i++ {
			out[i] = t.k.Dot(t.w[i*wrb:(i+1)*wrb], x)
		}
	}
}

// rope follows ggml's rope cache: theta starts at the position and is
// multiplied by theta_scale = base^(-2/dims) in float32 for each pair.
func (c *CPU) rope(n *graph.Node, out, x []float32, pos []int32, freqs []float32) {
	c.rt = ropeTask{
		c: c, out: out, x: x, pos: pos, freqs: freqs,
		headDim: int(n.Shape[0]), heads: int(n.Shape[1]), dims: int(n.I[0]),
		neox: n.I[1] == 1, freqScale: n.F[1],
		thetaScale: float32(math.Pow(float64(n.F[0]), -2.0/float64(n.I[0]))),
	}
	c.w.run(int(n.Shape[2]), 1, &c.rt)
	c.rt = ropeTask{}
}

type ropeTask struct {
	c                     *CPU
	out, x                []float32
	pos                   []int32
	freqs                 []float32
	headDim, heads, dims  int
	neox                  bool
	freqScale, thetaScale float32
}

func (rt *ropeTask) run(worker, lo, hi int) {
	dims, heads, headDim := rt.dims, rt.heads, rt.headDim
	cs := rt.c.scratchFor(worker).f32(&rt.c.ws[worker].cs, dims)
	for t := lo; t < hi; t++ {
		theta := float32(rt.pos[t])
		for i := 0; i < dims; i += 2 {
			ff := float32(1)
			if rt.freqs != nil {
				ff = rt.freqs[i/2]
			}
			th := rt.freqScale * (theta / ff)
			cs[i] = float32(math.Cos(float64(th)))
			cs[i+1] = float32(math.Sin(float64(th)))
			theta *= rt.thetaScale
		}
		for h := 0; h < heads; h++ {
			off := (t*heads + h) * headDim
			xr, or := rt.x[off:off+headDim], rt.out[off:off+headDim]
			for i := 0; i < dims; i += 2 {
				cos, sin := cs[i], cs[i+1]
				a, b := i, i+1
				if rt.neox {
					a, b = i/2, i/2+dims/2
				}
				x0, x1 := xr[a], xr[b]
				or[a] = x0*cos - x1*sin
				or[b] = x0*sin + x1*cos
			}
			copy(or[dims:], xr[dims:])
		}
	}
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

// attention: per (token, head) row, scores against K in float64 sums of
// F16(q)·K, softmax like ggml_soft_max (expf terms, double sum), the
// weights rounded to F16, then weighted sums of V. The cache may be F16 or
// F32; with F32 nothing is rounded.
func (c *CPU) attention(n *graph.Node, out, q []float32, kc, vc []byte, mask []float32) error {
	qn := n.Src[0]
	headDim := int(qn.Shape[0])
	heads := int(qn.Shape[1])
	tokens := int(qn.Shape[2])
	kvHeads := int(n.I[0])
	kvLen := int(n.I[1])
	scale := n.F[0]
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
	c.at = attnTask{
		c: c, out: out, q: q, mask: mask, k16: k16, v16: v16, k32: k32, v32: v32,
		headDim: headDim, heads: heads, group: group, kvLen: kvLen, kvRow: kvRow,
		scale: scale, f16: f16,
	}
	c.w.run(tokens*heads, 1, &c.at)
	c.at = attnTask{}
	return nil
}

type attnTask struct {
	c                                   *CPU
	out, q, mask                        []float32
	k16, v16                            []uint16
	k32, v32                            []float32
	headDim, heads, group, kvLen, kvRow int
	scale                               float32
	f16                                 bool
}

func (at *attnTask) run(worker, lo, hi int) {
	headDim, heads, group, kvLen, kvRow := at.headDim, at.heads, at.group, at.kvLen, at.kvRow
	q, mask, out, f16, scale := at.q, at.mask, at.out, at.f16, at.scale
	k16, v16, k32, v32 := at.k16, at.v16, at.k32, at.v32
	ws := at.c.scratchFor(worker)
	scores := ws.f32(&ws.scores, kvLen)
	qh := ws.f32(&ws.qh, headDim)
	acc := ws.f64(&ws.acc, headDim)
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
		maxv := float32(math.Inf(-1))
		for j := 0; j < kvLen; j++ {
			if math.IsInf(float64(mr[j]), -1) {
				scores[j] = mr[j]
				continue
			}
			off := j*kvRow + kvh*headDim
			var s float64
			if f16 {
				kr := k16[off : off+headDim]
				for d, kv := range kr {
					s += float64(qh[d] * quant.F16ToF32(kv))
				}
			} else {
				kr := k32[off : off+headDim]
				for d, kv := range kr {
					s += float64(qh[d] * kv)
				}
			}
			scores[j] = float32(s)*scale + mr[j]
			maxv = max(maxv, scores[j])
		}
		var sum float64
		for j := range scores {
			if math.IsInf(float64(scores[j]), -1) {
				scores[j] = 0
				continue
			}
			e := expf(scores[j] - maxv)
			scores[j] = e
			sum += float64(e)
		}
		inv := float32(1 / sum)
		for d := range acc {
			acc[d] = 0
		}
		for j, w := range scores {
			if w == 0 {
				continue
			}
			w *= inv
			off := j*kvRow + kvh*headDim
			if f16 {
				w = quant.F16ToF32(quant.F32ToF16(w))
				vr := v16[off : off+headDim]
				for d, vv := range vr {
					acc[d] += float64(w * quant.F16ToF32(vv))
				}
			} else {
				vr := v32[off : off+headDim]
				for d, vv := range vr {
					acc[d] += float64(w * vv)
				}
			}
		}
		or := out[t*heads*headDim+h*headDim : t*heads*headDim+(h+1)*headDim]
		for d := range or {
			or[d] = float32(acc[d])
		}
	}
}

// swiglu: ggml's silu is x/(1+expf(-x)) in float32.
func (c *CPU) swiglu(out, g, u []float32) {
	c.gt = gluTask{out: out, g: g, u: u}
	c.w.run(len(out), 4096, &c.gt)
	c.gt = gluTask{}
}

type gluTask struct{ out, g, u []float32 }

func (t *gluTask) run(_, lo, hi int) {
	out, g, u := t.out[lo:hi], t.g[lo:hi], t.u[lo:hi]
	for i, x := range g {
		out[i] = x / (1 + expf(-x)) * u[i]
	}
}
