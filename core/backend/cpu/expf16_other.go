//go:build noasm || !(amd64 || arm64)

package cpu

// expf16Lanes sets dst[i] = expf16(src[i]).
func expf16Lanes(dst, src []float32) {
	dst = dst[:len(src)]
	for i, x := range src {
		dst[i] = expf16(x)
	}
}
