package cuda

import (
	"math"
	"os"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
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
// (one token, batch, multi, norm + one token) and how many rows a warp of
// the one-token kernels (_1, _m, _n) takes (MVS_RPW_* of decode.cu; the
// batch kernels take one).
var stagedMatVec = map[gguf.GGMLType]struct {
	one, batch, multi, norm string
	rpw                     int64
}{
	gguf.TypeQ4_0: {"mvs_q4_0_1", "mvs_q4_0_b", "mvs_q4_0_m", "mvs_q4_0_n", 2},
	gguf.TypeQ8_0: {"mvs_q8_0_1", "mvs_q8_0_b", "mvs_q8_0_m", "mvs_q8_0_n", 1},
	gguf.TypeQ4_K: {"mvs_q4_k_1", "mvs_q4_k_b", "mvs_q4_k_m", "mvs_q4_k_n", 1},
	gguf.TypeQ6_K: {"mvs_q6_k_1", "mvs_q6_k_b", "mvs_q6_k_m", "mvs_q6_k_n", 1},
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

// mvsWarpsFromEnv is MINFER_CUDA_MVS_WARPS (1, 2, 4 or 8): the warps of a
// one-token staged mat-vec block; stagedWarps otherwise. Fewer warps, as
// many more blocks: a small mat-vec's rows spread over more SMs, and an
// SM holds several blocks whose copies overlap each other's sums.
func mvsWarpsFromEnv() int64 {
	switch os.Getenv("MINFER_CUDA_MVS_WARPS") {
	case "1":
		return 1
	case "2":
		return 2
	case "4":
		return 4
	}
	return stagedWarps
}

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

// normMatVec is a norm_quant launch's arguments, for mvs_*_n: the row of
// n floats at x (plus y, the residual add, whose sum goes to sum), its
// norm to nout, times nw to out2 (0: no weight mul), quantized (qt, xrb
// bytes) for the mat-vec.
type normMatVec struct {
	x, y, sum, nout, nw, out2 uintptr
	n, xrb                    int64
	eps                       float32
	qt                        int32
}

const (
	// mvnScratch is MVN_SCRATCH of decode.cu: the prologue's shared
	// scratch after the activations (8 doubles, the scale, a q8k_sh).
	mvnScratch = 80 + 4*(256+8+8+16)
	// mvnMaxN is MVN_MAXK·256: the longest row the prologue keeps in
	// registers.
	mvnMaxN = 32 * 256
	// normCounter is the workspace counter (after the split attention's
	// per-head ones) that finds an mvs_*_n launch's last block.
	normCounter = counterBytes/4 - 1
)

// normMatVec encodes norm_quant's work (f) together with the one-token
// mat-vec nodes[j] that reads its quantized output, as one mvs_*_n
// launch, when the weight type has a staged kernel that fits, the row is
// short enough, and the mat-vec's output does not lie on x or y (every
// block reads them; the last block writes the norm's outputs, after all
// have). It reports whether it did.
func (b *Backend) normMatVec(nodes []*graph.Node, j int, tokens int64, f normMatVec) (bool, error) {
	if b.mvV1 || b.off.mv || b.off.normMV || tokens != 1 || j >= len(nodes) || f.n > mvnMaxN {
		return false, nil
	}
	m := nodes[j]
	wt := m.Src[0].Type
	s, ok := stagedMatVec[wt]
	if !ok || m.Src[0].Rows() > math.MaxInt32 || quant.VecDotType(wt) == gguf.TypeF32 {
		return false, nil
	}
	w, err := b.ptrOf(m.Src[0])
	if err != nil {
		return false, err
	}
	out, err := b.ptrOf(m)
	if err != nil {
		return false, err
	}
	wrb, err := wt.RowBytes(f.n)
	if err != nil {
		return false, err
	}
	smem, ok := stagedFits(wrb, f.xrb, 1, s.rpw, b.stagedLimit()-2*mvnScratch, w)
	if !ok {
		return false, nil
	}
	smem += mvnScratch
	rows := m.Src[0].Rows()
	fb := f.n * 4
	// An output of the norm chain that the mat-vec's output overlaps is
	// dead: the allocator gave its bytes to the mat-mul, placed after the
	// chain, so nothing after the chain reads it; block 0 skips it (the
	// mat-mul's own input, out2, cannot be one).
	for _, o := range []*uintptr{&f.sum, &f.nout, &f.out2} {
		if *o != 0 && overlaps(out, rows*4, *o, fb) {
			*o = 0
		}
	}
	// The mat-vec's output is written while other blocks may still read x
	// and y (the norm's outputs only once every block has read them).
	if overlaps(out, rows*4, f.x, fb) || (f.y != 0 && overlaps(out, rows*4, f.y, fb)) {
		return false, nil
	}
	per := stagedRows(1, s.rpw)
	counter := b.dv.counters + uintptr(4*normCounter)
	return true, b.dv.launch(&b.l, s.norm, grid1((rows+per-1)/per), block1(32*stagedWarps), uint32(smem),
		w, out, i32(rows), i32(blocksPerRow(wt, f.n)), i64(wrb), i64(f.xrb), f.x, f.y, f.sum, f.nout, f.nw, f.out2, b.dv.work,
		i32(f.n), f.eps, f.qt, counter)
}
