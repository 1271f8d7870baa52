package cuda

import (
	"fmt"
	"math"
	"os"
	"strings"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
)

// The decode-shaped kernels of kernels/decode.cu and how encode picks
// them: bandwidth-laid-out mat-vecs for the common weight types, the split
// attention for one query token, and the fusions of neighbouring nodes
// (residual add + rms_norm + weight mul + activation quantization, swiglu +
// quantization, the q/k rope pair, the k/v store pair).

// decodeOff lists the decode paths switched off (MINFER_CUDA_DECODE, a
// comma-separated list of mv, multi, attn, one (the one-block attention:
// the split kernels then take short rows too), quant, addnorm, rope, store,
// mvnorm and mvrope (the norm chain and the rope/store group run by the
// last block of the mat-vec before them: tail.go), normone and ropeone
// (norm_one and rope_store_one, the one-token forms of the norm chain and
// of the rope/store group), mvpipe (the pipelined mat-vec of long rows,
// mvp_*_1), mvsplit (the split mat-vec of long rows, mvk_*_1: mvp_*_1 or
// mvs_*_1 then runs), vals (the split attention's one-pass values kernel,
// attn_x_vals_*: the older attn_x_values_* then runs), attnq8k (the
// attention's q8_K output blocks quantized by a kernel of their own, not
// by the attention kernel's warps: q8k_arrive), ropeattn (the rope/store
// group and the one-block attention after it as one launch,
// attn_x_one_rope_*: rope_store_one and attn_x_one then run), swmv (the
// gate and up mat-vecs with the swiglu and its quantization as one
// launch, mvs_*_w: mvs_*_m and swiglu_quant then run), or all),
// for comparisons and diagnosis; each then runs as the node-by-node
// kernels do.
type decodeOff struct {
	mv, multi, attn, attnOne, quant, addNorm, rope, store, mvNorm, mvRope, normOne, ropeOne, mvPipe, mvSplit, vals, attnQ8K, ropeAttn, swMV bool
}

// defaultDecodeOff is the list in force when MINFER_CUDA_DECODE is unset:
// every path on but the mat-vec tails and swmv. (swmv, the gate/up
// mat-vecs with the swiglu in one launch, measured slower than the mat-vec
// of both and swiglu_quant after it wherever it applies: with a device
// block's gate and up as two row-view mat-muls, the 1.1B decode 788–790
// against 944–959 tok/s and the 8B 274.6 against 363.6–367.4, the 8B's
// device time a step 3.50 against 2.61 ms — bench/results/2026-12-07-s23-call3.
// The mat-vec tails: their one-block tails, every
// load a round trip of its own, took 8–12 µs of each 8B-shaped mat-vec,
// and each block's fence and counter before them more: norm_one and
// rope_store_one after a plain mat-vec are faster —
// bench/results/2026-12-01-s7-probe and s7-tails. The norm fused before the one-token mat-vec, mvs_*_n,
// exact but measured slower on the H200 than norm_quant before the staged
// mat-vec — bench/results/2026-12-01-session3-h200 — is gone: the norm
// chain now runs in the last block of the mat-vec before it, tail.go. The
// one-block attention, slower there too while its value chains waited on
// one global load after another, stages the V rows in shared memory now:
// bench/results/2026-12-01-cudadec2.)
const defaultDecodeOff = "mvnorm,mvrope,swmv"

// decodeOffFromEnv is MINFER_CUDA_DECODE, or defaultDecodeOff when unset.
func decodeOffFromEnv() string {
	if v, ok := os.LookupEnv("MINFER_CUDA_DECODE"); ok {
		return v
	}
	return defaultDecodeOff
}

func parseDecodeOff(v string) decodeOff {
	var o decodeOff
	for _, f := range strings.Split(v, ",") {
		all := f == "all"
		o.mv = o.mv || all || f == "mv"
		o.multi = o.multi || all || f == "multi"
		o.attn = o.attn || all || f == "attn"
		o.attnOne = o.attnOne || all || f == "one"
		o.quant = o.quant || all || f == "quant"
		o.addNorm = o.addNorm || all || f == "addnorm"
		o.rope = o.rope || all || f == "rope"
		o.store = o.store || all || f == "store"
		o.mvNorm = o.mvNorm || all || f == "mvnorm"
		o.mvRope = o.mvRope || all || f == "mvrope"
		o.normOne = o.normOne || all || f == "normone"
		o.ropeOne = o.ropeOne || all || f == "ropeone"
		o.mvPipe = o.mvPipe || all || f == "mvpipe"
		o.mvSplit = o.mvSplit || all || f == "mvsplit"
		o.vals = o.vals || all || f == "vals"
		o.attnQ8K = o.attnQ8K || all || f == "attnq8k"
		o.ropeAttn = o.ropeAttn || all || f == "ropeattn"
		o.swMV = o.swMV || all || f == "swmv"
	}
	return o
}

