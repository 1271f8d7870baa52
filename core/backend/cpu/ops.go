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
	rb, err := rowBytes(t, rowLen)
	if err != nil {
		return err
	}
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
// scale = 1/sqrtf(mean + eps) in float32. The sum runs in lanes with a
// per-row proof that the float32 mean is the serial chain's
// (meanSquares, normsum.go).
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
		mean := meanSquares(xr)
		scale := 1 / float32(math.Sqrt(float64(mean+t.eps)))
		scaleRow(t.out[r*rowLen:(r+1)*rowLen], xr, scale)
	}
}

func (c *CPU) broadcast(out, x, y []float32, rowLen int, add bool) {
	rows := len(x) / rowLen
	yRows := len(y) / rowLen
	for r := 0; r < rows; r++ {
		xr := x[r*rowLen : (r+1)*rowLen]
		yr := y[(r%yRows)*rowLen : (r%yRows+1)*rowLen]
		binRow(out[r*rowLen:(r+1)*rowLen], xr, yr, add)
	}
}

// binRowGo is out[i] = x[i] + y[i] (add) or x[i]·y[i] over len(x)
// elements; binRow is it in assembly where the level has it.
func binRowGo(out, x, y []float32, add bool) {
	out, y = out[:len(x)], y[:len(x)]
	if add {
		for i := range x {
			out[i] = x[i] + y[i]
		}
	} else {
		for i := range x {
			out[i] = x[i] * y[i]
		}
	}
}

