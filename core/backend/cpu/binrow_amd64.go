//go:build !noasm

package cpu

import "github.com/minfer/minfer/core/quant"

// addAVX2 is out[i] = x[i] + y[i] over n8 chunks of 8 (binrow_amd64.s).
//
//go:noescape
func addAVX2(out, x, y *float32, n8 int)

// mulAVX2 is out[i] = x[i]·y[i] over n8 chunks of 8.
//
//go:noescape
func mulAVX2(out, x, y *float32, n8 int)

// binRow is binRowGo, in assembly at the AVX2 and AVX512 levels (the
// AVX2 kernels at both): one float32 add or multiply per element, so the
// same bits in any width.
func binRow(out, x, y []float32, add bool) {
	n8 := len(x) / 8
	if n8 == 0 || !quant.CurrentLevel().HasAVX2() {
		binRowGo(out, x, y, add)
		return
	}
	out, y = out[:len(x)], y[:len(x)]
	if add {
		addAVX2(&out[0], &x[0], &y[0], n8)
	} else {
		mulAVX2(&out[0], &x[0], &y[0], n8)
	}
	binRowGo(out[n8*8:], x[n8*8:], y[n8*8:], add)
}