// fastMatVec names the mvf_* kernels (one token, batch of eight) of the
// weight types that have them, with the address alignment their loads need.
var fastMatVec = map[gguf.GGMLType]struct {
	one, batch, multi string
	align             uintptr
}{
	gguf.TypeQ4_0: {"mvf_q4_0_1", "mvf_q4_0_b", "mvf_q4_0_m", 2},
	gguf.TypeQ8_0: {"mvf_q8_0_1", "mvf_q8_0_b", "mvf_q8_0_m", 2},
	gguf.TypeQ4_K: {"mvf_q4_k_1", "mvf_q4_k_b", "mvf_q4_k_m", 4},
	gguf.TypeQ6_K: {"mvf_q6_k_1", "mvf_q6_k_b", "mvf_q6_k_m", 2},
}

// matVecOperands is the weights' and outputs' device addresses and the
// row counts of up to three one-token mat-muls that one launch runs.
func (b *Backend) matVecOperands(mm []*graph.Node) (ws, outs [3]uintptr, rows [3]int32, err error) {
	for j, m := range mm {
		if ws[j], err = b.ptrOf(m.Src[0]); err != nil {
			return ws, outs, rows, err
		}
		if outs[j], err = b.ptrOf(m); err != nil {
			return ws, outs, rows, err
		}
		rows[j] = i32(m.Src[0].Rows())
	}
	return ws, outs, rows, nil
}

// multiMatVec encodes nodes[i] and the one or two mat-muls right after it
// that read the same one-token input with weights of the same type and
// row length (q, k and v; gate and up) as one mvf_*_m launch, quantizing
// the input once. It reports how many nodes it took (0: not this shape).
func (b *Backend) multiMatVec(nodes []*graph.Node, i int) (int, error) {
	n := nodes[i]
	x, wt, in := n.Src[1], n.Src[0].Type, n.Src[0].Shape[0]
	f, ok := fastMatVec[wt]
	if !ok || b.off.mv || b.off.multi || x.Rows() != 1 {
		return 0, nil
	}
	k := i
	for k < len(nodes) && k-i < 3 {
		m := nodes[k]
		if m.Op != graph.OpMatMul || m.Src[1] != x || m.Backend != n.Backend || m.Src[0].Type != wt || m.Src[0].Shape[0] != in ||
			m.Src[0].Rows() > math.MaxInt32 {
			break
		}
		k++
	}
	if k-i < 2 {
		return 0, nil
	}
	wrb, err := wt.RowBytes(in)
	if err != nil {
		return 0, err
	}
	ws, outs, rows, err := b.matVecOperands(nodes[i:k])
	if err != nil {
		return 0, err
	}
	for _, w := range ws[:k-i] {
		if w%f.align != 0 || uintptr(wrb)%f.align != 0 {
			return 0, nil
		}
	}
	vt := quant.VecDotType(wt)
	xrb, err := vt.RowBytes(in)
	if err != nil {
		return 0, err
	}
	if xrb > b.dv.workSize {
		return 0, nil
	}
	if err := b.actsAtWork(x, vt, in, xrb); err != nil {
		return 0, err
	}
	total := int64(rows[0]) + int64(rows[1]) + int64(rows[2])
	nblk := i32(blocksPerRow(wt, in))
	if s, ok := stagedMatVec[wt]; ok && !b.mvV1 {
		warps := b.warpsFor()
		if smem, ok := oneFits(wrb, xrb, s.rpw, warps, b.stagedLimit(), ws[:k-i]...); ok {
			per := warps * s.rpw
			return k - i, b.dv.launch(&b.l, s.multi, grid1((total+per-1)/per), block1(32*int(warps)), uint32(smem),
				ws[0], ws[1], ws[2], outs[0], outs[1], outs[2], rows[0], rows[1], rows[2], nblk, i64(wrb), b.dv.work, i64(xrb))
		}
	}
	return k - i, b.dv.launch(&b.l, f.multi, grid1((total+3)/4), block1(128), 0,
		ws[0], ws[1], ws[2], outs[0], outs[1], outs[2], rows[0], rows[1], rows[2], nblk, i64(wrb), b.dv.work)
}

