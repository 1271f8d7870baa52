//go:build !noasm

package quant

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// TestC16Q4K: the c16 layout round-trips, and its kernels (the Go twin,
// and the AVX-512 one, with and without its prefetch, where the machine
// has it) give each row's Dot bits.
func TestC16Q4K(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{256, 512, 768, 4096, 14336} {
		for _, edge := range []bool{false, true} {
			file, x := c16Q4KCase(t, r, n, edge)
			k, _ := NewKernel(gguf.TypeQ4_K, n)
			nb := n / 256
			c16 := make([]byte, len(file))
			c16Q4K.move(file, c16, nb, true)
			back := make([]byte, len(file))
			c16Q4K.move(back, c16, nb, false)
			if string(back) != string(file) {
				t.Fatalf("n=%d: the c16 layout does not round-trip", n)
			}
			var want [16]float32
			for i := range want {
				want[i] = k.Dot(file[i*k.WeightRowBytes():(i+1)*k.WeightRowBytes()], x)
			}
			var got [16]float32
			c16Q4K.rows16(c16, x, &got)
			for i := range want {
				if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
					t.Fatalf("n=%d edge=%v generic row %d: %v, want %v", n, edge, i, got[i], want[i])
				}
			}
			if hasAVX512() {
				for name, body := range map[string]func(w *byte, x *byte, nb int, out *[16]float32){
					"avx512": rows16C16Q4KAVX512, "avx512-noprefetch": rows16C16Q4KAVX512NoPF} {
					got = [16]float32{}
					body(&c16[0], &x[0], nb, &got)
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("n=%d edge=%v %s row %d: %v, want %v", n, edge, name, i, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestC16Q4KPrep: the preparation of each row quad of a c16 group (the Go
// twin, and the AVX-512 one where the machine has it) is prep4Q4_K's of
// the quad's rows in the file layout.
func TestC16Q4KPrep(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 8))
	for _, n := range []int{256, 768, 4096} {
		for _, edge := range []bool{false, true} {
			file, _ := c16Q4KCase(t, r, n, edge)
			k, _ := NewKernel(gguf.TypeQ4_K, n)
			nb, wrb := n/256, k.WeightRowBytes()
			c16 := make([]byte, len(file))
			c16Q4K.move(file, c16, nb, true)
			for q := 0; q < 4; q++ {
				want := make([]byte, nb*prep4Q4_KBlock)
				prep4Q4_KGeneric(file[4*q*wrb:], wrb, want)
				got := make([]byte, len(want))
				prep4x16Q4KGeneric(c16, q, got)
				if string(got) != string(want) {
					t.Fatalf("n=%d quad %d: generic preparation differs", n, q)
				}
				if hasAVX512() {
					clear(got)
					prep4x16Q4KAVX512(&c16[0], q, nb, &got[0])
					for i := range want {
						if got[i] != want[i] {
							t.Fatalf("n=%d edge=%v quad %d: avx512 byte %d (block %d, offset %d) = %d, want %d", n, edge, q, i, i/prep4Q4_KBlock, i%prep4Q4_KBlock, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestC16Q6K: the Q6_K c16 layout round-trips; its kernels (the Go twin,
// the AVX-512 one where the machine has it) give each row's Dot bits; the
// quad gather (both) gives the quad's rows in the file layout.
func TestC16Q6K(t *testing.T) {
	r := rand.New(rand.NewPCG(11, 12))
	for _, n := range []int{256, 512, 768, 4096, 14336} {
		for _, edge := range []bool{false, true} {
			file, x := c16Q6KCase(t, r, n, edge)
			k, _ := NewKernel(gguf.TypeQ6_K, n)
			nb, wrb := n/256, k.WeightRowBytes()
			c16 := make([]byte, len(file))
			c16Q6K.move(file, c16, nb, true)
			back := make([]byte, len(file))
			c16Q6K.move(back, c16, nb, false)
			if string(back) != string(file) {
				t.Fatalf("n=%d: the c16 layout does not round-trip", n)
			}
			var want [16]float32
			for i := range want {
				want[i] = k.Dot(file[i*wrb:(i+1)*wrb], x)
			}
			var got [16]float32
			c16Q6K.rows16(c16, x, &got)
			for i := range want {
				if !sameBits(got[i], want[i]) {
					t.Fatalf("n=%d edge=%v generic row %d: %v, want %v", n, edge, i, got[i], want[i])
				}
			}
			for q := 0; q < 4; q++ {
				g4 := make([]byte, 4*nb*bytesQ6K)
				c16Q6K.gather4(c16, q, nb, g4)
				for j := 0; j < nb; j++ {
					for i := 0; i < 4; i++ {
						row := 4*q + i
						if string(g4[(4*j+i)*bytesQ6K:(4*j+i+1)*bytesQ6K]) != string(file[row*wrb+j*bytesQ6K:row*wrb+(j+1)*bytesQ6K]) {
							t.Fatalf("n=%d quad %d: generic gather of row %d column %d differs", n, q, i, j)
						}
					}
				}
				if hasAVX512() {
					g5 := make([]byte, len(g4))
					gather4C16Q6KAVX512(&c16[0], q, nb, &g5[0], bytesQ6K, 4*bytesQ6K)
					for b := range g4 {
						if g5[b] != g4[b] {
							t.Fatalf("n=%d quad %d: avx512 gather byte %d (column %d, row %d, offset %d) = %d, want %d", n, q, b, b/840, b%840/210, b%210, g5[b], g4[b])
						}
					}
				}
			}
			if hasAVX512() {
				got = [16]float32{}
				rows16C16Q6KAVX512(&c16[0], &x[0], nb, &got)
				for i := range want {
					if !sameBits(got[i], want[i]) {
						t.Fatalf("n=%d edge=%v avx512 row %d: %v, want %v", n, edge, i, got[i], want[i])
					}
				}
			}
		}
	}
}
