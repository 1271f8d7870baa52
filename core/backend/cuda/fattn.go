package cuda

import (
	"fmt"
	"os"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/gguf"
)

// Prefill attention, flash style: for more than one query over an F16
// cache, the tensor-core kernels of kernels/fattn_mma.cu for head sizes 64
// and 128 (fattnMMAHeadDims; within the ops' NMSE bound of the CPU; in a
// model with quantized weights only for long batches, fattnMMAFor), and
// for the other head sizes, short batches of quantized models, or all
// with MINFER_CUDA_FATTN=exact, the
// kernels of kernels/fattn.cu, bit for bit the CPU's: a block takes a few
// query rows of one KV head (256 output elements) and walks the cache in
// 64-position tiles through shared memory, skipping the tiles the mask
// hides from all its rows (read once, up front, into a bit a tile:
// fattnSeenShared); one thread, or a pair (fattnSplit), computes a score,
// or eight threads all the rows' scores of a position (fattnOct), and
// each thread owns its P·V chains across the tiles, so every float
// chain runs in the CPU's order. Three passes (the scores and row maxima
// over the tiles, the softmax sums, the weighted values over the tiles),
// the next tile's K and V in flight while one is computed; the scores of
// the first pass stay in shared memory when they fit beside the blocks an
// SM the kernel is built for (fattnKeepShared), and the softmax then runs
// once over them; else passes 1 and 2 compute them again. Decode (one
// query) keeps the kernels of decode.go.

// fattnHeadDims are the head sizes fattn.cu is instantiated for.
var fattnHeadDims = map[int]string{64: "fattn_f16_64", 96: "fattn_f16_96", 128: "fattn_f16_128", 256: "fattn_f16_256"}

// fattnMMAHeadDims are the head sizes fattn_mma.cu is instantiated for.
var fattnMMAHeadDims = map[int]string{64: "fattn_mma_64", 128: "fattn_mma_128"}

// fattnMode is MINFER_CUDA_FATTN, read in one place (parseFattnMode), for
// comparisons and diagnosis:
//   - "0" (off): no flash kernels (the node-by-node attention);
//   - "exact": every head size on the exact kernels of fattn.cu, none on
//     the tensor-core ones; so do the exact kernels' own options, "nokeep"
//     (the scores computed again in every pass, not kept in shared
//     memory) and "narrow" (head size 128 on the 256-thread, two-row
//     kernel instead of fattn_f16_128w: 512 threads, four query rows a
//     block, one block an SM, each K/V tile serving four rows; the same
//     chains, the same bits: 1.50 → 1.11 ms a block of an 8B-shaped model
//     at 512 tokens, bench/results/2026-12-02-s11-call1; since both
//     compute scores eight threads a position, 598 against 593 µs, and the
//     8B pp512 within 1 %, bench/results/2026-12-07-s22-call4);
//   - "mma": the tensor-core kernels for every model and batch, quantized
//     weights or not (fattnMMAFor: by default a quantized model's short
//     batches keep the exact kernels): 1.11 ms → 106 µs a
//     block of the 8B shape at 512 tokens, 508 → 90 µs for the 1.1B preset
//     (head size 64); 4.09k → 5.52k tok/s prefill on the whole 8B Q4_K
//     (bench/results/2026-12-02-s12-fa-call2, -call3).
type fattnMode struct{ off, exact, mmaAll, noKeep, narrow bool }

func parseFattnMode(v string) fattnMode {
	return fattnMode{
		off:    v == "0",
		exact:  v == "exact" || v == "nokeep" || v == "narrow",
		mmaAll: v == "mma",
		noKeep: v == "nokeep",
		narrow: v == "narrow",
	}
}

// fattnModeFromEnv is MINFER_CUDA_FATTN parsed.
func fattnModeFromEnv() fattnMode { return parseFattnMode(os.Getenv("MINFER_CUDA_FATTN")) }

// fattnDisabled: MINFER_CUDA_FATTN=0.
var fattnDisabled = fattnModeFromEnv().off

// fattnRows is the query rows one block of 256 threads takes for head
// size hd (FA_R in fattn.cu).
func fattnRows(hd int) int {
	switch hd {
	case 64:
		return 4
	case 256:
		return 1
	}
	return 2
}

// fattnKernel is a flash kernel: its name, the query rows and threads of
// a block, and the blocks an SM it is built for (its launch bounds).
type fattnKernel struct {
	name                 string
	rows, threads, perSM int
}

// fattnFor is the flash kernel for head size hd.
func (b *Backend) fattnFor(hd int) fattnKernel {
	if hd == 128 && b.fattnWide {
		return fattnKernel{"fattn_f16_128w", 4, 512, 1}
	}
	perSM := 2
	if hd == 256 {
		perSM = 1
	}
	return fattnKernel{fattnHeadDims[hd], fattnRows(hd), 256, perSM}
}

