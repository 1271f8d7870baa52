package cuda

import (
	"os"

	"github.com/minfer/minfer/gguf"
)

// The staged mat-vecs (decode.cu's mvs_* kernels, the default): the
// mvf_* kernels' arithmetic, bit for bit, over weight rows and
// activations first copied to shared memory with 16-byte loads.
// MINFER_CUDA_MV=v1 keeps the mvf_* kernels (comparisons, diagnosis).

// mvV1FromEnv reports whether MINFER_CUDA_MV asks for the v1 (unstaged)
// mat-vecs.
func mvV1FromEnv() bool { return os.Getenv("MINFER_CUDA_MV") == "v1" }

// stagedMatVec names the mvs_* kernels of each weight type of fastMatVec
// (one token, batch, multi) and how many rows a warp of the one-token
// kernels (_1, _m, _w and the tails) takes (MVS_RPW_* of decode.cu; the batch
// kernels take one).
var stagedMatVec = map[gguf.GGMLType]struct {
	one, batch, multi, swiglu string
	rpw                       int64
}{
	gguf.TypeQ4_0: {"mvs_q4_0_1", "mvs_q4_0_b", "mvs_q4_0_m", "mvs_q4_0_w", 2},
	gguf.TypeQ8_0: {"mvs_q8_0_1", "mvs_q8_0_b", "mvs_q8_0_m", "mvs_q8_0_w", 1},
	gguf.TypeQ4_K: {"mvs_q4_k_1", "mvs_q4_k_b", "mvs_q4_k_m", "mvs_q4_k_w", 1},
	gguf.TypeQ6_K: {"mvs_q6_k_1", "mvs_q6_k_b", "mvs_q6_k_m", "mvs_q6_k_w", 1},
}

const (
	// stagedWarps is MVS_ROWS of decode.cu: warps per block.
	stagedWarps = 8
	// stagedBatch is the tokens of one grid row of an mvs_*_b launch.
	stagedBatch = 8
)

// stagedRows is the weight rows of an mvs_* block: rpw per warp for one
// token, one per warp for a batch.
func stagedRows(nt, rpw int64) int64 {
	if nt > 1 {
		return stagedWarps
	}
	return stagedWarps * rpw
}

// stagedShared is the dynamic shared memory of an mvs_* launch over rows
// of wrb bytes and activation rows of xrb bytes for nt tokens: the
// block's weight rows, then one token's activations rounded up to 16
// bytes, or a batch's up to stagedBatch rows.
func stagedShared(wrb, xrb, nt, rpw int64) int64 {
	if nt > 1 {
		return stagedRows(nt, rpw)*wrb + min(nt, stagedBatch)*xrb
	}
	return stagedRows(nt, rpw)*wrb + (xrb+15)&^15
}

// stagedFits reports whether the staged kernels take a mat-vec with
// weights at w (every weight's address for a multi launch) in rows of wrb
// bytes and nt tokens of activations of xrb bytes in the workspace (rpw
// rows a warp for one token), with
// limit bytes of dynamic shared memory per block, and how much they use.
// The 16-byte copies need the weights, the row length and (for a batch,
// whose tokens' rows are copied as one span) the activation row length
// 16-byte aligned; the workspace itself is. Only half the limit is taken,
// so that two blocks share an SM and one's copies overlap the other's
// sums.
func stagedFits(wrb, xrb, nt, rpw int64, limit int64, ws ...uintptr) (int64, bool) {
	if wrb%16 != 0 || (nt > 1 && xrb%16 != 0) {
		return 0, false
	}
	for _, w := range ws {
		if w%16 != 0 {
			return 0, false
		}
	}
	smem := stagedShared(wrb, xrb, nt, rpw)
	return smem, smem <= limit/2
}

// oneFits is stagedFits for one token's mvs_*_1, mvs_*_m and tail
// launches of blocks of warps warps (b.mvsWarps; the kernels take the
// count from the block size).
func oneFits(wrb, xrb, rpw, warps, limit int64, ws ...uintptr) (int64, bool) {
	if wrb%16 != 0 {
		return 0, false
	}
	for _, w := range ws {
		if w%16 != 0 {
			return 0, false
		}
	}
	smem := warps*rpw*wrb + (xrb+15)&^15
	return smem, smem <= limit/2
}

