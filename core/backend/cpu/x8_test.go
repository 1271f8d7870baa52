package cpu

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/alloc"
	"github.com/minfer/minfer/internal/memview"
)

// quantRows is rows random rows of in elements quantized to wt.
func quantRows(t testing.TB, r *rand.Rand, wt gguf.GGMLType, in, rows int) []byte {
	rb, _ := wt.RowBytes(int64(in))
	w := make([]byte, int(rb)*rows)
	wf := randRow(r, in*rows, 0.1)
	for row := 0; row < rows; row++ {
		if err := quant.QuantizeWeights(wt, wf[row*in:(row+1)*in], w[row*int(rb):(row+1)*int(rb)]); err != nil {
			t.Fatal(err)
		}
	}
	return w
}

// toLayout is w with its whole groups of rows in the layout lay.
func toLayout(k quant.Kernel, lay quant.Layout, w []byte) []byte {
	g := k.GroupBytes(lay)
	out := append([]byte(nil), w...)
	for o := 0; o+g <= len(w); o += g {
		k.Interleave(lay, out[o:o+g], w[o:o+g])
	}
	return out
}

// TestX8MatMulMatchesVecDot is TestMatMulMatchesVecDot on repacked
// weights: x8 (Q4_0, Q8_0, and the K x8 layout of Q4_K and Q6_K) and col16
// (Q4_0, Q4_K, Q6_K), whose prompt steps run on the weight as it is where no group of
// four tokens follows the tiles (rows past the last whole group in the
// file layout), on one thread and two, every layout at every level (where
// the level has no kernel for the layout, the generic twin).
func TestX8MatMulMatchesVecDot(t *testing.T) {
	for _, wt := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		testX8MatMul(t, wt, x8TestRow(wt, 3), []int{8, 16, 20, 21, 32, 48, 68, 136, 200}, []int{1, 3, 4, 7, 8, 9, 12, 15, 16, 21, 27})
	}
	// Rows long enough for the four-group col16 decode kernel
	// (quant.Kernel.DotGroups4).
	testX8MatMul(t, gguf.TypeQ4_0, 4096, []int{68, 136, 200}, []int{1, 2, 9})
	testX8MatMul(t, gguf.TypeQ8_0, 4096, []int{68, 136, 200}, []int{1, 2, 9})
}

// x8TestRow is the row length the x8 tests use for wt: a few blocks.
func x8TestRow(wt gguf.GGMLType, blocks int) int {
	if wt == gguf.TypeQ4_K || wt == gguf.TypeQ6_K {
		return 256 * blocks
	}
	return 32 * blocks
}

func testX8MatMul(t *testing.T, wt gguf.GGMLType, in int, rowsList, tokensList []int) {
	r := rand.New(rand.NewSource(81))
	rb, _ := wt.RowBytes(int64(in))
	for _, threads := range []int{1, 2} {
		c := New(threads)
		for _, lvl := range quant.Levels() {
			restore := quant.ForceLevel(lvl)
			k, err := quant.NewKernel(wt, in)
			if err != nil {
				t.Fatal(err)
			}
			for _, lay := range []quant.Layout{quant.LayoutX8, quant.LayoutCol16} {
				if !k.Has(lay) {
					continue
				}
				for _, rows := range rowsList {
					w := quantRows(t, r, wt, in, rows)
					w8 := toLayout(k, lay, w)
					for _, tokens := range tokensList {
						x := randRow(r, in*tokens, 1)
						n := &graph.Node{Op: graph.OpMatMul, Type: gguf.TypeF32, Shape: [4]int64{int64(rows), int64(tokens), 1, 1},
							Src: [4]*graph.Node{{Op: graph.OpWeight, Type: wt, Shape: [4]int64{int64(in), int64(rows), 1, 1}, Name: "w"},
								{Op: graph.OpInput, Type: gguf.TypeF32, Shape: [4]int64{int64(in), int64(tokens), 1, 1}}}}
						got := make([]float32, rows*tokens)
						if err := c.matMul(n, got, w8, lay, x); err != nil {
							t.Fatal(err)
						}
						xq := make([]byte, k.ActRowBytes())
						for tok := 0; tok < tokens; tok++ {
							if err := quant.QuantizeRow(quant.VecDotType(wt), x[tok*in:(tok+1)*in], xq); err != nil {
								t.Fatal(err)
							}
							for i := 0; i < rows; i++ {
								want := quant.VecDot(wt, in, w[i*int(rb):(i+1)*int(rb)], xq)
								if g := got[tok*rows+i]; math.Float32bits(g) != math.Float32bits(want) {
									t.Fatalf("%s %s %d threads %s rows %d tokens %d: token %d row %d = %g, VecDot %g", wt, lay, threads, lvl, rows, tokens, tok, i, g, want)
								}
							}
						}
					}
				}
			}
			restore()
		}
		c.Close()
	}
}

