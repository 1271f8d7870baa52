package cuda

import (
	"math"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
)

// The one-token staged mat-vec with a tail (decode.cu's mvs_*_tn and
// mvs_*_tr): the last of the mat-vec's blocks to finish runs the
// single-block work of the nodes after it, which would otherwise be
// launches of their own — the norm chain (residual add, rms_norm, norm
// weight, quantization: norm_quant's work) after the attention output and
// the FFN down projection, the q/k rope pair and the k/v store
// (rope_pair's and store_kv_pair's) after the q/k/v projection. A decode
// block then takes six launches instead of eleven (with the one-block
// attention). They are off by default (defaultDecodeOff): the tail's
// single block waited on one global round trip after another, and every
// block's fence and counter came before it; a plain mat-vec and then
// norm_one or rope_store_one (a launch each, every load in flight at once,
// the rope a block per head) take less time on the H200. MINFER_CUDA_DECODE
// without mvnorm and mvrope switches them back on.

// tailScratch is MVT_SCRATCH of decode.cu: the tail's shared scratch after
// the staged activations (8 doubles, the scale, the last-block flag, a
// q8k_sh; the rope's cos/sin table takes the q8k_sh's place).
const tailScratch = 80 + 4*(256+8+8+16)

const (
	// ropeTailMaxDims bounds the rope dimensions whose cos/sin table fits
	// the scratch.
	ropeTailMaxDims = (tailScratch - 80) / 4
)

// stagedMatVecT names the tail kernels of each staged weight type.
var stagedMatVecT = map[gguf.GGMLType]struct{ norm, rope string }{
	gguf.TypeQ4_0: {"mvs_q4_0_tn", "mvs_q4_0_tr"},
	gguf.TypeQ8_0: {"mvs_q8_0_tn", "mvs_q8_0_tr"},
	gguf.TypeQ4_K: {"mvs_q4_k_tn", "mvs_q4_k_tr"},
	gguf.TypeQ6_K: {"mvs_q6_k_tn", "mvs_q6_k_tr"},
}

// ropeStore is a rope_pair + store_kv_pair group of one token's nodes
// (ropeStorePlan): its kernel arguments.
type ropeStore struct {
	x, out, x2, out2, pos, freqs uintptr
	heads, heads2                int32
	hd, dims, neox               int32
	freqScale, thetaScale        float32
	kc, vc, vx, rows             uintptr
	n, ctx, f16                  int32
	// early (ropeAttention): the attention may read the caches, the mask
	// and the row before its PDL wait (cachesQuietBefore).
	early int32
}