// pipedMatVec names the pipelined one-token mat-vecs of decode.cu
// (mvp_*_1: mvs_*_1's values, the row streamed through a ring of chunks
// of eight blocks) and their weight types' block bytes.
var pipedMatVec = map[gguf.GGMLType]struct {
	one        string
	blockBytes int64
}{
	gguf.TypeQ4_K: {"mvp_q4_k_1", 144},
	gguf.TypeQ6_K: {"mvp_q6_k_1", 210},
}

const (
	// pipedStages is MVP_S of decode.cu: the chunks of a warp's ring.
	pipedStages = 4
	// pipedMinBlocks is the shortest row (in blocks) the pipelined
	// kernels take: more chunks than the ring holds. Shorter rows fit
	// whole, and mvs_*_1 copies them at once.
	pipedMinBlocks = 8*pipedStages + 1
)

// pipedShared is mvp_*_1's dynamic shared memory: one token's
// activations (xrb bytes, 16-byte rounded), then each of warps rings of
// pipedStages chunks of eight blocks of blockBytes.
func pipedShared(xrb, blockBytes, warps int64) int64 {
	return (xrb+15)&^15 + warps*pipedStages*8*blockBytes
}

// pipedKernel is the mvp_*_1 launch for one token over weights of type wt
// at w in rows of wrb bytes and activations of xrb bytes, when the type
// has one, the row is long enough (pipedMinBlocks), the copies' 16-byte
// alignment holds and the shared memory fits half the staged limit (two
// blocks an SM at least); ok false otherwise (MINFER_CUDA_DECODE=mvpipe:
// always).
func (b *Backend) pipedKernel(wt gguf.GGMLType, w uintptr, wrb, xrb, rows int64) (mvLaunch, bool) {
	p, ok := pipedMatVec[wt]
	if !ok || b.off.mvPipe || wrb%16 != 0 || w%16 != 0 || wrb/p.blockBytes < pipedMinBlocks {
		return mvLaunch{}, false
	}
	warps := b.warpsFor()
	smem := pipedShared(xrb, p.blockBytes, warps)
	if smem > b.stagedLimit()/2 {
		return mvLaunch{}, false
	}
	return mvLaunch{p.one, warps, 32 * int(warps), uint32(smem)}, true
}

// splitMatVec names the split one-token mat-vecs of decode.cu (mvk_*_1:
// mvs_*_1's values, each row's blocks split in slices of eight across the
// warps of a block of mvkRows rows, the chain over a row's block
// values run in shared memory; the same with the suffix r2 or r8, two or
// eight rows a block: defaultSplitRows picks) and their weight types' block bytes.
var splitMatVec = map[gguf.GGMLType]struct {
	one        string
	blockBytes int64
}{
	gguf.TypeQ4_K: {"mvk_q4_k_1", 144},
	gguf.TypeQ6_K: {"mvk_q6_k_1", 210},
}

const (
	// mvkRows is MVK_R of decode.cu: the weight rows of an
	// mvk_*_1 block (mvk_*_1r2 and mvk_*_1r8: two and eight).
	mvkRows = 4
	// defaultSplitRows is the rows of the blocks the launches take (two:
	// the 8B's ffn_down decoded 361.5 tok/s with them on an H100, 351.0
	// with four, 347.2 with eight, 356.6 with the pipelined mvp_*_1 —
	// bench/results/2026-12-06-s19-call2).
	defaultSplitRows = 2
	// splitMaxWarps bounds an mvk_* block's warps (their
	// __launch_bounds__(256, ·)); longer rows loop, a warp taking every
	// splitMaxWarps-th slice.
	splitMaxWarps = 8
)

// splitWarps is the warps of an mvk_* block over rows of nblk blocks: one
// slice of eight blocks a warp, at most splitMaxWarps.
func splitWarps(nblk int64) int64 { return min((nblk+7)/8, splitMaxWarps) }

// splitShared is mvk_*_1's dynamic shared memory: each of warps warps'
// slices of the block's rows rows (eight blocks of blockBytes each), then
// the rows' block values (rows·nblk floats).
func splitShared(nblk, blockBytes, warps, rows int64) int64 {
	return warps*rows*8*blockBytes + rows*nblk*4
}

