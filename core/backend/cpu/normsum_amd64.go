//go:build !noasm

package cpu

import "github.com/minfer/minfer/core/quant"

// sumSquaresAVX2 is sumSquaresLanesGo's lanes and reduction over n16
// whole chunks of 16 (normsum_amd64.s).
//
//go:noescape
func sumSquaresAVX2(x *float32, n16 int) float64

// scaleAVX2 is out[i] = x[i]·s over n8 chunks of 8.
//
//go:noescape
func scaleAVX2(out, x *float32, n8 int, s float32)

// sumSquaresLanes is sumSquaresLanesGo, in assembly at the AVX2 and AVX512
// levels (the AVX2 kernel at both).
func sumSquaresLanes(x []float32) float64 {
	n16 := len(x) / sumSqLanes
	if n16 == 0 || !quant.CurrentLevel().HasAVX2() {
		return sumSquaresLanesGo(x)
	}
	return sumSquaresTail(sumSquaresAVX2(&x[0], n16), x[n16*sumSqLanes:])
}

// scaleRow is out[i] = x[i]·s, in assembly at the AVX2 and AVX512 levels.
func scaleRow(out, x []float32, s float32) {
	n8 := len(x) / 8
	if n8 == 0 || !quant.CurrentLevel().HasAVX2() {
		scaleRowGo(out, x, s)
		return
	}
	out = out[:len(x)]
	scaleAVX2(&out[0], &x[0], n8, s)
	scaleRowGo(out[n8*8:], x[n8*8:], s)
}
