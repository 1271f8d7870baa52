//go:build !noasm

package cpu

import "github.com/minfer/minfer/core/quant"

//go:noescape
func siluAVX2(out, x *float32, n8 int) int

//go:noescape
func swigluAVX2(out, x, u *float32, n8 int) int

// siluLanes is siluLanesGo (len(x) a multiple of 8); at the AVX2 and
// AVX512 levels in assembly (silu_amd64.s), a chunk whose exp leaves the
// assembly's range done in Go.
func siluLanes(out, x []float32) {
	if !quant.CurrentLevel().HasAVX2() {
		siluLanesGo(out, x)
		return
	}
	out = out[:len(x)]
	for i := 0; i < len(x); {
		i += 8 * siluAVX2(&out[i], &x[i], (len(x)-i)/8)
		if i < len(x) {
			siluLanesGo(out[i:i+8], x[i:i+8])
			i += 8
		}
	}
}

// swigluLanes is swigluLanesGo, at the AVX2 and AVX512 levels in assembly.
func swigluLanes(out, g, u []float32) {
	if !quant.CurrentLevel().HasAVX2() {
		swigluLanesGo(out, g, u)
		return
	}
	out, u = out[:len(g)], u[:len(g)]
	for i := 0; i < len(g); {
		i += 8 * swigluAVX2(&out[i], &g[i], &u[i], (len(g)-i)/8)
		if i < len(g) {
			swigluLanesGo(out[i:i+8], g[i:i+8], u[i:i+8])
			i += 8
		}
	}
}
