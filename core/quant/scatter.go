package quant

// Scatter4x8 writes four rows' results against eight tokens, o[8r+t] (the
// tile kernels' output order), to the token-major matrix dst: row r of
// token t at dst[t·stride+r]. dst must hold 7·stride+4 elements. Values
// are moved, not changed.
func Scatter4x8(o *[32]float32, dst []float32, stride int) {
	_ = dst[7*stride+3]
	cur.scatter4x8(o, dst, stride)
}

// scatter4x8Go is Scatter4x8 in Go (the generic level's, and the tests'
// reference).
func scatter4x8Go(o *[32]float32, dst []float32, stride int) {
	for t := 0; t < 8; t++ {
		d := dst[t*stride : t*stride+4 : t*stride+4]
		d[0], d[1], d[2], d[3] = o[t], o[8+t], o[16+t], o[24+t]
	}
}
