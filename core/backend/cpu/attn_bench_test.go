package cpu

import (
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
)

// BenchmarkAttentionDecode: one decode row of the 1B synth model's
// attention (32 q heads, 4 KV heads, head dim 64) over an F16 cache of
// 1536 cells with used of them in use, 1 and 2 threads: one head per job (the one-head path),
// attnGroupSize's choice, and 2, 4 or 8 heads per job.
func BenchmarkAttentionDecode(b *testing.B) {
	const headDim, heads, kvHeads, kvLen = 64, 32, 4, 1536
	r := rand.New(rand.NewSource(1))
	kvRow := headDim * kvHeads
	k16, v16 := make([]uint16, (kvLen+32)*kvRow), make([]uint16, (kvLen+32)*kvRow)
	for i := range k16 {
		k16[i] = quant.F32ToF16(float32(r.NormFloat64()))
		v16[i] = quant.F32ToF16(float32(r.NormFloat64()))
	}
	kc, vc := u16bytes(k16), u16bytes(v16)
	q := randRow(r, heads*headDim, 1)
	out := make([]float32, len(q))
	n := &graph.Node{Op: graph.OpAttention, Type: gguf.TypeF32,
		Src: [4]*graph.Node{
			{Shape: [4]int64{headDim, heads, 1, 1}},
			{Type: gguf.TypeF16}, {Type: gguf.TypeF16}}}
	p := graph.AttentionParams{Scale: 0.125, KVHeads: kvHeads, KVLen: kvLen}
	for _, threads := range []int{1, 2} {
		c := New(threads)
		for _, used := range []int{8, 64, 160, 192, 1024, 1500} {
			mask := make([]float32, kvLen)
			for j := used; j < kvLen; j++ {
				mask[j] = float32(math.Inf(-1))
			}
			for _, gs := range []int{1, 0, 2, 4, 8} {
				name := fmt.Sprintf("t%d/used%d/heads%d", threads, used, gs)
				switch gs {
				case 0:
					name = fmt.Sprintf("t%d/used%d/grouped", threads, used)
				case 1:
					name = fmt.Sprintf("t%d/used%d/perhead", threads, used)
				}
				b.Run(name, func(b *testing.B) {
					attnPerHead, attnGroupForce = gs == 1, gs
					defer func() { attnPerHead, attnGroupForce = false, 0 }()
					for i := 0; i < b.N; i++ {
						if err := c.attention(n, p, out, q, kc, vc, mask); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		}
		c.Close()
	}
}
