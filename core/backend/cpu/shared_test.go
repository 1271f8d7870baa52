package cpu

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/alloc"
	"github.com/minfer/minfer/internal/memview"
)

// TestSharedMatMulsMatchVecDot: one-token mat-muls reading one input run
// as one shared call (sharedRun takes the three, not the fourth of another
// input) and give every row the bits of quant.VecDot, with rows that put
// the weights' boundaries inside the pool's chunks, at every kernel level.
func TestSharedMatMulsMatchVecDot(t *testing.T) {
	c := New(2)
	defer c.Close()
	r := rand.New(rand.NewSource(31))
	for _, lvl := range quant.Levels() {
		restore := quant.ForceLevel(lvl)
		for _, wt := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
			in := 96
			if wt.BlockSize() == 256 {
				in = 512
			}
			x := testInput(t, c, r, in)
			x2 := testInput(t, c, r, in)
			var nodes []*graph.Node
			weights := map[string][]byte{}
			for i, rows := range []int{68, 20, 22, 44} {
				src := x
				if i == 3 {
					src = x2
				}
				n, w := testMatMul(t, c, r, fmt.Sprintf("w%d.%s.%s", i, wt, lvl), wt, in, rows, src)
				nodes, weights[n.Src[0].Weight] = append(nodes, n), w
			}
			if k := sharedRun(nodes); k != 3 {
				t.Fatalf("%s %s: sharedRun %d, want 3", lvl, wt, k)
			}
			if err := c.Compute(context.Background(), nodes); err != nil {
				t.Fatal(err)
			}
			checkVecDot(t, c, nodes, weights, in, fmt.Sprintf("%s %s", lvl, wt))
		}
		restore()
	}
}

// TestSharedRunRefuses: a shared call stops at a mat-mul of another
// activation type (quant.VecDotType) or row length, a prompt step, and
// outputs that overlap the input or one another; weights of different
// types that read one activation type share it.
func TestSharedRunRefuses(t *testing.T) {
	ref := func(id alloc.BufID, off, n int64) alloc.BufRef { return alloc.BufRef{ID: id, Off: off, Len: n} }
	x := &graph.Node{Op: graph.OpInput, Type: gguf.TypeF32, Shape: [4]int64{64, 1, 1, 1}, Buf: ref(1, 0, 256)}
	mm := func(t gguf.GGMLType, in int64, src *graph.Node, out alloc.BufRef) *graph.Node {
		return &graph.Node{Op: graph.OpMatMul, Type: gguf.TypeF32, Shape: [4]int64{8, src.Shape[1], 1, 1}, Buf: out,
			Src: [4]*graph.Node{{Op: graph.OpWeight, Type: t, Shape: [4]int64{in, 8, 1, 1}}, src}}
	}
	q8 := gguf.TypeQ8_0
	x3 := &graph.Node{Op: graph.OpInput, Type: gguf.TypeF32, Shape: [4]int64{64, 3, 1, 1}, Buf: ref(5, 0, 768)}
	for _, c := range []struct {
		name  string
		nodes []*graph.Node
		want  int
	}{
		{"two", []*graph.Node{mm(q8, 64, x, ref(2, 0, 32)), mm(q8, 64, x, ref(2, 32, 32))}, 2},
		{"activation type", []*graph.Node{mm(q8, 64, x, ref(2, 0, 32)), mm(gguf.TypeQ4_1, 64, x, ref(3, 0, 32))}, 1},
		{"weight types of one activation type", []*graph.Node{mm(q8, 64, x, ref(2, 0, 32)), mm(gguf.TypeQ4_0, 64, x, ref(3, 0, 32)), mm(gguf.TypeQ5_0, 64, x, ref(4, 0, 32))}, 3},
		{"F16 in F32", []*graph.Node{mm(q8, 64, x, ref(2, 0, 32)), mm(gguf.TypeF16, 64, x, ref(3, 0, 32))}, 1},
		{"row length", []*graph.Node{mm(q8, 64, x, ref(2, 0, 32)), mm(q8, 32, x, ref(3, 0, 32))}, 1},
		{"prompt", []*graph.Node{mm(q8, 64, x3, ref(2, 0, 96)), mm(q8, 64, x3, ref(3, 0, 96))}, 1},
		{"output on input", []*graph.Node{mm(q8, 64, x, ref(2, 0, 32)), mm(q8, 64, x, ref(1, 128, 32))}, 1},
		{"first output on input", []*graph.Node{mm(q8, 64, x, ref(1, 0, 32)), mm(q8, 64, x, ref(3, 0, 32))}, 1},
		{"outputs overlap", []*graph.Node{mm(q8, 64, x, ref(2, 0, 32)), mm(q8, 64, x, ref(2, 16, 32))}, 1},
		{"at most four", []*graph.Node{mm(q8, 64, x, ref(2, 0, 32)), mm(q8, 64, x, ref(3, 0, 32)), mm(q8, 64, x, ref(4, 0, 32)),
			mm(q8, 64, x, ref(6, 0, 32)), mm(q8, 64, x, ref(7, 0, 32))}, 4},
	} {
		if got := sharedRun(c.nodes); got != c.want {
			t.Errorf("%s: sharedRun %d, want %d", c.name, got, c.want)
		}
	}
}