// swigluMatVec encodes nodes[i], nodes[i+1] and nodes[i+2] when they are
// one token's gate and up mat-muls (either order) over the same input,
// with weights of one staged type (stagedMatVec) and shape, and the
// swiglu of their outputs, as one mvs_*_w launch: the mat-vecs of
// mvs_*_m, whose blocks take matching gate and up rows, then swiglu_quant's
// product and quantization (for the mat-mul after the swiglu, quantTarget)
// in the same kernel; the gate and up outputs are still written. The
// kernel reads the input's activations at the workspace's start while its
// blocks already write the product's, so these go after them, at
// lastQuantOff. It reports how many nodes it took (0: not this shape; 3).
func (b *Backend) swigluMatVec(nodes []*graph.Node, i int) (int, error) {
	if b.off.mv || b.off.multi || b.off.swMV || b.mvV1 || i+2 >= len(nodes) {
		return 0, nil
	}
	gn, un, sn := nodes[i], nodes[i+1], nodes[i+2]
	if sn.Op != graph.OpSwiGLU || gn.Op != graph.OpMatMul || un.Op != graph.OpMatMul {
		return 0, nil
	}
	if sn.Src[0] == un && sn.Src[1] == gn {
		gn, un = un, gn
	}
	x, wt, in := gn.Src[1], gn.Src[0].Type, gn.Src[0].Shape[0]
	s, ok := stagedMatVec[wt]
	rows := gn.Src[0].Rows()
	if !ok || sn.Src[0] != gn || sn.Src[1] != un || x.Rows() != 1 || un.Src[1] != x || un.Src[0].Type != wt || un.Src[0].Shape[0] != in ||
		un.Src[0].Rows() != rows || gn.Backend != sn.Backend || un.Backend != sn.Backend || sn.Elements() != rows || sn.Shape[0] != rows ||
		rows > math.MaxInt32 {
		return 0, nil
	}
	wrb, err := wt.RowBytes(in)
	if err != nil {
		return 0, err
	}
	vt := quant.VecDotType(wt)
	xrb, err := vt.RowBytes(in)
	if err != nil {
		return 0, err
	}
	warps := b.warpsFor()
	if warps*s.rpw%2 != 0 {
		return 0, nil
	}
	ws, outs, _, err := b.matVecOperands([]*graph.Node{gn, un})
	if err != nil {
		return 0, err
	}
	smem, ok := oneFits(wrb, xrb, s.rpw, warps, b.stagedLimit(), ws[:2]...)
	if !ok || xrb > b.dv.workSize {
		return 0, nil
	}
	// The product's quantization, after the input's activations (256-byte
	// aligned), one counter a group.
	qt, qxrb, qvt := b.quantTarget(nodes, i+3, sn)
	qoff := uintptr(xrb+255) &^ 255
	if qt != qtNone {
		grp := int64(32)
		if qt == qtQ8_K {
			grp = 256
		}
		if rows/grp > maxDecodeHeads || int64(qoff)+(qxrb+15)&^15 > b.dv.workSize {
			qt = qtNone
		}
	}
	hp, err := b.ptrOf(sn)
	if err != nil {
		return 0, err
	}
	if err := b.actsAtWork(x, vt, in, xrb); err != nil {
		return 0, err
	}
	half := warps * s.rpw / 2
	b.lastQuant = nil
	if err := b.dv.launch(&b.l, s.swiglu, grid1((rows+half-1)/half), block1(32*int(warps)), uint32(smem),
		ws[0], ws[1], outs[0], outs[1], hp, i32(rows), i32(blocksPerRow(wt, in)), i64(wrb), b.dv.work, i64(xrb),
		b.dv.work+qoff, qt, b.dv.counters); err != nil {
		return 0, err
	}
	if qt != qtNone {
		b.noteQuant(sn, qvt, qoff)
	}
	return 3, nil
}

// matVecKernel is the launch for nt tokens of weight type wt at w with
// rows of wrb bytes and activation rows of xrb bytes: the staged mvs_*
// form where there is one and the alignment and shared memory allow it
// (unless MINFER_CUDA_MV=v1; for one token's long rows the split mvk_*
// form, splitKernel, else the pipelined mvp_* form, pipedKernel), else
// the mvf_* form where the weight's alignment allows it, else kn's; the
// last two take four rows per block of 128 threads.
func (b *Backend) matVecKernel(wt gguf.GGMLType, kn typeKernel, w uintptr, wrb, xrb int64, nt, rows int64) mvLaunch {
	if f, ok := fastMatVec[wt]; ok && !b.off.mv && w%f.align == 0 && uintptr(wrb)%f.align == 0 {
		if s, ok := stagedMatVec[wt]; ok && !b.mvV1 {
			if nt == 1 {
				if l, ok := b.splitKernel(wt, w, wrb); ok {
					return l
				}
				if l, ok := b.pipedKernel(wt, w, wrb, xrb, rows); ok {
					return l
				}
				warps := b.warpsFor()
				if smem, ok := oneFits(wrb, xrb, s.rpw, warps, b.stagedLimit(), w); ok {
					return mvLaunch{s.one, warps * s.rpw, 32 * int(warps), uint32(smem)}
				}
			} else if smem, ok := stagedFits(wrb, xrb, nt, s.rpw, b.stagedLimit(), w); ok {
				return mvLaunch{s.batch, stagedRows(nt, s.rpw), 32 * stagedWarps, uint32(smem)}
			}
		}
		if nt > 1 {
			return mvLaunch{f.batch, 4, 128, 0}
		}
		return mvLaunch{f.one, 4, 128, 0}
	}
	if nt > 1 {
		return mvLaunch{kn.matvecB, 4, 128, 0}
	}
	return mvLaunch{kn.matvec1, 4, 128, 0}
}

