//go:build !noasm

package cpu

import "github.com/minfer/minfer/core/quant"

// The NEON exp, SiLU and SwiGLU lanes (expf16_arm64.s, generated from
// _asm/expf16_arm64.s.in by core/quant/_asm/neonwords): four lanes a
// chunk, a chunk the assembly leaves (a lane with 126 < |n| ≤ 192, or NaN)
// done in Go.

//go:noescape
func expf16x4NEON(out, x *float32, n4 int) int

//go:noescape
func siluNEON(out, x *float32, n4 int) int

//go:noescape
func swigluNEON(out, x, u *float32, n4 int) int

func neonLevel() bool {
	l := quant.CurrentLevel()
	return l == quant.NEON || l == quant.NEONDot
}

// expf16Lanes sets dst[i] = expf16(src[i]).
func expf16Lanes(dst, src []float32) {
	dst = dst[:len(src)]
	i := 0
	if neonLevel() {
		for i+4 <= len(src) {
			i += 4 * expf16x4NEON(&dst[i], &src[i], (len(src)-i)/4)
			if i+4 <= len(src) {
				for l := i; l < i+4; l++ {
					dst[l] = expf16(src[l])
				}
				i += 4
			}
		}
	}
	for ; i < len(src); i++ {
		dst[i] = expf16(src[i])
	}
}

// siluLanes is siluLanesGo (len(x) a multiple of 8), in NEON assembly at
// the NEON levels.
func siluLanes(out, x []float32) {
	if !neonLevel() {
		siluLanesGo(out, x)
		return
	}
	out = out[:len(x)]
	for i := 0; i < len(x); {
		i += 4 * siluNEON(&out[i], &x[i], (len(x)-i)/4)
		if i < len(x) {
			// siluLanesGo works in eights; the lanes are independent.
			for l := i; l < i+4; l++ {
				out[l] = x[l] / (1 + expf16(-x[l]))
			}
			i += 4
		}
	}
}

// swigluLanes is swigluLanesGo, in NEON assembly at the NEON levels.
func swigluLanes(out, g, u []float32) {
	if !neonLevel() {
		swigluLanesGo(out, g, u)
		return
	}
	out, u = out[:len(g)], u[:len(g)]
	for i := 0; i < len(g); {
		i += 4 * swigluNEON(&out[i], &g[i], &u[i], (len(g)-i)/4)
		if i < len(g) {
			for l := i; l < i+4; l++ {
				out[l] = g[l] / (1 + expf16(-g[l]))
				out[l] *= u[l]
			}
			i += 4
		}
	}
}
