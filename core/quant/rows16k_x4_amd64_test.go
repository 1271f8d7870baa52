//go:build !noasm

package quant

import (
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// TestRows16C16x4Q4KKernelMatchesGeneric: the four-group Q4_K c16 decode
// kernel gives each of its 64 rows the one-row generic bits, on random
// and edge rows of the twin sizes, with the groups apart by more than a
// group (the stride is the argument's), whatever the current level.
func TestRows16C16x4Q4KKernelMatchesGeneric(t *testing.T) {
	if !hasAVX512() {
		t.Skip("no AVX-512")
	}
	const typ = gguf.TypeQ4_K
	one := genericKernels().dotQ4_KQ8_K
	defer ForceLevel(AVX512)()
	for _, n := range twinSizes(typ) {
		if n == 0 {
			continue
		}
		k, err := NewKernel(typ, n)
		if err != nil {
			t.Fatal(err)
		}
		wrb := k.WeightRowBytes()
		for kind := edgeRandom; kind <= edgeMixed; kind++ {
			r := rand.New(rand.NewPCG(uint64(n)+79, uint64(kind)))
			for rep := 0; rep < 3; rep++ {
				var ws [64][]byte
				var x []byte
				for i := range ws {
					ws[i], x = twinRows(t, r, typ, n, kind)
				}
				stride := 16*wrb + c16ColQ4K*r.IntN(3)
				g := make([]byte, 3*stride+16*wrb)
				for q := 0; q < 4; q++ {
					var src []byte
					for i := 16 * q; i < 16*q+16; i++ {
						src = append(src, ws[i]...)
					}
					k.Interleave(LayoutCol16, g[q*stride:q*stride+16*wrb], src)
				}
				var out [64]float32
				for i := range out {
					out[i] = 12345
				}
				rows16C16x4Q4KAVX512(&g[0], stride, &x[0], n/256, &out)
				for i := range ws {
					if want := one(ws[i], x); !sameBits(out[i], want) {
						t.Fatalf("n=%d kind %d rep %d row %d: %g, generic %g", n, kind, rep, i, out[i], want)
					}
				}
			}
		}
	}
}