// Activation formats the fused kernels write (QT_* in decode.cu).
const (
	qtNone int32 = 0
	qtQ8_0 int32 = 1
	qtQ8_1 int32 = 2
	qtQ8_K int32 = 3
	// norm_quant's targets in the tensor-core mat-mul's layout (mmqActsAt).
	qtMMQ8_0 int32 = 4
	qtMMQ8_1 int32 = 5
	qtMMQ8_K int32 = 6
)

// normMMQMaxK8K bounds the rows norm_quant quantizes as q8_K in the
// tensor-core layout: they pass through its dynamic shared memory, which
// stays within the default 48 KiB with its static part.
const normMMQMaxK8K = 8192

// fuseQuantMaxT bounds the token count for which a norm or swiglu kernel
// also quantizes for the mat-mul after it (decode and small batches).
const fuseQuantMaxT = 16

// quantTarget reports how the mat-mul at nodes[j] would quantize src, its
// input, when that is a format the fused kernels write and the mat-mul
// would take it from the workspace in one piece: the kernel's qt code and
// the activation row bytes.
func (b *Backend) quantTarget(nodes []*graph.Node, j int, src *graph.Node) (int32, int64, gguf.GGMLType) {
	if j >= len(nodes) || b.off.quant {
		return qtNone, 0, 0
	}
	m := nodes[j]
	if m.Op != graph.OpMatMul || m.Src[1] != src || m.Backend != src.Backend || src.Rows() > fuseQuantMaxT {
		return qtNone, 0, 0
	}
	in := m.Src[0].Shape[0]
	if src.Shape[0] != in {
		return qtNone, 0, 0
	}
	vt := quant.VecDotType(m.Src[0].Type)
	var qt int32
	var blk int64
	switch vt {
	case gguf.TypeQ8_0:
		qt, blk = qtQ8_0, 32
	case gguf.TypeQ8_1:
		qt, blk = qtQ8_1, 32
	case gguf.TypeQ8_K:
		qt, blk = qtQ8_K, 256
	default:
		return qtNone, 0, 0
	}
	xrb, err := vt.RowBytes(in)
	if err != nil || in%blk != 0 || src.Rows()*xrb > b.dv.workSize {
		return qtNone, 0, 0
	}
	return qt, xrb, vt
}

// sameRows reports whether y has x's shape (an add that is not a broadcast).
func sameRows(x, y *graph.Node) bool {
	return y.Shape[0] == x.Shape[0] && y.Rows() == x.Rows()
}

// normPlan is a norm chain's nodes and arguments (normChainPlan).
type normPlan struct {
	norm, last *graph.Node
	// end: the index after the chain's nodes.
	end int
	// The arguments of norm_quant: x (+ y) in, the sum, the norm, the norm
	// weight w (wrows rows) and its product out2; the quantization qt
	// into the workspace (xrb bytes a row, the mat-mul's type vt; for the
	// qtMMQ* targets, xrb is the padded row kp and vt carries mmqLayout).
	x, y, sum, out, w, out2 uintptr
	wrows                   int32
	eps                     float32
	qt                      int32
	xrb                     int64
	vt                      gguf.GGMLType
}

// normChainPlan reads the chain of nodes[i:] from an rms_norm, or from a
// residual add whose only next step is the rms_norm of its sum: the add,
// the norm, the mul by the norm weight after it, and the quantization for
// the mat-mul after that.
func (b *Backend) normChainPlan(nodes []*graph.Node, i int) (normPlan, error) {
	k := i
	var add *graph.Node
	if nodes[k].Op == graph.OpAdd {
		add = nodes[k]
		k++
	}
	norm := nodes[k]
	k++
	p, err := graph.ParamsOf[graph.NormParams](norm)
	if err != nil {
		return normPlan{}, err
	}
	var mul *graph.Node
	if k < len(nodes) {
		if m := nodes[k]; m.Op == graph.OpMul && m.Src[0] == norm && m.Backend == norm.Backend && isF32(m.Src[1]) && m.Src[1].Shape[0] == norm.Shape[0] {
			mul = m
			k++
		}
	}
	pl := normPlan{norm: norm, last: norm, end: k, wrows: 1, eps: p.Eps}
	if mul != nil {
		pl.last = mul
	}
	pl.qt, pl.xrb, pl.vt = b.quantTarget(nodes, k, pl.last)
	if vt, kp, ok := b.mmqTarget(nodes, k, pl.last); ok && pl.qt == qtNone {
		switch {
		case vt == gguf.TypeQ8_0:
			pl.qt = qtMMQ8_0
		case vt == gguf.TypeQ8_1:
			pl.qt = qtMMQ8_1
		case vt == gguf.TypeQ8_K && norm.Shape[0] <= normMMQMaxK8K:
			pl.qt = qtMMQ8_K
		}
		if pl.qt != qtNone {
			pl.xrb, pl.vt = kp, mmqLayout|vt
		}
	}
	ptrs := []struct {
		n *graph.Node
		p *uintptr
	}{{norm.Src[0], &pl.x}, {norm, &pl.out}}
	if add != nil {
		ptrs = []struct {
			n *graph.Node
			p *uintptr
		}{{add.Src[0], &pl.x}, {add.Src[1], &pl.y}, {add, &pl.sum}, {norm, &pl.out}}
	}
	if mul != nil {
		ptrs = append(ptrs, struct {
			n *graph.Node
			p *uintptr
		}{mul.Src[1], &pl.w}, struct {
			n *graph.Node
			p *uintptr
		}{mul, &pl.out2})
		pl.wrows = i32(mul.Src[1].Rows())
	}
	for _, e := range ptrs {
		if *e.p, err = b.ptrOf(e.n); err != nil {
			return normPlan{}, err
		}
	}
	return pl, nil
}

