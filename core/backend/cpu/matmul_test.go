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

// TestMatMulMatchesVecDot: the mat-mul's paths (eight-token tiles, groups
// of four, four rows against one token, single rows) give every (row,
// token) the bits of quant.VecDot on that row and the token's quantized
// activations, for token counts around the group sizes, row counts with
// and without a multiple of four (odd ones too), at every kernel level.
func TestMatMulMatchesVecDot(t *testing.T) {
	c := New(2)
	defer c.Close()
	r := rand.New(rand.NewSource(12))
	for _, lvl := range quant.Levels() {
		restore := quant.ForceLevel(lvl)
		for _, wt := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
			in := 96
			if wt.BlockSize() == 256 {
				in = 512
			}
			for _, rows := range []int{20, 21, 22, 68} {
				w := quantRows(t, r, wt, in, rows)
				for _, tokens := range []int{1, 3, 4, 7, 8, 9, 12, 15, 16, 21, 27} {
					matMulMatchesVecDot(t, c, wt, w, in, rows, tokens, randRow(r, in*tokens, 1), fmt.Sprintf("%s %s rows %d tokens %d", lvl, wt, rows, tokens))
				}
			}
		}
		restore()
	}
}

// TestMatMulQ8_0MinQuant: Q8_0 prompt mat-muls over a weight with a −128
// quant against negative activations (the tiles' |x| form would be wrong
// there) and over a clean one give quant.VecDot's bits, on the first call
// (the weight is scanned) and the next (its scan kept), at every level.
func TestMatMulQ8_0MinQuant(t *testing.T) {
	c := New(2)
	defer c.Close()
	r := rand.New(rand.NewSource(21))
	wt, in, rows, tokens := gguf.TypeQ8_0, 128, 40, 19
	rb, _ := wt.RowBytes(int64(in))
	for _, lvl := range quant.Levels() {
		restore := quant.ForceLevel(lvl)
		for _, plant := range []bool{false, true} {
			w := make([]byte, int(rb)*rows)
			wf := randRow(r, in*rows, 0.1)
			for row := 0; row < rows; row++ {
				if err := quant.QuantizeWeights(wt, wf[row*in:(row+1)*in], w[row*int(rb):(row+1)*int(rb)]); err != nil {
					t.Fatal(err)
				}
			}
			x := randRow(r, in*tokens, 1)
			if plant {
				// Element 37 of row 22 is −128; every token's element 37 is
				// negative.
				w[22*int(rb)+34+2+5] = 0x80
				for tok := 0; tok < tokens; tok++ {
					x[tok*in+37] = -1 - float32(r.Float64())
				}
			}
			n := &graph.Node{Op: graph.OpMatMul, Type: gguf.TypeF32, Shape: [4]int64{int64(rows), int64(tokens), 1, 1},
				Src: [4]*graph.Node{{Op: graph.OpWeight, Type: wt, Shape: [4]int64{int64(in), int64(rows), 1, 1}, Name: "w"},
					{Op: graph.OpInput, Type: gguf.TypeF32, Shape: [4]int64{int64(in), int64(tokens), 1, 1}}}}
			xrb, _ := quant.VecDotType(wt).RowBytes(int64(in))
			xq := make([]byte, xrb)
			for call := 0; call < 2; call++ {
				got := make([]float32, rows*tokens)
				if err := c.matMul(n, got, w, quant.LayoutFile, x); err != nil {
					t.Fatal(err)
				}
				for tok := 0; tok < tokens; tok++ {
					if err := quant.QuantizeRow(quant.VecDotType(wt), x[tok*in:(tok+1)*in], xq); err != nil {
						t.Fatal(err)
					}
					for i := 0; i < rows; i++ {
						want := quant.VecDot(wt, in, w[i*int(rb):(i+1)*int(rb)], xq)
						if g := got[tok*rows+i]; math.Float32bits(g) != math.Float32bits(want) {
							t.Fatalf("%s plant %v call %d: token %d row %d = %g, VecDot %g", lvl, plant, call, tok, i, g, want)
						}
					}
				}
			}
		}
		restore()
	}
}

// TestMatMulTileBlocksMatchVecDot: prompt mat-muls whose tiles are too big
// for one pass of runTiles8 (in = 8192: two or three tiles a block, five
// tiles) over chunks of four quads and a tail quad give every (token,
// row) quant.VecDot's bits, at every level.
func TestMatMulTileBlocksMatchVecDot(t *testing.T) {
	c := New(2)
	defer c.Close()
	r := rand.New(rand.NewSource(13))
	const in, rows, tokens = 8192, 36, 43
	for _, lvl := range quant.Levels() {
		restore := quant.ForceLevel(lvl)
		for _, wt := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
			w := quantRows(t, r, wt, in, rows)
			matMulMatchesVecDot(t, c, wt, w, in, rows, tokens, randRow(r, in*tokens, 1), fmt.Sprintf("%s %s", lvl, wt))
		}
		restore()
	}
}

// matMulMatchesVecDot runs c's mat-mul of the wt weight w (rows of in
// elements) over tokens rows of x and requires every (token, row) to have
// quant.VecDot's bits on that row and the token's quantized activations.
func matMulMatchesVecDot(t *testing.T, c *CPU, wt gguf.GGMLType, w []byte, in, rows, tokens int, x []float32, what string) {
	t.Helper()
	rb, _ := wt.RowBytes(int64(in))
	n := &graph.Node{Op: graph.OpMatMul, Type: gguf.TypeF32, Shape: [4]int64{int64(rows), int64(tokens), 1, 1},
		Src: [4]*graph.Node{{Op: graph.OpWeight, Type: wt, Shape: [4]int64{int64(in), int64(rows), 1, 1}, Name: "w"},
			{Op: graph.OpInput, Type: gguf.TypeF32, Shape: [4]int64{int64(in), int64(tokens), 1, 1}}}}
	got := make([]float32, rows*tokens)
	if err := c.matMul(n, got, w, quant.LayoutFile, x); err != nil {
		t.Fatal(err)
	}
	vt := quant.VecDotType(wt)
	xrb, _ := vt.RowBytes(int64(in))
	xq := make([]byte, xrb)
	for tok := 0; tok < tokens; tok++ {
		if err := quant.QuantizeRow(vt, x[tok*in:(tok+1)*in], xq); err != nil {
			t.Fatal(err)
		}
		for i := 0; i < rows; i++ {
			want := quant.VecDot(wt, in, w[i*int(rb):(i+1)*int(rb)], xq)
			if g := got[tok*rows+i]; math.Float32bits(g) != math.Float32bits(want) {
				t.Fatalf("%s: token %d row %d = %g, VecDot %g", what, tok, i, g, want)
			}
		}
	}
}