// fattnShared is the dynamic shared memory of kernel k for head size hd
// (mirrors fattn.cu), before the seen bits: a K tile (64 positions as
// float, rows padded by four, or by eight where two threads share a score,
// fattnSplit, or eight threads a position's, fattnOct), two V tiles (F16,
// padded by eight: this tile's and the next one in flight) and the next K
// tile's halves as copied, which the 64 chains of each output element
// (stride 65) reuse at the end; then q, the tile's scores, and per row the
// maximum, 1/sum and the float64 sum.
func fattnShared(hd int, k fattnKernel) int {
	r, ks := k.rows, hd+4
	if fattnSplit(hd, k) || fattnOct(hd, k) {
		ks = hd + 8
	}
	tiles := 64*ks*4 + 2*64*(hd+8)*2 + 64*hd*2
	chains := r * hd * 65 * 4
	a := (max(tiles, chains) + 15) / 16 * 16
	return a + (r*hd+r*64+2*r)*4 + r*8
}

// fattnOct reports whether kernel k for head size hd computes a tile's
// scores by eight threads a position, each thread two of a score's 16
// lanes for all the rows of the block (OCT in fattn.cu: two or four rows,
// head sizes 64 and 128).
func fattnOct(hd int, k fattnKernel) bool { return hd%64 == 0 && (k.rows == 4 || k.rows == 2) }

// fattnSplit reports whether kernel k for head size hd computes each score
// by two threads (SPLIT in fattn.cu: it has a thread pair for each of a
// tile's scores, and is no fattnOct kernel).
func fattnSplit(hd int, k fattnKernel) bool {
	return !fattnOct(hd, k) && k.threads >= 2*k.rows*64
}

// fattnSeenShared is the bit a 64-position tile (some row of the block
// sees it) that follows fattnShared for a cache of kvLen positions.
func fattnSeenShared(kvLen int) int { return ((kvLen+63)/64 + 31) / 32 * 4 }

// fattnMMAShared is fattn_mma's dynamic shared memory for head size hd
// over a cache of kvLen positions (mirrors fattn_mma.cu): two K and two V
// tiles and the block's q rows, each 64 rows of hd+8 halves, then a 64-bit
// mask of the seen positions per 64-position tile.
func fattnMMAShared(hd, kvLen int) int { return 5*64*(hd+8)*2 + (kvLen+63)/64*8 }

// fattnMMAFor reports whether attention of T query tokens and head size
// hd over kvLen positions runs on the tensor-core kernels (its name). The
// tensor-core kernels are within 2e-10 NMSE of the CPU's attention
// (TestFlashAttention) and leave an F16 model's logits within 1e-9 of the
// CPU's, but not the CPU's bits; in a model with quantized weights the
// next activation quantization turns a rare last-bit difference into
// another int8 value, and the small quantized test models' logits then
// moved by 9e-5 to 1.6e-4 NMSE from the CPU's (bench/results/
// 2026-12-02-s12-fa-call1) — past the 1e-4 that a quantized model's logits
// are held to against llama.cpp's. So where no quantized weight is on
// this backend they take every batch; where one is, the batches whose
// attention costs little (fewer than fattnMMACells query-position pairs:
// a short prompt, a chat's short turn; every reference prompt) keep the
// exact kernels, the CPU's bits, and the longer ones take the tensor
// cores, whose attention there is most of what the exact kernels would
// add (the 8B Q4_K pp512: 8895–8907 → 11063–11108 tok/s on an H100,
// bench/results/2026-12-07-s26-call2), held to mmaQuantBound of the CPU's
// logits (core's TestGPUPrefillMatchesCPU, its long modes).
// MINFER_CUDA_FATTN=exact keeps the CPU's bits at every length, =mma takes
// the tensor cores at every length.
func (b *Backend) fattnMMAFor(hd, T, kvLen int) (string, bool) {
	name, ok := fattnMMAHeadDims[hd]
	b.mu.Lock()
	quantized := b.quantWeights
	b.mu.Unlock()
	long := int64(T)*int64(kvLen) >= fattnMMACells
	return name, ok && !b.fattnExact && (b.fattnMMAAll || !quantized || long) && fattnMMAShared(hd, kvLen) <= b.dv.smemOptin-attentionStaticShared
}

// fattnMMACells is the query-position pairs (T · kvLen, kvLen the
// graph's span class: 256 positions a class) from which a model with
// quantized weights takes the tensor-core prefill attention: a batch of
// 128 tokens in a fresh context, or 32 over a cache of 1024 positions.
// The exact kernels' share of a prefill grows with the batch's tokens and
// the cache (606 µs a block of the 8B at 512 × 512, 25 % of its pp512 in
// bench/results/2026-12-07-s22-call3); below this it stays a few percent.
const fattnMMACells = 128 * 256

// FlashStats counts the prefill attentions queued on each kind of flash
// kernel (for tests: which kernels a prompt's attention took).
type FlashStats struct{ TensorCore, Exact int }

// FlashStats returns the counts since the backend was made.
func (b *Backend) FlashStats() FlashStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.flash
}