// normChain encodes nodes[i:] from an rms_norm, or from a residual add
// whose only next step is the rms_norm of its sum (normChainPlan), in one
// norm_quant kernel. It returns how many nodes it took.
func (b *Backend) normChain(nodes []*graph.Node, i int) (int, error) {
	pl, err := b.normChainPlan(nodes, i)
	if err != nil {
		return 0, err
	}
	norm, k := pl.norm, pl.end
	var q uintptr
	if pl.qt != qtNone {
		q = b.dv.work
	}
	n := norm.Shape[0]
	if norm.Rows() == 1 && !b.off.normOne && n <= normOneMax {
		// One row: norm_one, a thread per element up to 1024 threads.
		threads := norm1Block(int(n), b.norm1Threads)
		var smem uint32
		if pl.qt == qtQ8_K {
			smem = uint32(4 * n)
		}
		if err := b.dv.launch(&b.l, "norm_one", grid1(1), block1(int(threads)), smem,
			pl.x, pl.y, pl.sum, pl.out, pl.w, pl.out2, q, i32(n), pl.eps, pl.qt); err != nil {
			return 0, err
		}
	} else {
		// Threads per row: up to 1024, at least 256 (a q8_K block per 256).
		threads := min(1024, max(256, (n+255)/256*256))
		var smem uint32
		if pl.qt == qtMMQ8_K {
			smem = uint32(4 * n)
		}
		if err := b.dv.launch(&b.l, "norm_quant", grid1(norm.Rows()), block1(int(threads)), smem,
			pl.x, pl.y, pl.sum, pl.out, pl.w, pl.out2, q, i32(n), pl.wrows, pl.eps, pl.qt, pl.xrb); err != nil {
			return 0, err
		}
	}
	if pl.qt != qtNone {
		b.noteQuant(pl.last, pl.vt, 0)
	}
	return k - i, nil
}

// norm1Block is norm_one's block for a row of n values: a thread per value
// up to limit threads (1024 when 0), but at least the threads that NORM1_K
// values each need (n <= normOneMax).
func norm1Block(n int, limit int64) int {
	if limit <= 0 {
		limit = 1024
	}
	t := min(int(limit), (n+31)/32*32)
	need := (n + norm1K*32 - 1) / (norm1K * 32) * 32
	return min(1024, max(t, need))
}

// norm1ThreadsFromEnv is MINFER_CUDA_NORM1_THREADS (256, 512 or 1024):
// norm_one's largest block, for comparisons; 0 (1024) otherwise.
func norm1ThreadsFromEnv() int64 {
	switch os.Getenv("MINFER_CUDA_NORM1_THREADS") {
	case "256":
		return 256
	case "512":
		return 512
	}
	return 0
}

// norm1K is NORM1_K (decode.cu): the most values a norm_one thread takes.
const norm1K = 8

// normOneMax is the longest row norm_one takes: NORM1_K (decode.cu)
// elements for each of 1024 threads, and its q8_K values (4 bytes each)
// within the 48 KiB of shared memory a launch gets without opting in.
const normOneMax = norm1K * 1024

// addFeedsNorm reports whether nodes[i], an add, is a plain (same-shape)
// residual add whose next node is the rms_norm of its sum.
func (b *Backend) addFeedsNorm(nodes []*graph.Node, i int) bool {
	a := nodes[i]
	if b.off.addNorm || i+1 >= len(nodes) || !isF32(a.Src[0]) || !isF32(a.Src[1]) || !sameRows(a, a.Src[0]) || !sameRows(a, a.Src[1]) {
		return false
	}
	n := nodes[i+1]
	return n.Op == graph.OpRMSNorm && n.Src[0] == a && n.Backend == a.Backend
}