// ropeStorePlan reads nodes[j:j+4] as the q rope, the k rope (same
// positions, frequencies and parameters), and the k and v stores of their
// rows into two caches of one type and shape, all of one token (batch
// false) or of the same tokens (batch); ok false when they are not that;
// tail: for a mat-vec tail, whose cos/sin table must fit its scratch.
func (b *Backend) ropeStorePlan(nodes []*graph.Node, j int, tail, batch bool) (ropeStore, bool, error) {
	if b.off.rope || b.off.store || j+4 > len(nodes) {
		return ropeStore{}, false, nil
	}
	n, n2, s1, s2 := nodes[j], nodes[j+1], nodes[j+2], nodes[j+3]
	if n.Op != graph.OpRope || n2.Op != graph.OpRope || s1.Op != graph.OpStoreKV || s2.Op != graph.OpStoreKV {
		return ropeStore{}, false, nil
	}
	be := n.Backend
	if n2.Backend != be || s1.Backend != be || s2.Backend != be {
		return ropeStore{}, false, nil
	}
	p, err := graph.ParamsOf[graph.RopeParams](n)
	if err != nil {
		return ropeStore{}, false, err
	}
	p2, err := graph.ParamsOf[graph.RopeParams](n2)
	if err != nil {
		return ropeStore{}, false, err
	}
	hd, T := n.Shape[0], n.Shape[2]
	if p2 != p || hd%2 != 0 || int64(p.Dims) > hd || (tail && p.Dims > ropeTailMaxDims) || (!batch && T != 1) || n2.Shape[2] != T ||
		n2.Shape[0] != hd || n2.Src[1] != n.Src[1] || n2.Src[2] != n.Src[2] || n2.Src[0] == n {
		return ropeStore{}, false, nil
	}
	// The stores: storePair's conditions, a row a token.
	if s2.Src[2] != s1.Src[2] || s2.Src[0].Type != s1.Src[0].Type || s2.Src[0].Shape[0] != s1.Src[0].Shape[0] ||
		s2.Src[0].Shape[1] != s1.Src[0].Shape[1] || s2.Src[1] == s1 || s2.Src[0] == s1.Src[0] || s1.Src[2].Elements() != T ||
		s1.Src[1].Elements() != T*s1.Src[0].Shape[0] || s2.Src[1].Elements() != T*s1.Src[0].Shape[0] {
		return ropeStore{}, false, nil
	}
	rs := ropeStore{heads: i32(n.Shape[1]), heads2: i32(n2.Shape[1]), hd: i32(hd), dims: i32(p.Dims), freqScale: p.FreqScale,
		n: i32(s1.Src[0].Shape[0]), ctx: i32(s1.Src[0].Shape[1])}
	if p.Mode == graph.RopeNeoX {
		rs.neox = 1
	}
	if s1.Src[0].Type == gguf.TypeF16 {
		rs.f16 = 1
	}
	// The CPU computes theta_scale once, in float64 then rounded.
	rs.thetaScale = float32(math.Pow(float64(p.FreqBase), -2.0/float64(p.Dims)))
	var kx uintptr
	for _, e := range []struct {
		n *graph.Node
		p *uintptr
	}{{n.Src[0], &rs.x}, {n, &rs.out}, {n2.Src[0], &rs.x2}, {n2, &rs.out2}, {n.Src[1], &rs.pos}, {n.Src[2], &rs.freqs},
		{s1.Src[0], &rs.kc}, {s1.Src[1], &kx}, {s2.Src[0], &rs.vc}, {s2.Src[1], &rs.vx}, {s1.Src[2], &rs.rows}} {
		if *e.p, err = b.ptrOf(e.n); err != nil {
			return ropeStore{}, false, err
		}
	}
	// The tail stores the k rope's values as it makes them (the k store's
	// source is that output, whole), and a round of its loads may run
	// ahead of the writes of the rounds before: no output may lie on an
	// input of another rope or on v.
	vb := T * int64(rs.n) * 4
	if rs.kc == rs.vc || kx != rs.out2 || int64(rs.n) != n2.Shape[1]*hd || overlaps(rs.out, n.Bytes(), rs.x2, n2.Src[0].Bytes()) ||
		overlaps(rs.out2, n2.Bytes(), rs.x, n.Src[0].Bytes()) || overlaps(rs.out, n.Bytes(), rs.vx, vb) ||
		overlaps(rs.out2, n2.Bytes(), rs.vx, vb) || overlaps(rs.out, n.Bytes(), rs.out2, n2.Bytes()) {
		return ropeStore{}, false, nil
	}
	return rs, true, nil
}

