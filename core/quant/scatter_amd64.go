//go:build !noasm

package quant

import "golang.org/x/sys/cpu"

// scatter4x8AVX transposes o's four rows of eight in registers and stores
// each token's four results with one 16-byte store.
//
//go:noescape
func scatter4x8AVX(o *float32, dst *float32, stride int)

var scatterAVX = cpu.X86.HasAVX

func scatter4x8(o *[32]float32, dst []float32, stride int) {
	if scatterAVX {
		scatter4x8AVX(&o[0], &dst[0], stride)
		return
	}
	scatter4x8Go(o, dst, stride)
}