// swiglu encodes nodes[i] (swiglu), quantizing the product for the
// mat-mul after it when that one reads it: into the tensor-core mat-mul's
// layout for a batch (swiglu_mmq_*), into vec-dot blocks for a few tokens.
func (b *Backend) swiglu(nodes []*graph.Node, i int, src [4]uintptr, out uintptr) error {
	n := nodes[i]
	total := n.Elements()
	if vt, kp, ok := b.mmqTarget(nodes, i+1, n); ok {
		in, T := n.Shape[0], n.Rows()
		qx, xs, xm := b.mmqActsAt(T, kp)
		var err error
		switch vt {
		case gguf.TypeQ8_0, gguf.TypeQ8_1:
			sum := i32(0)
			if vt == gguf.TypeQ8_1 {
				sum = 1
			}
			err = b.dv.launch(&b.l, "swiglu_mmq_q8", [3]uint32{uint32((kp/32 + 7) / 8), uint32(T), 1}, block1(256), 0,
				src[0], src[1], out, qx, xs, xm, i32(in), i32(kp), sum)
		case gguf.TypeQ8_K:
			err = b.dv.launch(&b.l, "swiglu_mmq_q8k", [3]uint32{uint32((kp/256 + 7) / 8), uint32(T), 1}, block1(256), 0,
				src[0], src[1], out, qx, xs, xm, i32(in))
		default:
			err = fmt.Errorf("%w: mmq activations of type %s", errUnsupported, vt)
		}
		if err != nil {
			return err
		}
		b.noteQuant(n, mmqLayout|vt, 0)
		return nil
	}
	qt, xrb, vt := b.quantTarget(nodes, i+1, n)
	if qt == qtNone {
		return b.dv.launch(&b.l, "swiglu", elementwiseGrid(total), block1(256), 0, src[0], src[1], out, i32(n.Shape[0]), i64(total))
	}
	if err := b.dv.launch(&b.l, "swiglu_quant", elementwiseGrid(total), block1(256), 0,
		src[0], src[1], out, b.dv.work, i32(n.Shape[0]), i64(total), qt, xrb); err != nil {
		return err
	}
	b.noteQuant(n, vt, 0)
	return nil
}

// ropeFast encodes nodes[i] (rope), with nodes[i+1] when that is the rope
// of another tensor of the same tokens with the same parameters (q and k),
// as one rope_pair launch. It reports how many nodes it took; 0 when the
// shape needs the general rope kernel (an odd head size).
func (b *Backend) ropeFast(nodes []*graph.Node, i int) (int, error) {
	n := nodes[i]
	p, err := graph.ParamsOf[graph.RopeParams](n)
	if err != nil {
		return 0, err
	}
	hd := n.Shape[0]
	if b.off.rope || hd%2 != 0 || int64(p.Dims) > hd {
		return 0, nil
	}
	var n2 *graph.Node
	if i+1 < len(nodes) {
		m := nodes[i+1]
		if m.Op == graph.OpRope && m.Backend == n.Backend && m.Src[0] != n && m.Src[1] == n.Src[1] && m.Src[2] == n.Src[2] &&
			m.Shape[0] == hd && m.Shape[2] == n.Shape[2] {
			if p2, err := graph.ParamsOf[graph.RopeParams](m); err == nil && p2 == p {
				n2 = m
			}
		}
	}
	x, err := b.ptrOf(n.Src[0])
	if err != nil {
		return 0, err
	}
	out, err := b.ptrOf(n)
	if err != nil {
		return 0, err
	}
	if n2 != nil {
		// The two run at once: neither may write what the other reads (k's
		// output may take q's input's dead bytes).
		x2, err := b.ptrOf(n2.Src[0])
		if err != nil {
			return 0, err
		}
		out2, err := b.ptrOf(n2)
		if err != nil {
			return 0, err
		}
		if overlaps(out, n.Bytes(), x2, n2.Src[0].Bytes()) || overlaps(out2, n2.Bytes(), x, n.Src[0].Bytes()) || overlaps(out, n.Bytes(), out2, n2.Bytes()) {
			n2 = nil
		}
	}
	pos, err := b.ptrOf(n.Src[1])
	if err != nil {
		return 0, err
	}
	freqs, err := b.ptrOf(n.Src[2])
	if err != nil {
		return 0, err
	}
	var x2, out2 uintptr
	heads2, gy, used := int32(0), uint32(1), 1
	if n2 != nil {
		if x2, err = b.ptrOf(n2.Src[0]); err != nil {
			return 0, err
		}
		if out2, err = b.ptrOf(n2); err != nil {
			return 0, err
		}
		heads2, gy, used = i32(n2.Shape[1]), 2, 2
	}
	neox := int32(0)
	if p.Mode == graph.RopeNeoX {
		neox = 1
	}
	// The CPU computes theta_scale once, in float64 then rounded.
	thetaScale := float32(math.Pow(float64(p.FreqBase), -2.0/float64(p.Dims)))
	return used, b.dv.launch(&b.l, "rope_pair", [3]uint32{uint32(n.Shape[2]), gy, 1}, block1(512), uint32(p.Dims*4),
		x, out, i32(n.Shape[1]), x2, out2, heads2, pos, freqs, i32(hd), i32(p.Dims), neox, p.FreqScale, thetaScale)
}

