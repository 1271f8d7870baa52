package cuda

import (
	"fmt"
	"os"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/gguf"
)

// Prefill attention, flash style (kernels/fattn.cu): for more than one
// query over an F16 cache, a block takes 64 query rows of one KV head and
// walks the cache in tiles through shared memory, skipping the tiles the
// mask hides from all its rows. Decode (one query) keeps the attention
// kernel of ops.cu.

// fattnHeadDims are the head sizes fattn.cu is instantiated for.
var fattnHeadDims = map[int]string{64: "fattn_f16_64", 96: "fattn_f16_96", 128: "fattn_f16_128", 256: "fattn_f16_256"}

// fattnDisabled turns the flash kernels off (MINFER_CUDA_FATTN=0), for
// comparisons.
var fattnDisabled = os.Getenv("MINFER_CUDA_FATTN") == "0"

// fattnRows is the query rows one block takes (FA_ROWS in fattn.cu).
const fattnRows = 64

// fattnShared is the kernels' dynamic shared memory for head size hd: q
// (64 rows, as float), a K tile (64 rows as float, padded by four), a V
// tile (F16), and each warp's 8×64 weights.
func fattnShared(hd int) int {
	return fattnRows*hd*4 + 64*(hd+4)*4 + 64*hd*2 + 8*8*64*4
}

// useFlash reports whether attention node n runs on the flash kernels.
func (b *Backend) useFlash(n *graph.Node) bool {
	q := n.Src[0]
	_, ok := fattnHeadDims[int(q.Shape[0])]
	return ok && !fattnDisabled && q.Shape[2] > 1 && n.Src[1].Type == gguf.TypeF16 &&
		fattnShared(int(q.Shape[0])) <= b.dv.smemOptin-attentionStaticShared
}

// flashAttention queues attention node n (q, k cache, v cache, mask at
// src[0..3]) on the flash kernels.
func (b *Backend) flashAttention(n *graph.Node, p graph.AttentionParams, src [4]uintptr, out uintptr) error {
	q := n.Src[0]
	hd, heads, T := int(q.Shape[0]), q.Shape[1], q.Shape[2]
	if p.KVHeads <= 0 || heads%int64(p.KVHeads) != 0 {
		return fmt.Errorf("%w: %d heads over %d KV heads", errUnsupported, heads, p.KVHeads)
	}
	group := heads / int64(p.KVHeads)
	grid := [3]uint32{uint32((T*group + fattnRows - 1) / fattnRows), uint32(p.KVHeads), 1}
	return b.dv.launch(&b.l, fattnHeadDims[hd], grid, block1(256), uint32(fattnShared(hd)),
		src[0], src[1], src[2], src[3], out, i32(T), i32(heads), i32(p.KVHeads), i32(p.KVLen), p.Scale, p.SoftCap)
}
