//go:build !noasm

package cpu

// sumSquaresNEON is sumSquaresLanesGo's lanes and reduction over n16
// whole chunks of 16 (normsum_arm64.s, generated from
// _asm/normsum_arm64.s.in by core/quant/_asm/neonwords).
//
//go:noescape
func sumSquaresNEON(x *float32, n16 int) float64

// scaleNEON is out[i] = x[i]·s over n4 chunks of 4.
//
//go:noescape
func scaleNEON(out, x *float32, n4 int, s float32)

// sumSquaresLanes is sumSquaresLanesGo, in NEON assembly at the NEON
// levels.
func sumSquaresLanes(x []float32) float64 {
	n16 := len(x) / sumSqLanes
	if n16 == 0 || !neonLevel() {
		return sumSquaresLanesGo(x)
	}
	return sumSquaresTail(sumSquaresNEON(&x[0], n16), x[n16*sumSqLanes:])
}

// scaleRow is out[i] = x[i]·s, in NEON assembly at the NEON levels.
func scaleRow(out, x []float32, s float32) {
	n4 := len(x) / 4
	if n4 == 0 || !neonLevel() {
		scaleRowGo(out, x, s)
		return
	}
	out = out[:len(x)]
	scaleNEON(&out[0], &x[0], n4, s)
	scaleRowGo(out[n4*4:], x[n4*4:], s)
}
