package cpu

import (
	"math/rand"
	"sort"
	"testing"
	"time"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
)

// BenchmarkPromptLayouts: a prompt step's mat-muls (128 tokens, two
// threads) over ~100 MB of TinyLlama-gate-shaped Q4_0 weights
// (5632 × 2048, read from memory as a prefill reads them), in the x8 and
// the col16 layouts, alternating round by round in one process; the
// median and best ms of each over 15 rounds are logged (b.N is ignored:
// run with -benchtime 1x).
func BenchmarkPromptLayouts(b *testing.B) {
	const in, rows, tokens, wt = 2048, 5632, 128, gguf.TypeQ4_0
	k, err := quant.NewKernel(wt, in)
	if err != nil {
		b.Fatal(err)
	}
	if k.Layout() != quant.LayoutCol16 {
		b.Skip("no col16 layout at this level")
	}
	rb := k.WeightRowBytes()
	mats := 100e6 / (rows * rb)
	r := rand.New(rand.NewSource(1))
	w := quantRows(b, r, wt, in, rows)
	var x8s, c16s [][]byte
	for m := 0; m < mats; m++ {
		x8s = append(x8s, toLayout(k, quant.LayoutX8, w))
		c16s = append(c16s, toLayout(k, quant.LayoutCol16, w))
	}
	x := randRow(r, in*tokens, 1)
	out := make([]float32, rows*tokens)
	c := New(2)
	defer c.Close()
	n := &graph.Node{Op: graph.OpMatMul, Type: gguf.TypeF32, Shape: [4]int64{rows, tokens, 1, 1},
		Src: [4]*graph.Node{{Op: graph.OpWeight, Type: wt, Shape: [4]int64{in, rows, 1, 1}, Name: "w"},
			{Op: graph.OpInput, Type: gguf.TypeF32, Shape: [4]int64{in, tokens, 1, 1}}}}
	type variant struct {
		name string
		run  func()
	}
	pass := func(ws [][]byte, lay quant.Layout) {
		for _, w := range ws {
			if err := c.matMul(n, out, w, lay, x); err != nil {
				b.Fatal(err)
			}
		}
	}
	vs := []variant{
		{"x8", func() { pass(x8s, quant.LayoutX8) }},
		{"col16", func() { pass(c16s, quant.LayoutCol16) }},
	}
	for b.Loop() {
		ms := make([][]float64, len(vs))
		for rd := 0; rd < 15; rd++ {
			for i, v := range vs {
				t0 := time.Now()
				v.run()
				ms[i] = append(ms[i], float64(time.Since(t0).Microseconds())/1e3)
			}
		}
		for i, v := range vs {
			sort.Float64s(ms[i])
			b.Logf("%-8s median %7.2f ms  best %7.2f  (%d matrices, 15 rounds)", v.name, ms[i][len(ms[i])/2], ms[i][0], mats)
		}
	}
}
