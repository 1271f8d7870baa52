//go:build !noasm

package quant

var zpfNear, zpfFar = 4608, 4608

//go:noescape
func zq40T2(w *byte, x *byte, nb int, tab *byte, out *[16]float32)

//go:noescape
func zq40T2T0(w *byte, x *byte, nb int, tab *byte, out *[16]float32)