// splitRowsFromEnv is MINFER_CUDA_MVK_ROWS (2, 4 or 8): the rows of a
// split mat-vec block, for comparisons; defaultSplitRows otherwise.
func splitRowsFromEnv() int64 {
	switch os.Getenv("MINFER_CUDA_MVK_ROWS") {
	case "2":
		return 2
	case "4":
		return mvkRows
	case "8":
		return 8
	}
	return defaultSplitRows
}

// splitName is the mvk_* kernel of p for blocks of rows rows.
func splitName(one string, rows int64) string {
	switch rows {
	case 2:
		return one + "r2"
	case 8:
		return one + "r8"
	}
	return one
}

// splitKernel is the mvk_*_1 launch for one token over weights of type wt
// at w in rows of wrb bytes (its warps load the activations themselves: no
// staging to size), when the type has
// one, the row is as long as the pipelined kernel's (pipedMinBlocks), the
// copies' 16-byte alignment holds (a Q6_K row then has a multiple of
// eight blocks: whole slices) and the shared memory fits half the staged
// limit; ok false otherwise (MINFER_CUDA_DECODE=mvsplit: always).
func (b *Backend) splitKernel(wt gguf.GGMLType, w uintptr, wrb int64) (mvLaunch, bool) {
	p, ok := splitMatVec[wt]
	if !ok || b.off.mvSplit || wrb%16 != 0 || w%16 != 0 || wrb/p.blockBytes < pipedMinBlocks {
		return mvLaunch{}, false
	}
	nblk, per := wrb/p.blockBytes, b.splitRows
	if per != 2 && per != mvkRows && per != 8 {
		per = defaultSplitRows
	}
	warps := splitWarps(nblk)
	smem := splitShared(nblk, p.blockBytes, warps, per)
	if smem > b.stagedLimit()/2 {
		return mvLaunch{}, false
	}
	return mvLaunch{splitName(p.one, per), per, 32 * int(warps), uint32(smem)}, true
}

// mvsWarpsFromEnv is MINFER_CUDA_MVS_WARPS (1, 2, 4 or 8): the warps of
// every one-token staged mat-vec block; 0 (unset or anything else): by
// oneTokenWarps (warpsFor). Fewer warps, as many more blocks: a small
// mat-vec's rows spread over more SMs, and an SM holds several blocks
// whose copies overlap each other's sums.
func mvsWarpsFromEnv() int64 {
	switch os.Getenv("MINFER_CUDA_MVS_WARPS") {
	case "1":
		return 1
	case "2":
		return 2
	case "4":
		return 4
	case "8":
		return 8
	}
	return 0
}

// warpsFor is the warps of a one-token staged or pipelined mat-vec block:
// MINFER_CUDA_MVS_WARPS where set, else oneTokenWarps. On an H100, four
// warps everywhere decoded the 1.1B (2048-wide) 6-10 % faster than eight
// and the 8B 1-3 % slower in session 14 (bench/results/2026-12-04-s14-call3),
// so blocks of eight took the launches of two blocks an SM or more; with
// the queued step and today's kernels four everywhere reads 1.1B 980.6 →
// 987.6 tok/s (medians of four alternating pairs, every pair faster) and
// the 8B 373.6 → 375.1 (two pairs), bench/results/2026-12-07-s26-call3.
func (b *Backend) warpsFor() int64 {
	if b.mvsWarps != 0 {
		return b.mvsWarps
	}
	return oneTokenWarps
}

// oneTokenWarps: the warps of a one-token mat-vec block (warpsFor).
const oneTokenWarps = 4

// mvLaunch is the kernel and block shape of one mat-vec launch.
type mvLaunch struct {
	fn string
	// rows: weight rows per block; threads per block; smem: dynamic
	// shared memory bytes.
	rows    int64
	threads int
	smem    uint32
}

// stagedLimit is the dynamic shared memory an mvs_* launch may ask for.
func (b *Backend) stagedLimit() int64 { return int64(b.dv.smemOptin - attentionStaticShared) }

// normCounter is the workspace counter (after the split attention's
// per-head ones) that finds a tail launch's last block.
const normCounter = counterBytes/4 - 1