// storePair encodes nodes[i] and nodes[i+1] as one store_kv_pair launch
// when both store rows of the same tokens, at the same rows, into two
// different caches of one type and shape (k and v). It reports whether it
// did.
func (b *Backend) storePair(nodes []*graph.Node, i int) (bool, error) {
	if b.off.store || i+1 >= len(nodes) {
		return false, nil
	}
	n, m := nodes[i], nodes[i+1]
	if m.Op != graph.OpStoreKV || m.Backend != n.Backend || m.Src[2] != n.Src[2] || m.Src[0].Type != n.Src[0].Type ||
		m.Src[0].Shape[0] != n.Src[0].Shape[0] || m.Src[0].Shape[1] != n.Src[0].Shape[1] || m.Src[1] == n || m.Src[0] == n.Src[0] {
		return false, nil
	}
	var c1, x1, c2, x2, rows uintptr
	for _, e := range []struct {
		n *graph.Node
		p *uintptr
	}{{n.Src[0], &c1}, {n.Src[1], &x1}, {m.Src[0], &c2}, {m.Src[1], &x2}, {n.Src[2], &rows}} {
		var err error
		if *e.p, err = b.ptrOf(e.n); err != nil {
			return false, err
		}
	}
	if c1 == c2 {
		return false, nil
	}
	f16 := int32(0)
	if n.Src[0].Type == gguf.TypeF16 {
		f16 = 1
	}
	return true, b.dv.launch(&b.l, "store_kv_pair", [3]uint32{uint32(n.Src[2].Elements()), 2, 1}, block1(256), 0,
		c1, x1, c2, x2, rows, i32(n.Src[0].Shape[0]), i32(n.Src[0].Shape[1]), f16)
}

// overlaps reports whether the byte ranges [a, a+na) and [b, b+nb) meet.
func overlaps(a uintptr, na int64, b uintptr, nb int64) bool {
	return a < b+uintptr(nb) && b < a+uintptr(na)
}

// maxDecodeHeads is how many heads the split attention's counters cover
// (the last counter is normMatVec's).
const maxDecodeHeads = counterBytes/4 - 1

// decodeHeadDims are the head sizes the split attention kernels take.
var decodeHeadDims = map[int64]string{64: "_64", 96: "_96", 128: "_128", 256: "_256"}

// decodeValuesShared is attn_x_values's dynamic shared memory: the row's
// weights over the padded n_kv and their 16-block sums.
func decodeValuesShared(nkvMax int64) int64 { return 4 * (nkvMax + nkvMax/16) }

// decodeValsShared is attn_x_vals's: the same, then the 64 lanes' chains
// and tail products of its 32 elements (rows of 33 floats).
func decodeValsShared(nkvMax int64) int64 { return decodeValuesShared(nkvMax) + 4*2*64*33 }

// decodeOneMaxKV bounds the padded n_kv of the one-block attention
// (attn_x_one_*: a block per head); longer rows take the split kernels,
// which spread the positions over many blocks. 256 is the longest class
// measured (bench/results/2026-12-01-cudadec2: decode of 64..191 positions,
// the 256 class, faster than the split kernels); longer ones stay with the
// split kernels until measured.
const decodeOneMaxKV = 256

// attnOneThreads is attn_x_one's block, ONE_THREADS of decode.cu (its
// loops stride by the block: the count enters no value).
const attnOneThreads = 512

// decodeOneShared is attn_x_one's dynamic shared memory: q's row, 64
// words of scratch, the scores/weights over the padded n_kv, their
// 16-block sums and the 128 lanes' partials of the head, then, 16-byte
// aligned, the head's V rows (F16) and the current token's k row
// (attn_x_one_rope_*).
func decodeOneShared(hd, nkvMax int64) int64 {
	return 4*((hd+64+nkvMax+nkvMax/16+128*hd+3)&^3) + 2*nkvMax*hd + 2*hd
}

