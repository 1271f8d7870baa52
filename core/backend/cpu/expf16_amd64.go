//go:build !noasm

package cpu

import "github.com/minfer/minfer/core/quant"

//go:noescape
func expf16x8AVX2(dst, src *float32) bool

// expf16Lanes sets dst[i] = expf16(src[i]); at the AVX2 and AVX512
// levels eight lanes at a time in assembly (bit-identical), blocks with a
// lane outside the assembly's range in Go.
func expf16Lanes(dst, src []float32) {
	dst = dst[:len(src)]
	i := 0
	if quant.CurrentLevel().HasAVX2() {
		for ; i+8 <= len(src); i += 8 {
			if !expf16x8AVX2(&dst[i], &src[i]) {
				for l := i; l < i+8; l++ {
					dst[l] = expf16(src[l])
				}
			}
		}
	}
	for ; i < len(src); i++ {
		dst[i] = expf16(src[i])
	}
}
