package cuda

import (
	"fmt"
	"os"
	"strings"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
)

// Prefill mat-muls on the tensor cores (kernels/mma.cu): for batches of at
// least mmqMinTokens tokens, the activations are quantized once in the
// CPU's vec-dot format (q8_0, q8_1 or q8_K) into the tiles' layout and the
// weights are decoded to int8 tiles; the integer block sums are exact and
// the float part is the CPU vec-dot's, operation for operation (bit for
// bit). Smaller batches, and the types whose CPU dot keeps 4-element lanes
// (Q5_0, Q5_1, Q2_K), keep the batched mat-vec.

// mmqMinTokens is the smallest batch that takes the tensor-core kernels.
const mmqMinTokens = 32

// mmqKC is the kernels' k-step (KC in mma.cu): activation rows are padded
// with zeros to a multiple of it.
const mmqKC = 128

// mmqKernels names the mmq_* kernel of each weight type they decode.
var mmqKernels = map[gguf.GGMLType]string{
	gguf.TypeQ4_0: "mmq_q4_0", gguf.TypeQ4_1: "mmq_q4_1", gguf.TypeQ8_0: "mmq_q8_0",
	gguf.TypeQ3_K: "mmq_q3_k", gguf.TypeQ4_K: "mmq_q4_k", gguf.TypeQ5_K: "mmq_q5_k", gguf.TypeQ6_K: "mmq_q6_k",
}

// mmqpKernels names the pipelined kernels (mmqp_*) of the same types, and
// mmqwKernels their wide forms (mmqw_*: 256 threads, tiles of 128 tokens).
var mmqpKernels, mmqwKernels = renamedMMQ("mmqp"), renamedMMQ("mmqw")

func renamedMMQ(prefix string) map[gguf.GGMLType]string {
	m := make(map[gguf.GGMLType]string, len(mmqKernels))
	for t, fn := range mmqKernels {
		m[t] = prefix + strings.TrimPrefix(fn, "mmq")
	}
	return m
}

// mmqLayout marks, in Backend.lastVT, activations the workspace holds in
// the mmq layout rather than in vec-dot blocks: no real type carries this
// bit, so the mat-vec path never takes them for its own.
const mmqLayout gguf.GGMLType = 1 << 30

// MINFER_CUDA_MMQ picks the tensor-core kernels, for comparisons: "0"
// turns them off (the batched mat-vec), "plain" takes the kernels that
// load each k-step before decoding it (mmq_*) instead of the pipelined
// ones, "narrow" the pipelined kernels of 64-token tiles (mmqp_*) for
// every batch, "wide" those of 128-token tiles (mmqw_*) for every batch.
// By default a chunk of at least mmqWideMinTokens tokens takes mmqw_*,
// a shorter one mmqp_*: on an H100, the 8B-shaped Q4_K pp512 ran at
// 5749/5763 tok/s on mmqw_* against 4288/4258 on mmqp_*
// (bench/results/2026-12-06-s15-call1).
var (
	mmqDisabled = os.Getenv("MINFER_CUDA_MMQ") == "0"
	mmqPlain    = os.Getenv("MINFER_CUDA_MMQ") == "plain"
	mmqTiles    = map[string]int64{"narrow": 64, "wide": 128}[os.Getenv("MINFER_CUDA_MMQ")]
)

// mmqWideMinTokens is the shortest chunk the wide tiles take by default:
// one tile's worth, so no launch runs tiles mostly empty.
const mmqWideMinTokens = 128

// mmqKernel is the tensor-core kernel for a chunk of nt tokens over
// weights of type wt: its name, dynamic shared memory, tokens a tile and
// threads a block (mmqTiles, else by nt; the plain kernels where asked
// or where the pipelined tiles outgrow the device's shared memory).
func (b *Backend) mmqKernel(wt gguf.GGMLType, nt int64) (string, uint32, int64, int) {
	limit := b.dv.smemOptin - attentionStaticShared
	wide := mmqTiles == 128 || mmqTiles == 0 && nt >= mmqWideMinTokens
	if !mmqPlain && wide && mmqpShared(wt, 128) <= limit {
		return mmqwKernels[wt], uint32(mmqpShared(wt, 128)), 128, 256
	}
	if !mmqPlain && mmqpShared(wt, 64) <= limit {
		return mmqpKernels[wt], uint32(mmqpShared(wt, 64)), 64, 128
	}
	return mmqKernels[wt], 0, 64, 128
}

// mmqpRawBytes is the bytes of weight blocks one k-step of a pipelined
// kernel copies per row (rawf<T> in mma.cu: four 32-blocks, or the
// super-block holding the k-step).
var mmqpRawBytes = map[gguf.GGMLType]int{
	gguf.TypeQ4_0: 4 * 18, gguf.TypeQ4_1: 4 * 20, gguf.TypeQ8_0: 4 * 34,
	gguf.TypeQ3_K: 110, gguf.TypeQ4_K: 144, gguf.TypeQ5_K: 176, gguf.TypeQ6_K: 210,
}