// TestSharedMixedTypesMatchVecDot: a shared call over weights of
// different types that read one activation type (a Q4_K_M block's Q4_K Q
// and K with its Q6_K V; Q4_0 and Q8_0, whose kernels share the token
// table; Q5_0, which takes none) gives every row the bits of
// quant.VecDot, in the file layout and repacked (the backend's copies), at
// every kernel level.
func TestSharedMixedTypesMatchVecDot(t *testing.T) {
	r := rand.New(rand.NewSource(37))
	canRepack, repacked := false, false
	for _, copyWeights := range []bool{false, true} {
		c := New(2)
		c.copyWeights = copyWeights
		for _, lvl := range quant.Levels() {
			restore := quant.ForceLevel(lvl)
			for ti, types := range [][]gguf.GGMLType{
				{gguf.TypeQ4_K, gguf.TypeQ4_K, gguf.TypeQ6_K},
				{gguf.TypeQ6_K, gguf.TypeQ4_K},
				{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ5_0, gguf.TypeQ4_0},
				{gguf.TypeQ5_0, gguf.TypeQ4_0},
			} {
				in := 512
				x := testInput(t, c, r, in)
				var nodes []*graph.Node
				weights := map[string][]byte{}
				for i, wt := range types {
					rows := []int{96, 32, 64, 32}[i]
					// A block's weight name, so that the copies are repacked.
					name := fmt.Sprintf("blk.%d.%d.%s.%v.attn_q.weight", ti, i, lvl, copyWeights)
					n, w := testMatMul(t, c, r, name, wt, in, rows, x)
					nodes, weights[name] = append(nodes, n), w
					if copyWeights && repackLayout(name, wt, []int64{int64(in), int64(rows)}, c.w.n) != quant.LayoutFile {
						canRepack = true
						repacked = repacked || c.weights[name].layout != quant.LayoutFile
					}
				}
				if k := sharedRun(nodes); k != len(types) {
					t.Fatalf("%s %v: sharedRun %d, want %d", lvl, types, k, len(types))
				}
				if err := c.Compute(context.Background(), nodes); err != nil {
					t.Fatal(err)
				}
				checkVecDot(t, c, nodes, weights, in, fmt.Sprintf("%s %v copy %v", lvl, types, copyWeights))
			}
			restore()
		}
		c.Close()
	}
	if canRepack && !repacked {
		t.Error("no weight was repacked: the test covers the file layout only")
	}
}

// testInput is a one-token F32 input of in random values in a buffer of c.
func testInput(t *testing.T, c *CPU, r *rand.Rand, in int) *graph.Node {
	t.Helper()
	x := &graph.Node{Op: graph.OpInput, Type: gguf.TypeF32, Shape: [4]int64{int64(in), 1, 1, 1}, Buf: testBuf(t, c, in)}
	b, _ := c.HostWindow(x.Buf)
	copy(memview.As[float32](b), randRow(r, in, 1))
	return x
}

// testBuf is a buffer of c for floats float32 values.
func testBuf(t *testing.T, c *CPU, floats int) alloc.BufRef {
	t.Helper()
	id, err := c.AllocBuffer(int64(4 * floats))
	if err != nil {
		t.Fatal(err)
	}
	return alloc.BufRef{ID: id, Len: int64(4 * floats)}
}

// testMatMul registers a random weight name of type wt (rows × in) on c
// and returns a one-token mat-mul of it with src, and the weight's bytes.
func testMatMul(t *testing.T, c *CPU, r *rand.Rand, name string, wt gguf.GGMLType, in, rows int, src *graph.Node) (*graph.Node, []byte) {
	t.Helper()
	w := quantRows(t, r, wt, in, rows)
	if err := c.RegisterWeight(name, wt, []int64{int64(in), int64(rows)}, w); err != nil {
		t.Fatal(err)
	}
	return &graph.Node{Op: graph.OpMatMul, Type: gguf.TypeF32, Shape: [4]int64{int64(rows), 1, 1, 1}, Name: name + ".out", Buf: testBuf(t, c, rows),
		Src: [4]*graph.Node{{Op: graph.OpWeight, Type: wt, Shape: [4]int64{int64(in), int64(rows), 1, 1}, Name: name, Weight: name}, src}}, w
}

// checkVecDot holds every row of the computed one-token mat-muls to
// quant.VecDot of its weight row and its input quantized to the weight's
// activation type, bit for bit.
func checkVecDot(t *testing.T, c *CPU, nodes []*graph.Node, weights map[string][]byte, in int, what string) {
	t.Helper()
	for _, n := range nodes {
		wt := n.Src[0].Type
		vt := quant.VecDotType(wt)
		xrb, _ := vt.RowBytes(int64(in))
		xq := make([]byte, xrb)
		xb, _ := c.HostWindow(n.Src[1].Buf)
		if err := quant.QuantizeRow(vt, memview.As[float32](xb), xq); err != nil {
			t.Fatal(err)
		}
		rb, _ := wt.RowBytes(int64(in))
		ob, _ := c.HostWindow(n.Buf)
		got := memview.As[float32](ob)
		w := weights[n.Src[0].Weight]
		for i := range got {
			want := quant.VecDot(wt, in, w[i*int(rb):(i+1)*int(rb)], xq)
			if math.Float32bits(got[i]) != math.Float32bits(want) {
				t.Fatalf("%s %s: row %d = %g, VecDot %g", what, n.Name, i, got[i], want)
			}
		}
	}
}