// useFlash reports whether attention node n runs on the flash kernels.
func (b *Backend) useFlash(n *graph.Node) bool {
	q := n.Src[0]
	_, ok := fattnHeadDims[int(q.Shape[0])]
	if !ok || fattnDisabled || q.Shape[2] <= 1 || n.Src[1].Type != gguf.TypeF16 {
		return false
	}
	p, err := graph.ParamsOf[graph.AttentionParams](n)
	if err != nil {
		return false
	}
	fk := b.fattnFor(int(q.Shape[0]))
	return fattnShared(int(q.Shape[0]), fk)+fattnSeenShared(p.KVLen) <= b.dv.smemOptin-attentionStaticShared
}

// flashAttention queues attention node n (q, k cache, v cache, mask at
// src[0..3]) on the flash kernels, after attn_used (the cells in use fix
// the CPU's padded length, as for attention_f16). The tensor-core kernels
// copy the caches 16 bytes at a time: caches at other alignments (windows
// of a buffer) take the exact kernels.
func (b *Backend) flashAttention(n *graph.Node, p graph.AttentionParams, src [4]uintptr, out uintptr) error {
	q := n.Src[0]
	hd, heads, T := int(q.Shape[0]), q.Shape[1], q.Shape[2]
	if p.KVHeads <= 0 || heads%int64(p.KVHeads) != 0 {
		return fmt.Errorf("%w: %d heads over %d KV heads", errUnsupported, heads, p.KVHeads)
	}
	group := heads / int64(p.KVHeads)
	used, err := b.attnUsedOnce(n.Src[3], src[3], T, p.KVLen)
	if err != nil {
		return err
	}
	if name, ok := b.fattnMMAFor(hd, int(T), p.KVLen); ok && (src[1]|src[2])%16 == 0 {
		b.countFlash(true)
		grid := [3]uint32{uint32((T*group + 63) / 64), uint32(p.KVHeads), 1}
		return b.dv.launch(&b.l, name, grid, block1(128), uint32(fattnMMAShared(hd, p.KVLen)),
			src[0], src[1], src[2], src[3], used, out, i32(T), i32(heads), i32(p.KVHeads), i32(p.KVLen), p.Scale, p.SoftCap)
	}
	b.countFlash(false)
	fk := b.fattnFor(hd)
	rows := int64(fk.rows)
	sm, keep := fattnShared(hd, fk)+fattnSeenShared(p.KVLen), int32(0)
	if ks := sm + fattnKeepShared(fk.rows, p.KVLen); !b.fattnNoKeep && ks <= b.dv.smemOptin/fk.perSM-1024 {
		sm, keep = ks, 1
		b.fattnKeeps++
	}
	grid := [3]uint32{uint32((T*group + rows - 1) / rows), uint32(p.KVHeads), 1}
	return b.dv.launch(&b.l, fk.name, grid, block1(fk.threads), uint32(sm),
		src[0], src[1], src[2], src[3], used, out, i32(T), i32(heads), i32(p.KVHeads), i32(p.KVLen), p.Scale, p.SoftCap, keep)
}

func (b *Backend) countFlash(tensorCore bool) {
	b.mu.Lock()
	if tensorCore {
		b.flash.TensorCore++
	} else {
		b.flash.Exact++
	}
	b.mu.Unlock()
}

// fattnKeepShared is the shared memory that keeps the scores of a block of
// rows query rows between the flash kernel's passes (rows × kvLen rounded
// up to 64 floats). The kernels keep them when that still leaves the
// blocks an SM they are built for (else passes 1 and 2 compute the scores
// again).
func fattnKeepShared(rows, kvLen int) int { return rows * ((kvLen + 63) / 64 * 64) * 4 }

// usedMask is the mask whose cells in use the word at device.usedAt holds
// (attnUsedOnce), valid through one encode: every layer's attention of a
// step reads the same mask node, whose bytes stay as they are while it is
// read (the allocator reuses a buffer only after its last reader).
type usedMask struct {
	node   *graph.Node
	mask   uintptr
	tokens int64
	kvLen  int
}

// attnUsedOnce is the address of the cells in use of the mask node at
// mask (tokens rows of kvLen), queuing attn_used for it unless this encode
// has already done so for the same mask.
func (b *Backend) attnUsedOnce(node *graph.Node, mask uintptr, tokens int64, kvLen int) (uintptr, error) {
	m := usedMask{node, mask, tokens, kvLen}
	if b.usedFor == m {
		b.usedReuses++
		return b.dv.usedAt, nil
	}
	b.usedFor = usedMask{}
	if err := b.attnUsed(mask, tokens, kvLen, b.dv.usedAt); err != nil {
		return 0, err
	}
	b.usedFor = m
	return b.dv.usedAt, nil
}

// attnUsed queues attn_used over a mask of tokens rows of kvLen: *used is
// zeroed, then the blocks fold their maxima into it.
func (b *Backend) attnUsed(mask uintptr, tokens int64, kvLen int, used uintptr) error {
	if err := b.dv.memset(used, 4); err != nil {
		return err
	}
	blocks := min((tokens*int64(kvLen)+1023)/1024, int64(2*b.dv.sms))
	return b.dv.launch(&b.l, "attn_used", grid1(max(blocks, 1)), block1(1024), 0, mask, i32(tokens), i32(kvLen), used)
}