// matMul: out[t][i] = w_i · x_t. The activations are quantized once to
// the weight's vec-dot type and the kernel resolved once; then the pool
// hands out chunks of rows, and within a chunk each weight row is used for
// four tokens at a time (Kernel.Dot4), so prefill reads each weight block
// once per four tokens and a chunk's rows stay in cache across the
// token groups.
func (c *CPU) matMul(n *graph.Node, out []float32, w []byte, lay quant.Layout, x []float32) error {
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
	if f16F32(wt, in) {
		c.mt = matTask{c: c, k: k, w: w, x: x, in: in, out: out, rows: rows, tokens: tokens, f16f32: true}
		c.weightReads.Add(int64(wrb * rows))
		c.w.run(rows, 16, &c.mt)
		c.mt = matTask{}
		return nil
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
	if lay != quant.LayoutFile {
		w = w[:rows*wrb] // the groups are counted from its length
	}
	c.mt = matTask{c: c, k: k, w: w, xq: xq, out: out, rows: rows, tokens: tokens, lay: lay}
	if tb := k.Tile8Bytes(); tb > 0 && tokens >= 8 && rows%4 == 0 {
		// Eight-token tiles (tile8.go) for all whole groups of eight.
		c.packTiles8(k, xq, tokens/8, tb)
		c.mt.t8 = tokens &^ 7
		// A repacked weight's rows are scanned in the file layout, quad by
		// quad.
		c.mt.rowsFree = lay == quant.LayoutFile && c.rowsFree(k, w[:rows*wrb])
	}
	// A repacked weight whose tile kernels prepare the row quads of its
	// groups as they lie (quant.Kernel.HasPrepGroup) runs without turning
	// its rows back into the file layout when no group of four tokens is
	// left after the tiles (those would need file rows): the tiles from
	// the quads, the left-over tokens by the group mat-vec.
	c.mt.direct = lay != quant.LayoutFile && k.HasPrepGroup(lay) && tokens-c.mt.t8 < 4
	if tb := k.Group4TableBytes(); tb > 0 && tokens-c.mt.t8 >= 4 {
		// Per-block facts of each group of four tokens after the tiles,
		// once per matmul.
		groups := (tokens - c.mt.t8) / 4
		if cap(c.tabs) < groups*tb {
			c.tabs = make([]byte, groups*tb)
		}
		c.mt.tabs, c.mt.tb = c.tabs[:groups*tb], tb
		for g := 0; g < groups; g++ {
			x4 := xq[c.mt.t8*xrb:]
			k.PrepareGroup4(x4[4*g*xrb:4*(g+1)*xrb], c.mt.tabs[g*tb:(g+1)*tb])
		}
	}
	if tb := k.Token1TableBytes(); tb > 0 {
		// The same for each left-over token (the four-row kernel).
		first := tokens &^ 3
		rem := tokens - first
		if cap(c.tabs1) < rem*tb {
			c.tabs1 = make([]byte, rem*tb)
		}
		c.mt.tabs1, c.mt.tb1 = c.tabs1[:rem*tb], tb
		for i := 0; i < rem; i++ {
			k.PrepareToken1(xq[(first+i)*xrb:(first+i+1)*xrb], c.mt.tabs1[i*tb:(i+1)*tb])
		}
	}
	c.weightReads.Add(int64(wrb * rows))
	if tokens == 1 {
		c.w.runGuided(rows, decodeUnit, &c.mt)
	} else {
		c.w.run(rows, promptGrain(lay), &c.mt)
	}
	c.mt = matTask{}
	return nil
}

// decodeUnit is the smallest chunk of a one-token mat-mul, whose chunks
// are guided (workers.runGuided): a thread's share of the rows left, so
// the first chunk is half the matrix (two threads) and the last ones
// decodeUnit rows (whole groups of either repacked layout). Fixed chunks of a quarter thread's
// share each (four a thread) left the threads of the 2-core VM waiting
// for each other's last chunk at every mat-mul; more and smaller fixed
// chunks (each one restarts a thread's stream through the weights) had
// measured slower: eight per thread 4-5 %, sixteen and thirty-two more
// (bench/results/2026-12-01-cpufin).
const decodeUnit = 16

// promptGrain is the chunk of a prompt step's mat-mul on a weight of
// layout lay: sixteen rows, or two col16 groups, so that the chunk's
// second group is prefetched while its first computes (prepQuad): with one
// group a chunk, the first quad's preparation met the whole group in
// memory each time and prompt steps ran ~1.5 % slower than on x8 weights
// (BenchmarkPromptLayouts, bench/results/2026-12-03-s13-cpu-col16).
func promptGrain(lay quant.Layout) int {
	if lay == quant.LayoutCol16 {
		return 32
	}
	return 16
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
	// t8 is the number of tokens in eight-token tiles (tiles, tb8 bytes
	// each), 0 when the kernel has none or there are fewer than eight.
	t8    int
	tiles []byte
	tb8   int
	// rowsFree: the weight holds no −128 quant (CPU.rowsFree), so the
	// tile path skips its per-quad scans.
	rowsFree bool
	// tabs holds the group table (tb bytes) of each group of four tokens
	// after the tiles when the kernel takes one.
	tabs []byte
	tb   int
	// tabs1 holds the token table (tb1 bytes) of each token after the
	// last whole group, when the kernel takes one.
	tabs1 []byte
	tb1   int
	// lay: w's layout, repacked or not (x8.go); direct: a prompt step
	// runs on a repacked w as it is (matMul), not through runGroups'
	// copies in the file layout.
	lay    quant.Layout
	direct bool
	// f16f32: F16 weights against the F32 activations x (rows of in).
	f16f32 bool
	x      []float32
	in     int
	// segs[:nseg], when nseg > 0: the weights of a shared one-token call
	// (shared.go); w, out and rows are then unused.
	segs [maxShared]matSeg
	nseg int
}

func (t *matTask) run(worker, lo, hi int) {
	wrb, rows := t.k.WeightRowBytes(), t.rows
	o := &t.c.ws[worker].dot4 // a local would escape through the kernel's func value
	if t.f16f32 {
		for i := lo; i < hi; i++ {
			wr := t.w[i*wrb : (i+1)*wrb]
			tok := 0
			for ; tok+4 <= t.tokens; tok += 4 {
				quant.DotF16F32x4(wr, t.x[tok*t.in:(tok+4)*t.in], t.in, o)
				for k, v := range o {
					t.out[(tok+k)*rows+i] = v
				}
			}
			for ; tok < t.tokens; tok++ {
				t.out[tok*rows+i] = quant.DotF16F32(wr, t.x[tok*t.in:(tok+1)*t.in])
			}
		}
		return
	}
	if t.nseg > 0 {
		t.runShared(worker, lo, hi)
		return
	}
	if t.lay != quant.LayoutFile && t.tokens > 1 && !t.direct {
		t.runGroups(worker, lo, hi)
		return
	}
	t.runRows(worker, t.w, 0, t.lay, lo, hi)
}

// runRows is run for rows lo..hi-1 of the weight, whose row i is row
// i−wb of w: the weight itself (wb = 0, in its layout lay; a repacked
// one for one token, or for tiles it prepares as it lies) or some of its
// rows in the file layout (runGroups).
func (t *matTask) runRows(worker int, w []byte, wb int, lay quant.Layout, lo, hi int) {
	wrb, xrb, rows := t.k.WeightRowBytes(), t.k.ActRowBytes(), t.rows
	o := &t.c.ws[worker].dot4 // a local would escape through the kernel's func value
	tok := 0
	if t.t8 > 0 {
		t.runTiles8(worker, w, wb, lo, hi)
		tok = t.t8
	}
	for ; tok+4 <= t.tokens; tok += 4 {
		x := t.xq[tok*xrb : (tok+4)*xrb]
		out := t.out[tok*rows : (tok+4)*rows]
		if t.tabs != nil {
			g := (tok - t.t8) / 4
			tab := t.tabs[g*t.tb : (g+1)*t.tb]
			for i := lo; i < hi; i++ {
				t.k.Dot4T(w[(i-wb)*wrb:(i-wb+1)*wrb], x, tab, o)
				out[i], out[rows+i], out[2*rows+i], out[3*rows+i] = o[0], o[1], o[2], o[3]
			}
			continue
		}
		for i := lo; i < hi; i++ {
			t.k.Dot4(w[(i-wb)*wrb:(i-wb+1)*wrb], x, o)
			out[i], out[rows+i], out[2*rows+i], out[3*rows+i] = o[0], o[1], o[2], o[3]
		}
	}
	for ; tok < t.tokens; tok++ {
		// Left-over tokens (all of a decode step).
		var tab []byte
		if t.tabs1 != nil {
			r := tok - t.tokens&^3
			tab = t.tabs1[r*t.tb1 : (r+1)*t.tb1]
		}
		t.oneToken(worker, &t.k, w, wb, lay, t.xq[tok*xrb:(tok+1)*xrb], tab, t.out[tok*rows:(tok+1)*rows], lo, hi)
	}
}

// oneToken computes out[i] = w_i · x for rows lo..hi-1 of w with the
// kernel k against one quantized token x (tab its token table, nil when
// the kernel takes none): eight or four rows at a time.
// Row i of the weight is row i−wb of w; with a repacked layout lay, w is
// the whole repacked weight (wb = 0).
func (t *matTask) oneToken(worker int, k *quant.Kernel, w []byte, wb int, lay quant.Layout, x, tab []byte, out []float32, lo, hi int) {
	wrb := k.WeightRowBytes()
	o := &t.c.ws[worker].dot4
	i := lo
	if gr := lay.GroupRows(); gr > 0 {
		// The rows of whole groups (x8.go): a group at a time where the
		// chunk holds the whole group, one by one where not.
		og := t.c.ws[worker].dotG[:gr]
		g4 := k.HasGroups4(lay)
		for ge := len(w) / (gr * wrb) * gr; i < hi && i < ge; {
			if g4 && i%gr == 0 && i+4*gr <= hi && i+4*gr <= ge {
				// Four whole groups in one call (quant.Kernel.DotGroups4).
				k.DotGroups4(lay, w[i*wrb:(i+4*gr)*wrb], x, tab, out[i:i+4*gr])
				i += 4 * gr
				continue
			}
			if i%gr == 0 && i+gr <= hi {
				k.DotGroup(lay, w[i*wrb:(i+gr)*wrb], x, tab, og)
				copy(out[i:i+gr], og)
				i += gr
				continue
			}
			g := i - i%gr
			out[i] = k.DotGroupRow(lay, w[g*wrb:(g+gr)*wrb], i-g, x)
			i++
		}
	}
	w = w[:(hi-wb)*wrb]
	if tab != nil {
		o8 := &t.c.ws[worker].dot8
		for ; i+8 <= hi; i += 8 {
			k.Dot8RowsT(w[(i-wb)*wrb:(i-wb+8)*wrb], x, tab, o8)
			copy(out[i:i+8], o8[:])
		}
		for ; i+4 <= hi; i += 4 {
			k.Dot4RowsT(w[(i-wb)*wrb:(i-wb+4)*wrb], x, tab, o)
			out[i], out[i+1], out[i+2], out[i+3] = o[0], o[1], o[2], o[3]
		}
	}
	for ; i+4 <= hi; i += 4 {
		k.Dot4Rows(w[(i-wb)*wrb:(i-wb+4)*wrb], x, o)
		out[i], out[i+1], out[i+2], out[i+3] = o[0], o[1], o[2], o[3]
	}
	for ; i < hi; i++ {
		out[i] = k.Dot(w[(i-wb)*wrb:(i-wb+1)*wrb], x)
	}
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
// fma(x0, cos, −(x1·sin)) and x0·sin + x1·cos becomes fma(x0, sin, x1·cos)
// (quant.RopePairs and quant.RopeHalves, SIMD where the level has it).
func (c *CPU) rope(n *graph.Node, p graph.RopeParams, out, x []float32, pos []int32, freqs []float32) {
	c.rt = ropeTask{
		c: c, out: out, x: x, pos: pos, freqs: freqs,
		headDim: int(n.Shape[0]), heads: int(n.Shape[1]), dims: p.Dims,
		neox: p.Mode == graph.RopeNeoX, freqScale: p.FreqScale,
		thetaScale: float32(math.Pow(float64(p.FreqBase), -2.0/float64(p.Dims))),
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
	dims := rt.dims
	ws := rt.c.scratchFor(worker)
	cs := ws.f32(&ws.cs, dims)
	var fp *float32
	if len(rt.freqs) > 0 {
		fp = &rt.freqs[0]
	}
	for t := lo; t < hi; t++ {
		// A decode step ropes Q and K of every block at one position: the
		// table is the worker's last one when its inputs are the same
		// (freqs is a weight: its address names it).
		key := ropeKey{pos: rt.pos[t], dims: dims, freqScale: rt.freqScale, thetaScale: rt.thetaScale, freqs: fp, nfreqs: len(rt.freqs)}
		if ws.csOK && ws.csKey == key {
			rt.apply(t, cs)
			continue
		}
		ws.csOK, ws.csKey = true, key
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
		rt.apply(t, cs)
	}
}

// ropeKey is what a rope table (cos and sin of every pair) depends on.
type ropeKey struct {
	pos                   int32
	dims                  int
	freqScale, thetaScale float32
	freqs                 *float32
	nfreqs                int
}

// apply ropes every head of token t with the table cs.
func (rt *ropeTask) apply(t int, cs []float32) {
	dims, heads, headDim := rt.dims, rt.heads, rt.headDim
	for h := 0; h < heads; h++ {
		off := (t*heads + h) * headDim
		xr, or := rt.x[off:off+headDim], rt.out[off:off+headDim]
		if rt.neox {
			quant.RopeHalves(or, xr, cs)
		} else {
			quant.RopePairs(or, xr, cs)
		}
		copy(or[dims:], xr[dims:])
	}
}

func (c *CPU) storeKV(n *graph.Node, cache []byte, x []float32, rows []int32) error {
	rowLen := int(n.Src[0].Shape[0])
	ctx := int(n.Src[0].Shape[1])
	t := n.Src[0].Type
	rb64, err := rowBytes(t, int64(rowLen))
	if err != nil {
		return err
	}
	rb := int(rb64)
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
	// The cells in use: the last unmasked entry of any row, plus one; and
	// each row's own (0 when the row is all masked).
	if cap(c.attnUsed) < tokens {
		c.attnUsed = make([]int32, tokens)
	}
	rowUsed := c.attnUsed[:tokens]
	used := 0
	for t := 0; t < tokens; t++ {
		mr := mask[t*kvLen : (t+1)*kvLen]
		rowUsed[t] = 0
		for j := kvLen - 1; j >= 0; j-- {
			if !math.IsInf(float64(mr[j]), -1) {
				rowUsed[t] = int32(j + 1)
				break
			}
		}
		used = max(used, int(rowUsed[t]))
	}
	nkv := nkvPad(used)
	npV := nkv &^ 63
	npK := headDim &^ 63
	gs := attnGroupSize(f16, group, tokens*kvHeads, c.w.n)
	c.at = attnTask{
		c: c, out: out, q: q, mask: mask, k16: k16, v16: v16, k32: k32, v32: v32,
		headDim: headDim, heads: heads, group: group, kvLen: kvLen, kvRow: kvRow,
		nkv: nkv, npV: npV, npK: npK, scale: scale, softCap: softCap, f16: f16, rowUsed: rowUsed,
		gs: gs,
	}
	c.w.run(tokens*heads/gs, 1, &c.at)
	c.at = attnTask{}
	return nil
}

// attnPerHead makes attention take one (token, q head) per job, as before
// the grouped path (tests compare the two).
var attnPerHead = false

// attnGroupForce, when it divides the group, is the heads per job (tests).
var attnGroupForce = 0

// attnGroupSize is how many q heads of one KV head an attention job takes
// (a divisor of group): the largest that still gives each of threads
// workers four jobs (so that a late or slow worker leaves little undone:
// one decode row of the 1B synth model on 2 threads is 8 jobs of 4 heads),
// else 1. Most of the gain is in the many-row kernels, which any group size
// has (BenchmarkAttentionDecode: 2, 4 and 8 heads per job within noise).
// Only an F16 cache has a grouped path.
func attnGroupSize(f16 bool, group, kvJobs, threads int) int {
	if !f16 || group <= 1 || attnPerHead {
		return 1
	}
	if attnGroupForce > 0 && group%attnGroupForce == 0 {
		return attnGroupForce
	}
	for gs := group; gs > 1; gs-- {
		if group%gs == 0 && kvJobs*(group/gs) >= 4*threads {
			return gs
		}
	}
	return 1
}

type attnTask struct {
	c                                   *CPU
	out, q, mask                        []float32
	k16, v16                            []uint16
	k32, v32                            []float32
	headDim, heads, group, kvLen, kvRow int
	nkv, npV, npK                       int
	scale, softCap                      float32
	f16                                 bool
	// rowUsed[t]: token t's last unmasked entry plus one (see run).
	rowUsed []int32
	// gs: the q heads per job, consecutive heads of one KV head (group
	// is a multiple); with 1 a job is one (token, head) row.
	gs int
}

// attnScore is one attention score from the dot s of q and a K row, as
// llama.cpp computes it: rounded to float32, soft-capped (softCap > 0),
// scaled, the mask entry m added.
func attnScore(s float64, softCap, scale, m float32) float32 {
	sc := float32(s)
	if softCap > 0 {
		sc = tanhf(sc*(1/softCap)) * softCap
	}
	return sc*scale + m
}

// shiftedSoftmaxInv takes maxv off every score and returns 1 over the
// softmax sum of what is left (softmaxSum16's order).
func shiftedSoftmaxInv(scores []float32, maxv float32) float32 {
	for j := range scores {
		scores[j] -= maxv
	}
	return float32(1 / softmaxSum16(scores))
}

// attnFullRows makes attnTask.run take every row over all nkv entries
// (tests compare the two).
var attnFullRows = false

func (at *attnTask) run(worker, lo, hi int) {
	ws := at.c.scratchFor(worker)
	if at.gs == 1 {
		at.rows(ws, lo, hi)
		return
	}
	jobsPerToken := at.heads / at.gs
	for job := lo; job < hi; job++ {
		t, h0 := job/jobsPerToken, job%jobsPerToken*at.gs
		if at.rowUsed[t] == 0 || attnFullRows {
			// An all-masked row (NaN weights over every entry) and the
			// tests' full rows take the one-head path.
			at.rows(ws, t*at.heads+h0, t*at.heads+h0+at.gs)
			continue
		}
		at.group16(ws, t, h0)
	}
}

// rows does the (token, head) rows lo..hi−1 (row t·heads + h), one at a
// time.
func (at *attnTask) rows(ws *scratch, lo, hi int) {
	headDim, heads, group, kvLen, kvRow := at.headDim, at.heads, at.group, at.kvLen, at.kvRow
	npV, npK, scale, softCap, f16 := at.npV, at.npK, at.scale, at.softCap, at.f16
	q, mask, out := at.q, at.mask, at.out
	k16, v16, k32, v32 := at.k16, at.v16, at.k32, at.v32
	ninf := float32(math.Inf(-1))
	scoresAll := ws.f32(&ws.scores, at.nkv)
	qh := ws.f32(&ws.qh, headDim)
	if cap(ws.accs) < headDim {
		ws.accs = make([]dotF16Acc, headDim)
	}
	accs := ws.accs[:headDim]
	for job := lo; job < hi; job++ {
		t, h := job/heads, job%heads
		kvh := h / group
		// Entries past the row's last unmasked one, in whole 16-lane
		// blocks, are left out: their scores are −inf, their weights 0
		// (skipped by the V pass), and their blocks add +0 to the
		// softmax sum, so the results are the same bits.
		scores := scoresAll
		if u := int(at.rowUsed[t]); u > 0 && !attnFullRows {
			scores = scoresAll[:min(len(scoresAll), (u+15)&^15)]
		}
		qr := q[(t*heads+h)*headDim : (t*heads+h+1)*headDim]
		if f16 {
			quant.RoundF16(qh, qr)
		} else {
			copy(qh, qr)
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
				// ggml_vec_dot_f16 in the AVX-512 order: 64 lanes folded
				// to 16 and ReduceAdd16 (DotF16x64), the tail in float64.
				kr := k16[off : off+headDim]
				if npK > 0 {
					s = float64(quant.DotF16x64(qh, kr))
				}
				var tail float64
				for d := npK; d < headDim; d++ {
					tail += float64(qh[d] * quant.F16ToF32(kr[d]))
				}
				s += tail
			} else {
				for d, kv := range k32[off : off+headDim] {
					s += float64(qh[d] * kv)
				}
			}
			scores[j] = attnScore(s, softCap, scale, mr[j])
			maxv = max(maxv, scores[j])
		}
		inv := shiftedSoftmaxInv(scores, maxv)
		or := out[t*heads*headDim+h*headDim : t*heads*headDim+(h+1)*headDim]
		if f16 {
			// Each output element is ggml_vec_dot_f16 of the weights and a
			// V column, in the AVX-512 order: entry j < npV goes to lane
			// j mod 64, the rest to a float64 tail. The 64 lanes of every
			// column are kept transposed (lane-major, vT[lane][d]) so that
			// one V row updates them with one AxpyF16; each lane still gets
			// its products in j order, exactly as dotF16Acc adds them.
			vT := ws.f32(&ws.vT, 64*headDim)
			if npV > 0 {
				clear(vT)
			}
			vtail := ws.f64(&ws.acc, headDim)
			clear(vtail)
			wts := ws.f32(&ws.wts, len(scores))
			quant.RoundF16Scaled(wts, scores, inv) // F16(w·inv) for every entry
			for j, w := range scores {
				if w == 0 {
					continue
				}
				w = wts[j]
				off := j*kvRow + kvh*headDim
				vr := v16[off : off+headDim]
				if j < npV {
					l := j & 63
					quant.AxpyF16(vT[l*headDim:(l+1)*headDim], w, vr)
					continue
				}
				quant.AxpyF16F64(vtail, w, vr)
			}
			if npV == 0 {
				// No lanes: their reduction is +0 (vT was not cleared).
				var zero float64
				for d := range or {
					or[d] = float32(zero + vtail[d])
				}
				continue
			}
			// Fold each column's lanes (GGML_F32x16_REDUCE, ReduceAdd16)
			// and add its float64 tail.
			quant.FoldLanes64(or, vT, vtail)
			continue
		}
		for d := range accs {
			accs[d].reset()
		}
		for j, w := range scores {
			if w == 0 {
				continue
			}
			w *= inv
			off := j*kvRow + kvh*headDim
			for d, vv := range v32[off : off+headDim] {
				accs[d].tail += float64(w * vv)
			}
		}
		for d := range or {
			or[d] = float32(accs[d].sum())
		}
	}
}

// group16 does, over an F16 cache, the rows of token t and the gs q heads
// h0..h0+gs−1 (all of one KV head) together: one DotF16x64Rows call dots
// every K row with the gs q rows (each K row converted once at head dim
// 64), then head by head one AxpyF16F64Rows and one AxpyF16Lanes64 call
// take all of its V rows. Every head sees the operations rows does for it,
// in the same order, so the bits are the same: the scores per head as
// there, the softmax per head over the same entries, and the entries a
// head skips (weight exactly 0) marked SkipWeight so that the V kernels
// leave them out as rows does. rowUsed[t] > 0.
func (at *attnTask) group16(ws *scratch, t, h0 int) {
	headDim, heads, gs, kvLen, kvRow := at.headDim, at.heads, at.gs, at.kvLen, at.kvRow
	npV, npK, scale, softCap := at.npV, at.npK, at.scale, at.softCap
	k16, v16 := at.k16, at.v16
	ninf := float32(math.Inf(-1))
	kvh := h0 / at.group
	// The entries up to the last unmasked one, in whole 16-lane blocks
	// (see rows).
	n := min(at.nkv, (int(at.rowUsed[t])+15)&^15)
	scores := ws.f32(&ws.scores, gs*n) // head g's scores at g·n
	qh := ws.f32(&ws.qh, gs*headDim)
	quant.RoundF16(qh, at.q[(t*heads+h0)*headDim:(t*heads+h0+gs)*headDim])
	inv := ws.f32(&ws.grp, gs)
	mr := at.mask[t*kvLen : (t+1)*kvLen]
	koff := kvh * headDim
	if npK > 0 {
		// Every head's lane part of every K row's dot (masked rows too:
		// their scores are overwritten below).
		quant.DotF16x64Rows(scores, n, qh, gs, headDim, k16[koff:], kvRow, min(n, kvLen))
	}
	for g := 0; g < gs; g++ {
		sg := scores[g*n : (g+1)*n]
		if npK == headDim && softCap == 0 {
			inv[g] = shiftedSoftmaxInv(sg, scoreRow(sg, mr, kvLen, scale))
			continue
		}
		qg := qh[g*headDim : (g+1)*headDim]
		maxv := ninf
		for j := range sg {
			if j >= kvLen || math.IsInf(float64(mr[j]), -1) {
				sg[j] = ninf
				continue
			}
			var s float64
			if npK > 0 {
				s = float64(sg[j])
			}
			var tail float64
			if npK < headDim {
				kr := k16[j*kvRow+koff : j*kvRow+koff+headDim]
				for d := npK; d < headDim; d++ {
					tail += float64(qg[d] * quant.F16ToF32(kr[d]))
				}
			}
			s += tail
			sg[j] = attnScore(s, softCap, scale, mr[j])
			maxv = maxf(maxv, sg[j])
		}
		inv[g] = shiftedSoftmaxInv(sg, maxv)
	}
	// The V pass: every head's weights (F16-rounded; the entries a head
	// skips — weight exactly 0: masked, or underflowed — SkipWeight, so
	// that the kernels leave them out as rows does), then the 64 lanes of
	// every column of all the heads in one call (lane-major per head, as in
	// rows: AxpyF16Lanes64Heads, each V row converted once for the heads
	// where the level can), then head by head its float64 tail and the fold.
	wts := ws.f32(&ws.wts, gs*n) // head g's at g·n
	for g := 0; g < gs; g++ {
		sg, wg := scores[g*n:(g+1)*n], wts[g*n:(g+1)*n]
		quant.RoundF16Scaled(wg, sg, inv[g])
		for j, w := range sg {
			if w == 0 {
				wg[j] = quant.SkipWeight
			}
		}
	}
	vT := ws.f32(&ws.vT, gs*64*headDim)
	if npV > 0 {
		quant.AxpyF16Lanes64Heads(vT, gs, wts, n, min(n, npV), v16[koff:], kvRow)
	}
	vtail := ws.f64(&ws.acc, headDim)
	for g := 0; g < gs; g++ {
		wg := wts[g*n : (g+1)*n]
		clear(vtail)
		if npV < n {
			quant.AxpyF16F64Rows(vtail, wg[npV:], v16[npV*kvRow+koff:], kvRow)
		}
		or := at.out[(t*heads+h0+g)*headDim : (t*heads+h0+g+1)*headDim]
		if npV == 0 {
			var zero float64 // no lanes: their reduction is +0
			for d := range or {
				or[d] = float32(zero + vtail[d])
			}
			continue
		}
		quant.FoldLanes64(or, vT[g*64*headDim:(g+1)*64*headDim], vtail)
	}
}

// scoreRow is group16's score loop for a head whose K dots have no tail
// (npK = headDim) and no soft cap, the common case, in fewer operations:
// the same float32 operations as attnScore on float64(s)+0 (whose only
// effect, −0 to +0, is done by hand), −inf for the entries the mask or
// kvLen leaves out, and the running maximum by maxf, which it returns.
func scoreRow(sg, mr []float32, kvLen int, scale float32) float32 {
	ninf := float32(math.Inf(-1))
	maxv := ninf
	lim := min(len(sg), kvLen)
	for j, m := range mr[:lim] {
		if m == ninf {
			sg[j] = ninf
			continue
		}
		sc := sg[j]
		if sc == 0 {
			sc = 0 // float64(−0) + 0 is +0
		}
		v := sc*scale + m
		sg[j] = v
		maxv = maxf(maxv, v)
	}
	for j := lim; j < len(sg); j++ {
		sg[j] = ninf
	}
	return maxv
}

// maxf is max(m, v) (NaN when either is; +0 over −0) with one compare in
// the common case.
func maxf(m, v float32) float32 {
	if v > m {
		return v
	}
	if v < m {
		return m
	}
	return max(m, v)
}

// swiglu: ggml_silu then ggml_mul, row by row: silu(x) = x/(1+exp(−x)) in
// float32 as ggml_vec_silu_f32 computes it on AVX-512 (siluRow16), then
// times up.
func (c *CPU) swiglu(out, g, u []float32, rowLen int) {
	c.gt = gluTask{out: out, g: g, u: u, rowLen: rowLen}
	c.w.run(len(out)/rowLen, 1, &c.gt)
	c.gt = gluTask{}
}

type gluTask struct {
	out, g, u []float32
	rowLen    int
}

func (t *gluTask) run(_, lo, hi int) {
	rowLen := t.rowLen
	for r := lo; r < hi; r++ {
		swigluRow16(t.out[r*rowLen:(r+1)*rowLen], t.g[r*rowLen:(r+1)*rowLen], t.u[r*rowLen:(r+1)*rowLen])
	}
}