// mmqpShared is a pipelined kernel's dynamic shared memory (mmqpmem<T, bn>
// in mma.cu) for tiles of bn tokens: the decoded weight tile, two stages
// of activations and of raw weight rows (one word more than the blocks
// for a 2-byte misalignment), the weights' scales, two stages of the
// activations' scales and sums, and d and dmin per row.
func mmqpShared(t gguf.GGMLType, bn int) int {
	const bm, ld, ngp, ng = 64, mmqKC + 16, mmqKC/16 + 1, mmqKC / 16
	rw := (mmqpRawBytes[t] + 2 + 3) / 4
	return bm*ld + 2*bn*ld + 2*bm*rw*4 + 2*bm*ngp*4 + 4*bn*ng*4 + 2*bm*4
}

// wantsLargeShared reports whether a kernel may be given more than the
// default 48 KiB of dynamic shared memory (flash attention, pipelined
// mat-muls, staged, pipelined and split mat-vecs).
func wantsLargeShared(name string) bool {
	return strings.HasPrefix(name, "fattn_") || strings.HasPrefix(name, "mmqp_") || strings.HasPrefix(name, "mmqw_") || strings.HasPrefix(name, "mvs_") || strings.HasPrefix(name, "mvp_") ||
		strings.HasPrefix(name, "mvk_")
}

// useMMQ reports whether the mat-mul n runs on the tensor-core kernels.
func useMMQ(n *graph.Node) bool {
	if mmqDisabled || n.Src[1].Rows() < mmqMinTokens {
		return false
	}
	_, ok := mmqKernels[n.Src[0].Type]
	return ok
}

// mmqGroupMax is how many mat-muls of one input one launch takes.
const mmqGroupMax = 3

// mmqGroup encodes nodes[0] and the mat-muls right after it that multiply
// the same activations by weights of the same type and row length (q/k/v,
// gate/up) as one quantization and one launch. It returns how many nodes
// it encoded: 0 when nodes[0] is not a tensor-core mat-mul.
func (b *Backend) mmqGroup(nodes []*graph.Node) (int, error) {
	n0 := nodes[0]
	if n0.Op != graph.OpMatMul || !useMMQ(n0) {
		return 0, nil
	}
	k := 1
	for k < len(nodes) && k < mmqGroupMax {
		n := nodes[k]
		if n.Op != graph.OpMatMul || n.Src[1] != n0.Src[1] || n.Src[0].Type != n0.Src[0].Type ||
			n.Src[0].Shape[0] != n0.Src[0].Shape[0] || n.Backend != n0.Backend {
			break
		}
		k++
	}
	group := nodes[:k]
	var ws, outs [mmqGroupMax]uintptr
	var rows [mmqGroupMax]int64
	for i, n := range group {
		var err error
		if ws[i], err = b.ptrOf(n.Src[0]); err != nil {
			return 0, fmt.Errorf("cuda: %s: %w", n, err)
		}
		if outs[i], err = b.ptrOf(n); err != nil {
			return 0, fmt.Errorf("cuda: %s: %w", n, err)
		}
		rows[i] = n.Src[0].Rows()
	}
	x, err := b.ptrOf(n0.Src[1])
	if err != nil {
		return 0, fmt.Errorf("cuda: %s: %w", n0, err)
	}
	if err := b.mmqMatMul(group, ws[:k], x, outs[:k]); err != nil {
		return 0, fmt.Errorf("cuda: %s: %w", n0, err)
	}
	return k, nil
}

// mmqActs is the activation layout of a tensor-core mat-mul over weights
// of type wt, rows of in elements, for T tokens: the vec-dot type, the row
// padded to kp (a multiple of the k-step), and the tokens of a chunk (as
// many as the workspace holds, at most T).
func (b *Backend) mmqActs(wt gguf.GGMLType, in, T int64) (vt gguf.GGMLType, kp, chunk int64, err error) {
	vt = quant.VecDotType(wt)
	kp = (in + mmqKC - 1) / mmqKC * mmqKC
	if vt == gguf.TypeQ8_K && kp != in {
		return 0, 0, 0, fmt.Errorf("%w: q8_K activations of %d elements", errUnsupported, in)
	}
	perTok := kp + 2*(kp/16)*4
	chunk = min(T, b.dv.workSize/perTok)
	if chunk < 1 {
		return 0, 0, 0, fmt.Errorf("%w: a row of %d activations outgrows the workspace", errUnsupported, in)
	}
	return vt, kp, chunk, nil
}