// TestX8Registered: copied Q4_0, Q8_0, Q4_K and Q6_K weights named as
// mat-mul weights, with rows in groups of sixteen, are repacked to the
// kernel's layout (Q4_0, Q4_K, Q6_K at the AVX512 level: col16 where the
// rows come in thirty-twos, else x8; x8 where the level has an x8 kernel), others not,
// mapped ones never; the repacked ones give the bits of quant.VecDot in a
// shared one-token call (weights of both layouts together), a prompt step
// and through views of their halves, and any other op is refused them.
func TestX8Registered(t *testing.T) {
	for _, wt := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		testX8Registered(t, wt)
	}
}

func testX8Registered(t *testing.T, wt gguf.GGMLType) {
	r := rand.New(rand.NewSource(82))
	in := x8TestRow(wt, 2)
	rb, _ := wt.RowBytes(int64(in))
	for _, lvl := range quant.Levels() {
		restore := quant.ForceLevel(lvl)
		k, _ := quant.NewKernel(wt, in)
		for _, copyOn := range []bool{false, true} {
			c := New(2)
			c.SetCopyWeights(copyOn)
			buf := func(floats int) alloc.BufRef {
				id, err := c.AllocBuffer(int64(4 * floats))
				if err != nil {
					t.Fatal(err)
				}
				return alloc.BufRef{ID: id, Len: int64(4 * floats)}
			}
			weights := map[string][]byte{}
			reg := func(name string, rows int, want bool) *graph.Node {
				w := quantRows(t, r, wt, in, rows)
				if err := c.RegisterWeight(name, wt, []int64{int64(in), int64(rows)}, w); err != nil {
					t.Fatal(err)
				}
				weights[name] = w
				exp := quant.LayoutFile
				if want && copyOn {
					exp = k.Layout()
					if exp == quant.LayoutCol16 && rows%32 != 0 {
						exp = quant.LayoutX8
					}
				}
				if got := c.weights[name].layout; got != exp {
					t.Fatalf("%s copy %v: %s layout %s, want %s", lvl, copyOn, name, got, exp)
				}
				return &graph.Node{Op: graph.OpWeight, Type: wt, Shape: [4]int64{int64(in), int64(rows), 1, 1}, Name: name, Weight: name}
			}
			q := reg("blk.0.attn_q.weight", 48, true)
			kw := reg("blk.0.attn_k.weight", 16, true)
			v := reg("blk.0.attn_v.weight", 32, true)
			up := reg("blk.0.ffn_up.weight", 64, true)
			out := reg("output.weight", 80, true)
			reg("blk.0.ffn_down.weight", 40, false) // rows not in sixteens
			emb := reg("token_embd.weight", 32, false)
			reg("blk.0.attn_qkv.weight", 48, false)

			run := func(nodes []*graph.Node) {
				t.Helper()
				if err := c.Compute(context.Background(), nodes); err != nil {
					t.Fatal(err)
				}
				xq := make([]byte, k.ActRowBytes())
				for _, n := range nodes {
					xb, _ := c.HostWindow(n.Src[1].Buf)
					x := memview.As[float32](xb)
					ob, _ := c.HostWindow(n.Buf)
					got := memview.As[float32](ob)
					wn, off := n.Src[0], int64(0)
					for ; wn.Op == graph.OpView; wn = wn.Src[0] {
						off += wn.ViewOff
					}
					w := weights[wn.Weight][off:]
					rows := int(n.Shape[0])
					for tok := 0; tok < int(n.Shape[1]); tok++ {
						if err := quant.QuantizeRow(quant.VecDotType(wt), x[tok*in:(tok+1)*in], xq); err != nil {
							t.Fatal(err)
						}
						for i := 0; i < rows; i++ {
							want := quant.VecDot(wt, in, w[i*int(rb):(i+1)*int(rb)], xq)
							if g := got[tok*rows+i]; math.Float32bits(g) != math.Float32bits(want) {
								t.Fatalf("%s copy %v %s: token %d row %d = %g, VecDot %g", lvl, copyOn, n.Name, tok, i, g, want)
							}
						}
					}
				}
			}
			input := func(tokens int) *graph.Node {
				x := &graph.Node{Op: graph.OpInput, Type: gguf.TypeF32, Shape: [4]int64{int64(in), int64(tokens), 1, 1}, Buf: buf(in * tokens)}
				b, _ := c.HostWindow(x.Buf)
				copy(memview.As[float32](b), randRow(r, len(b)/4, 1))
				return x
			}
			mm := func(w, x *graph.Node, name string) *graph.Node {
				rows, tokens := w.Shape[1], x.Shape[1]
				return &graph.Node{Op: graph.OpMatMul, Type: gguf.TypeF32, Shape: [4]int64{rows, tokens, 1, 1}, Name: name,
					Buf: buf(int(rows * tokens)), Src: [4]*graph.Node{w, x}}
			}
			half := func(w *graph.Node, i int) *graph.Node {
				rows := w.Shape[1] / 2
				return &graph.Node{Op: graph.OpView, Type: wt, Shape: [4]int64{int64(in), rows, 1, 1}, Name: fmt.Sprintf("%s.half%d", w.Name, i),
					ViewOff: int64(i) * rows * rb, Src: [4]*graph.Node{w}}
			}
			for _, tokens := range []int{1, 2, 5, 8, 13, 24} {
				x := input(tokens)
				nodes := []*graph.Node{mm(q, x, "q"), mm(kw, x, "k"), mm(v, x, "v")}
				if tokens == 1 {
					if n := sharedRun(nodes); n != 3 {
						t.Fatalf("sharedRun %d, want 3", n)
					}
				}
				run(nodes)
				run([]*graph.Node{mm(half(up, 0), x, "gate"), mm(half(up, 1), x, "up")})
				run([]*graph.Node{mm(out, x, "out")})
			}
			// Any other reader of an x8 weight is refused; the embeddings
			// (not x8) are read as they are.
			ids := &graph.Node{Op: graph.OpInput, Type: gguf.TypeI32, Shape: [4]int64{1, 1, 1, 1}, Buf: buf(1)}
			for _, w := range []*graph.Node{q, emb} {
				g := &graph.Node{Op: graph.OpGetRows, Type: gguf.TypeF32, Shape: [4]int64{int64(in), 1, 1, 1}, Name: "rows", Buf: buf(in), Src: [4]*graph.Node{w, ids}}
				err := c.Compute(context.Background(), []*graph.Node{g})
				if rp := c.weights[w.Weight].layout != quant.LayoutFile; (err != nil) != rp || (rp && !strings.Contains(err.Error(), "repacked")) {
					t.Fatalf("%s copy %v: get_rows of %s (repacked %v): %v", lvl, copyOn, w.Weight, rp, err)
				}
			}
			c.Close()
		}
		restore()
	}
}