// matVecTail encodes nodes[i] — with the one or two mat-muls after it of
// the same one-token input, weight type and row length, as multiMatVec
// takes them — and the norm chain or the rope/store group right after
// them as one mvs_*_tn or mvs_*_tr launch, when the weights have a staged
// kernel that fits. It reports how many nodes it took (0: not this shape).
func (b *Backend) matVecTail(nodes []*graph.Node, i int) (int, error) {
	n := nodes[i]
	x, wt, in := n.Src[1], n.Src[0].Type, n.Src[0].Shape[0]
	kn, ok := stagedMatVecT[wt]
	if !ok || b.mvV1 || b.off.mv || (b.off.mvNorm && b.off.mvRope) || x.Rows() != 1 || !matVecWeight(n.Src[0]) {
		return 0, nil
	}
	vt := quant.VecDotType(wt)
	if vt == gguf.TypeF32 {
		return 0, nil
	}
	// The mat-vec group: as multiMatVec's.
	k := i + 1
	for !b.off.multi && k < len(nodes) && k-i < 3 {
		m := nodes[k]
		if m.Op != graph.OpMatMul || m.Src[1] != x || m.Backend != n.Backend || m.Src[0].Type != wt || m.Src[0].Shape[0] != in {
			break
		}
		k++
	}
	for j := i; j < k; j++ {
		if nodes[j].Src[0].Rows() > math.MaxInt32 {
			return 0, nil
		}
	}
	// The tail.
	var (
		norm   normPlan
		rope   ropeStore
		isNorm bool
		used   int
	)
	if k >= len(nodes) {
		return 0, nil
	}
	switch t := nodes[k]; {
	case !b.off.mvNorm && (t.Op == graph.OpRMSNorm || (t.Op == graph.OpAdd && b.addFeedsNorm(nodes, k))):
		nn := t
		if t.Op == graph.OpAdd {
			nn = nodes[k+1]
		}
		if nn.Backend != n.Backend || nn.Rows() != 1 || !isF32(nn.Src[0]) {
			return 0, nil
		}
		pl, err := b.normChainPlan(nodes, k)
		if err != nil {
			return 0, err
		}
		norm, isNorm, used = pl, true, pl.end-i
	case !b.off.mvRope && t.Op == graph.OpRope:
		rs, ok, err := b.ropeStorePlan(nodes, k, true, false)
		if err != nil || !ok {
			return 0, err
		}
		rope, used = rs, k+4-i
	default:
		return 0, nil
	}
	wrb, err := wt.RowBytes(in)
	if err != nil {
		return 0, err
	}
	xrb, err := vt.RowBytes(in)
	if err != nil {
		return 0, err
	}
	if xrb > b.dv.workSize {
		return 0, nil
	}
	ws, outs, rows, err := b.matVecOperands(nodes[i:k])
	if err != nil {
		return 0, err
	}
	s := stagedMatVec[wt]
	limit := b.stagedLimit() - 2*tailScratch
	total := int64(rows[0]) + int64(rows[1]) + int64(rows[2])
	warps := b.warpsFor()
	per := warps * s.rpw
	// The norm tail keeps its row (n floats) in the staged rows' bytes, or
	// after the scratch where those are fewer.
	var vsOff, vsExtra int64
	if isNorm && per*wrb < 4*norm.norm.Shape[0] {
		vsExtra = 4 * norm.norm.Shape[0]
		limit -= 2 * vsExtra
	}
	smem, ok := oneFits(wrb, xrb, s.rpw, warps, limit, ws[:k-i]...)
	if !ok {
		return 0, nil
	}
	smem += tailScratch
	if vsExtra > 0 {
		vsOff = smem
		smem += vsExtra
	}
	if err := b.actsAtWork(x, vt, in, xrb); err != nil {
		return 0, err
	}
	b.lastQuant = nil
	grid, block := grid1((total+per-1)/per), block1(32*int(warps))
	nblk := i32(blocksPerRow(wt, in))
	counter := b.dv.counters + uintptr(4*normCounter)
	if isNorm {
		var q uintptr
		if norm.qt != qtNone {
			q = b.dv.work
		}
		if err := b.dv.launch(&b.l, kn.norm, grid, block, uint32(smem),
			ws[0], ws[1], ws[2], outs[0], outs[1], outs[2], rows[0], rows[1], rows[2], nblk, i64(wrb), b.dv.work, i64(xrb), counter,
			norm.x, norm.y, norm.sum, norm.out, norm.w, norm.out2, q, i32(norm.norm.Shape[0]), norm.eps, norm.qt, norm.xrb, i32(vsOff)); err != nil {
			return 0, err
		}
		if norm.qt != qtNone {
			b.noteQuant(norm.last, norm.vt, 0)
		}
		return used, nil
	}
	r := rope
	return used, b.dv.launch(&b.l, kn.rope, grid, block, uint32(smem),
		ws[0], ws[1], ws[2], outs[0], outs[1], outs[2], rows[0], rows[1], rows[2], nblk, i64(wrb), b.dv.work, i64(xrb), counter,
		r.x, r.out, r.heads, r.x2, r.out2, r.heads2, r.pos, r.freqs, r.hd, r.dims, r.neox, r.freqScale, r.thetaScale,
		r.kc, r.vc, r.vx, r.rows, r.n, r.ctx, r.f16)
}

// ropeAttention encodes the rope/store group at nodes[i] (ropeStorePlan:
// q and k roped, k and v stored in one row of F16 caches) and the
// one-token attention right after it, when that attention reads the q
// rope's output and the same caches from their first row and takes the
// one-block kernel, as one attn_x_one_rope_* launch: its blocks rope
// their q head and their group's k head, the group's first block stores
// k and v, and every block takes the current row's k and v from its own
// values (decode.cu's attn_x_one). It reports how many nodes it took (5,
// or 0: not this shape).
func (b *Backend) ropeAttention(nodes []*graph.Node, i int) (int, error) {
	if b.off.ropeOne || b.off.ropeAttn || i+4 >= len(nodes) {
		return 0, nil
	}
	a := nodes[i+4]
	// The kernel reads the mask and the cache row before its PDL wait
	// (pdl.go): both must be inputs of the step, never a kernel's output.
	if a.Op != graph.OpAttention || a.Backend != nodes[i].Backend || a.Src[0] != nodes[i] || a.Src[1] != nodes[i+2] || a.Src[2] != nodes[i+3] ||
		a.Src[3] == nil || a.Src[3].Op != graph.OpInput {
		return 0, nil
	}
	r, ok, err := b.ropeStorePlan(nodes, i, false, false)
	if err != nil || !ok || r.f16 != 1 || nodes[i+2].Src[2].Op != graph.OpInput {
		return 0, err
	}
	p, err := graph.ParamsOf[graph.AttentionParams](a)
	if err != nil {
		return 0, err
	}
	var src [4]uintptr
	for k, s := range a.Src {
		if src[k], err = b.ptrOf(s); err != nil {
			return 0, err
		}
	}
	q := a.Src[0]
	if src[1] != r.kc || src[2] != r.vc || int64(r.hd) != q.Shape[0] || int64(r.heads) != q.Shape[1] || r.heads2 != i32(int64(p.KVHeads)) ||
		int64(r.n) != int64(p.KVHeads)*q.Shape[0] {
		return 0, nil
	}
	out, err := b.ptrOf(a)
	if err != nil {
		return 0, err
	}
	quiet, err := b.cachesQuietBefore(nodes, i, a.Src[1], a.Src[2], a.Src[3], nodes[i+2].Src[2])
	if err != nil {
		return 0, err
	}
	if quiet {
		r.early = 1
		if b.l.counts != nil {
			b.l.counts["attn_x_one_rope early"]++ // (tests; not an attn_x_one_rope_* name)
		}
	}
	if ok, err := b.decodeAttention(nodes, i+4, p, src, out, &r); err != nil || !ok {
		return 0, err
	}
	return 5, nil
}