// decodeAttention encodes an attention node of one query token over an F16
// cache, when its head size is one the kernels take and the cache is
// 16-byte aligned: as attn_x_one_* (one launch, a block per head) for rows
// of up to decodeOneMaxKV positions (unless MINFER_CUDA_DECODE names
// one), else as the split kernels (attn_x_scores_*, attn_x_values_*) when
// the scores, partials and weights fit the workspace and shared memory.
// Both compute the same values; the kernel that writes the output also
// quantizes it for a q8_0/q8_1 mat-mul after it. It reports whether it
// did.
//
// With ro (ropeAttention), nodes[i] follows ro's rope/store group, and it
// runs the group too, in attn_x_one_rope_*; only there (false otherwise).
func (b *Backend) decodeAttention(nodes []*graph.Node, i int, p graph.AttentionParams, src [4]uintptr, out uintptr, ro *ropeStore) (bool, error) {
	n := nodes[i]
	q := n.Src[0]
	hd, heads := q.Shape[0], q.Shape[1]
	suffix, ok := decodeHeadDims[hd]
	if !ok || b.off.attn || q.Shape[2] != 1 || n.Src[1].Type != gguf.TypeF16 || heads > maxDecodeHeads || p.KVLen < 1 || p.KVHeads < 1 ||
		heads%int64(p.KVHeads) != 0 || src[1]%16 != 0 || src[2]%16 != 0 {
		return false, nil
	}
	dv := b.dv
	kvLen := int64(p.KVLen)
	nkvMax := max(32, (kvLen+31)/32*32)
	qt, _, vt := b.quantTarget(nodes, i+1, n)
	// q8_K blocks (256 elements, across heads) are quantized by the warp
	// that writes a block's last 32 elements (q8k_arrive), in attn_x_one
	// and attn_x_vals; attn_x_values takes q8_0/q8_1 only.
	if qt != qtQ8_0 && qt != qtQ8_1 && (qt != qtQ8_K || b.off.attnQ8K || heads*hd/256 > maxDecodeHeads) {
		qt = qtNone
	}
	one := !b.off.attnOne && nkvMax <= decodeOneMaxKV && decodeOneShared(hd, nkvMax) <= int64(dv.smemOptin-attentionStaticShared)
	if qt == qtQ8_K && !one && b.off.vals {
		qt = qtNone
	}
	if ro != nil && !one {
		return false, nil
	}
	if one {
		sm := decodeOneShared(hd, nkvMax)
		var err error
		if ro != nil {
			err = dv.launch(&b.l, "attn_x_one_rope"+suffix, grid1(heads), block1(attnOneThreads), uint32(sm),
				ro.x, ro.out, ro.x2, ro.out2, ro.vx, ro.pos, ro.freqs, ro.dims, ro.neox, ro.freqScale, ro.thetaScale, ro.rows, ro.n, ro.ctx,
				src[1], src[2], src[3], out, i32(heads), i32(p.KVHeads), i32(kvLen), i32(nkvMax), p.Scale, p.SoftCap, dv.work, qt, dv.counters,
				ro.early)
		} else {
			err = dv.launch(&b.l, "attn_x_one"+suffix, grid1(heads), block1(attnOneThreads), uint32(sm),
				src[0], src[1], src[2], src[3], out, i32(heads), i32(p.KVHeads), i32(kvLen), i32(nkvMax), p.Scale, p.SoftCap, dv.work, qt,
				dv.counters)
		}
		if err != nil {
			return false, err
		}
		if qt != qtNone {
			b.noteQuant(n, vt, 0)
		}
		return true, nil
	}
	smem := decodeValuesShared(nkvMax)
	if !b.off.vals {
		smem = decodeValsShared(nkvMax)
	}
	if smem > int64(dv.smemOptin-attentionStaticShared) {
		return false, nil
	}
	// The workspace: the quantized output row first (the mat-mul after
	// reads it there), then n_kv, the scores and the 64 lanes' partials.
	infoOff := (max(heads*hd/32*36, heads*hd/256*292) + 511) &^ 255
	sOff := infoOff + 256
	pOff := sOff + (heads*nkvMax*4+255)&^255
	if pOff+heads*128*hd*4 > dv.workSize {
		return false, nil
	}
	info, S, part := dv.work+uintptr(infoOff), dv.work+uintptr(sOff), dv.work+uintptr(pOff)
	if err := dv.launch(&b.l, "attn_x_scores"+suffix, [3]uint32{uint32(heads), uint32((nkvMax + 127) / 128), 1}, block1(128), 0,
		src[0], src[1], src[3], S, info, i32(heads), i32(p.KVHeads), i32(kvLen), i32(nkvMax), p.Scale, p.SoftCap); err != nil {
		return false, err
	}
	if !b.off.vals {
		if err := dv.launch(&b.l, "attn_x_vals"+suffix, [3]uint32{uint32(heads), uint32(hd / 32), 1}, block1(256), uint32(smem),
			S, info, src[2], out, i32(heads), i32(p.KVHeads), i32(nkvMax), dv.work, qt, dv.counters); err != nil {
			return false, err
		}
	} else if err := dv.launch(&b.l, "attn_x_values"+suffix, [3]uint32{uint32(heads), uint32(hd / 2), 1}, block1(128), uint32(smem),
		S, info, src[2], part, dv.counters, out, i32(heads), i32(p.KVHeads), i32(nkvMax), dv.work, qt); err != nil {
		return false, err
	}
	if qt != qtNone {
		b.noteQuant(n, vt, 0)
	}
	return true, nil
}
