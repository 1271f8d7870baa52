//go:build !noasm

package quant

// scatter4x8AVX transposes o's four rows of eight in registers and stores
// each token's four results with one 16-byte store (AVX, so every level
// from AVX2 up).
//
//go:noescape
func scatter4x8AVX(o *float32, dst *float32, stride int)

// scatter4x8AVX2 is the AVX2 level's Scatter4x8 (the bounds checked by
// Scatter4x8).
func scatter4x8AVX2(o *[32]float32, dst []float32, stride int) {
	scatter4x8AVX(&o[0], &dst[0], stride)
}