// TestRepackLayoutThreads: a copied weight whose kernel offers col16 takes
// it with up to col16MaxThreads workers and x8 with more (and with rows
// not in thirty-twos, or a type whose col16 kernel is the slower here);
// types without col16 keep their layout whatever the
// thread count.
func TestRepackLayoutThreads(t *testing.T) {
	for _, wt := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		in := x8TestRow(wt, 2)
		k, _ := quant.NewKernel(wt, in)
		for _, threads := range []int{1, 2, col16MaxThreads, col16MaxThreads + 1, 16} {
			for _, rows := range []int64{32, 48} {
				want := k.Layout()
				if want == quant.LayoutCol16 && (threads > col16MaxThreads || rows%32 != 0) {
					want = quant.LayoutX8
				}
				if got := repackLayout("blk.0.ffn_up.weight", wt, []int64{int64(in), rows}, threads); got != want {
					t.Errorf("%s, %d threads, %d rows: %s, want %s", wt, threads, rows, got, want)
				}
			}
		}
	}
	// The rule bites where the level offers col16.
	if k, _ := quant.NewKernel(gguf.TypeQ4_K, 256); k.Layout() == quant.LayoutCol16 {
		if got := repackLayout("blk.0.ffn_up.weight", gguf.TypeQ4_K, []int64{256, 64}, 16); got != quant.LayoutX8 {
			t.Errorf("Q4_K with 16 threads: %s, want x8", got)
		}
		if got := repackLayout("blk.0.ffn_up.weight", gguf.TypeQ4_K, []int64{256, 64}, 2); got != quant.LayoutCol16 {
			t.Errorf("Q4_K with 2 threads: %s, want col16", got)
		}
	}
}