// mmqTarget reports whether nodes[j] is a tensor-core mat-mul that reads
// src, its input, in one chunk (so a kernel that produces src may write
// its activations into the workspace for it: mmqActsAt), with their
// vec-dot type and padded row.
func (b *Backend) mmqTarget(nodes []*graph.Node, j int, src *graph.Node) (gguf.GGMLType, int64, bool) {
	if j >= len(nodes) || b.off.quant {
		return 0, 0, false
	}
	m := nodes[j]
	if m.Op != graph.OpMatMul || m.Src[1] != src || m.Backend != src.Backend || !useMMQ(m) || m.Src[0].Shape[0] != src.Shape[0] {
		return 0, 0, false
	}
	T := src.Rows()
	vt, kp, chunk, err := b.mmqActs(m.Src[0].Type, src.Shape[0], T)
	if err != nil || chunk != T {
		return 0, 0, false
	}
	return vt, kp, true
}

// mmqActsAt is where a T-token chunk of activations with rows padded to
// kp lies in the workspace (mmqMatMul's layout): the int8 values, the
// scales, the scaled sums.
func (b *Backend) mmqActsAt(T, kp int64) (qx, xs, xm uintptr) {
	qx = b.dv.work
	xs = qx + uintptr(T*kp)
	xm = xs + uintptr(T*(kp/16)*4)
	return qx, xs, xm
}

// mmqMatMul runs the mat-muls of group (one input x, weights ws of one
// type and row length, outputs outs) on the tensor cores: the activations
// go to the workspace (int8 rows of kp bytes, then per 16 elements a float
// scale and a float scaled sum), in chunks of tokens when they outgrow it.
func (b *Backend) mmqMatMul(group []*graph.Node, ws []uintptr, x uintptr, outs []uintptr) error {
	dv, l := b.dv, &b.l
	n := group[0]
	wt := n.Src[0].Type
	in := n.Src[0].Shape[0]
	T := n.Src[1].Rows()
	for _, g := range group[1:] {
		if g.Src[0].Type != wt || g.Src[0].Shape[0] != in || g.Src[1].Rows() != T {
			return fmt.Errorf("%w: mat-muls of one launch differ in weights or tokens", errUnsupported)
		}
	}
	wrb, err := wt.RowBytes(in)
	if err != nil {
		return err
	}
	vt, kp, chunk, err := b.mmqActs(wt, in, T)
	if err != nil {
		return err
	}
	// Up to three weights: the row tiles of each, one after the other.
	var w3, o3 [mmqGroupMax]uintptr
	var rows3 [mmqGroupMax]int32
	var tiles [mmqGroupMax + 1]int64
	for i, g := range group {
		rows := g.Src[0].Rows()
		w3[i], rows3[i] = ws[i], i32(rows)
		tiles[i+1] = tiles[i] + (rows+63)/64
	}
	for i := len(group) + 1; i <= mmqGroupMax; i++ {
		tiles[i] = tiles[i-1]
	}
	for t0 := int64(0); t0 < T; t0 += chunk {
		nt := min(chunk, T-t0)
		fn, smem, bn, threads := b.mmqKernel(wt, nt)
		qx, xs, xm := b.mmqActsAt(nt, kp)
		if !(chunk == T && b.quantAtWork(n.Src[1], mmqLayout|vt)) {
			xin := x + uintptr(t0*in*4)
			switch vt {
			case gguf.TypeQ8_0, gguf.TypeQ8_1:
				sum := i32(0)
				if vt == gguf.TypeQ8_1 {
					sum = 1
				}
				err = dv.launch(l, "mmq_act_q8", [3]uint32{uint32((kp/32 + 7) / 8), uint32(nt), 1}, block1(256), 0, xin, qx, xs, xm, i32(in), i32(kp), sum)
			case gguf.TypeQ8_K:
				err = dv.launch(l, "mmq_act_q8k", [3]uint32{uint32((kp/256 + 7) / 8), uint32(nt), 1}, block1(256), 0, xin, qx, xs, xm, i32(in), i32(kp))
			default:
				err = fmt.Errorf("%w: mmq activations of type %s", errUnsupported, vt)
			}
			if err != nil {
				return err
			}
			b.lastQuant = nil
			if chunk == T {
				b.noteQuant(n.Src[1], mmqLayout|vt, 0)
			}
		}
		for i := range group {
			o3[i] = outs[i] + uintptr(t0*int64(rows3[i])*4)
		}
		grid := [3]uint32{uint32(tiles[mmqGroupMax]), uint32((nt + bn - 1) / bn), 1}
		if err := dv.launch(l, fn, grid, block1(threads), smem, w3[0], w3[1], w3[2], o3[0], o3[1], o3[2], rows3[0], rows3[1], rows3[2],
			i32(tiles[1]), i32(tiles[2]), qx, xs, xm, i32(in), i32(kp), i64(wrb), i32(nt)); err != nil {
			return err
		}
	}
	return nil
}