// cachesQuietBefore reports whether a kernel may read the memory of reads
// (the caches, the mask and the row of an attention) before its PDL wait
// when launched for nodes[i]: a kernel of this Compute ran before it (so
// the kernel its wait is for is one of this step's, not an earlier
// Compute's), and no node before nodes[i] writes any of that memory (an
// input is the host's, written before the step). pdl.go has the rule.
func (b *Backend) cachesQuietBefore(nodes []*graph.Node, i int, reads ...*graph.Node) (bool, error) {
	if b.l.launched == b.encodeStart {
		return false, nil
	}
	type span struct {
		p uintptr
		n int64
	}
	spans := make([]span, 0, len(reads))
	for _, r := range reads {
		p, err := b.ptrOf(r)
		if err != nil {
			return false, err
		}
		spans = append(spans, span{p, r.Bytes()})
	}
	for _, n := range nodes[:i] {
		if n.Op == graph.OpInput || n.Op == graph.OpWeight || n.Op == graph.OpView {
			continue
		}
		p, err := b.ptrOf(n)
		if err != nil {
			return false, err
		}
		for _, s := range spans {
			if overlaps(p, n.Bytes(), s.p, s.n) {
				return false, nil
			}
		}
	}
	return true, nil
}

// ropeStoreOne encodes nodes[i:i+4], one token's q rope, k rope and k/v
// stores (ropeStorePlan), as one rope_store_one launch: a block of up to
// 1024 threads for each head of q and k and for each head-sized piece of
// v. It reports how many nodes it took (0: not this shape).
func (b *Backend) ropeStoreOne(nodes []*graph.Node, i int) (int, error) {
	if b.off.ropeOne {
		return 0, nil
	}
	r, ok, err := b.ropeStorePlan(nodes, i, false, false)
	if err != nil || !ok {
		return 0, err
	}
	threads := min(1024, (r.hd/2+31)/32*32)
	grid := int64(r.heads) + int64(r.heads2) + (int64(r.n)+int64(r.hd)-1)/int64(r.hd)
	return 4, b.dv.launch(&b.l, "rope_store_one", grid1(grid), block1(int(threads)), 0,
		r.x, r.out, r.heads, r.x2, r.out2, r.heads2, r.pos, r.freqs, r.hd, r.dims, r.neox, r.freqScale, r.thetaScale,
		r.kc, r.vc, r.vx, r.rows, r.n, r.ctx, r.f16)
}

// ropeStoreBatch encodes a batch's rope/store group (ropeStorePlan) as one
// rope_store_pair launch: the q and k ropes, the k rope's values stored
// into the k cache as they are made, the v rows stored.
func (b *Backend) ropeStoreBatch(nodes []*graph.Node, i int) (int, error) {
	r, ok, err := b.ropeStorePlan(nodes, i, false, true)
	if err != nil || !ok {
		return 0, err
	}
	return 4, b.dv.launch(&b.l, "rope_store_pair", [3]uint32{uint32(nodes[i].Shape[2]), 3, 1}, block1(512), uint32(r.dims*4),
		r.x, r.out, r.heads, r.x2, r.out2, r.heads2, r.pos, r.freqs, r.hd, r.dims, r.neox, r.freqScale, r.thetaScale,
		r.kc, r.vc, r.vx, r.rows, r.n, r.ctx, r.f16)
}
