package quant

// Dot-product kernels as VecDot calls them. The ones with SIMD twins go
// through the active kernel set (level.go); the others call their generic
// body directly. Every kernel takes whole weight blocks w and the matching
// activation blocks x, already checked by VecDot.

func dotF32Bytes(w, x []byte) float32 { return cur.dotF32Bytes(w, x) }
func dotF32(a, b []float32) float32   { return cur.dotF32(a, b) }
func dotF16(w, x []byte) float32      { return cur.dotF16(w, x) }
func dotBF16(w, x []byte) float32     { return cur.dotBF16(w, x) }
func dotQ4_0Q8_0(w, x []byte) float32 { return cur.dotQ4_0Q8_0(w, x) }
func dotQ4_1Q8_1(w, x []byte) float32 { return cur.dotQ4_1Q8_1(w, x) }
func dotQ5_0Q8_0(w, x []byte) float32 { return cur.dotQ5_0Q8_0(w, x) }
func dotQ5_1Q8_1(w, x []byte) float32 { return cur.dotQ5_1Q8_1(w, x) }
func dotQ8_0Q8_0(w, x []byte) float32 { return cur.dotQ8_0Q8_0(w, x) }
func dotQ2_KQ8_K(w, x []byte) float32 { return cur.dotQ2_KQ8_K(w, x) }
func dotQ3_KQ8_K(w, x []byte) float32 { return cur.dotQ3_KQ8_K(w, x) }
func dotQ4_KQ8_K(w, x []byte) float32 { return cur.dotQ4_KQ8_K(w, x) }
func dotQ5_KQ8_K(w, x []byte) float32 { return cur.dotQ5_KQ8_K(w, x) }
func dotQ6_KQ8_K(w, x []byte) float32 { return cur.dotQ6_KQ8_K(w, x) }

// genericKernels is the Generic level's set: the Go bodies, the four-token
// forms looping over the one-token ones.
func genericKernels() *kernelSet {
	ks := &kernelSet{
		dotQ4_0Q8_0:   dotQ4_0Q8_0Generic,
		dotQ8_0Q8_0:   dotQ8_0Q8_0Generic,
		dotQ4_KQ8_K:   dotQ4_KQ8_KGeneric,
		dotQ6_KQ8_K:   dotQ6_KQ8_KGeneric,
		dotF16:        dotF16Generic,
		axpyF16:       axpyF16Generic,
		f16Lanes64:    f16Lanes64Generic,
		dot4Q4_0Q8_0:  loop4(dotQ4_0Q8_0Generic),
		dot4Q8_0Q8_0:  loop4(dotQ8_0Q8_0Generic),
		dot4Q4_KQ8_K:  loop4(dotQ4_KQ8_KGeneric),
		dot4Q6_KQ8_K:  loop4(dotQ6_KQ8_KGeneric),
		dotR4Q4_0Q8_0: rows4(dotQ4_0Q8_0Generic),
		dotR4Q8_0Q8_0: rows4(dotQ8_0Q8_0Generic),
		quantizeQ8_0:  quantizeRowQ8_0Generic,
		quantizeQ8_K:  quantizeRowQ8_KGeneric,
		token1Q8_0:    token1Q8_0Generic,

		dotQ4_1Q8_1: dotQ4_1Q8_1Generic,
		dotQ5_0Q8_0: dotQ5_0Q8_0Generic,
		dotQ5_1Q8_1: dotQ5_1Q8_1Generic,
		dotQ2_KQ8_K: dotQ2_KQ8_KGeneric,
		dotQ3_KQ8_K: dotQ3_KQ8_KGeneric,
		dotQ5_KQ8_K: dotQ5_KQ8_KGeneric,
		dotF32Bytes: dotF32BytesGeneric,
		dotBF16:     dotBF16Generic,
		dotF32:      dotF32Generic,

		dot4Q2_KQ8_K: loop4(dotQ2_KQ8_KGeneric),
		dot4Q3_KQ8_K: loop4(dotQ3_KQ8_KGeneric),
		dot4Q5_KQ8_K: loop4(dotQ5_KQ8_KGeneric),
		dot4Q4_1Q8_1: loop4(dotQ4_1Q8_1Generic),
		dot4Q5_0Q8_0: loop4(dotQ5_0Q8_0Generic),
		dot4Q5_1Q8_1: loop4(dotQ5_1Q8_1Generic),

		ropePairs:  ropePairsGeneric,
		ropeHalves: ropeHalvesGeneric,
		dotF16F32:  dotF16F32Generic,

		dotF16F32x4: dotF16F32x4Generic,

		dotF16x64:   dotF16x64Generic,
		axpyF16F64:  axpyF16F64Generic,
		foldLanes64: foldLanes64Generic,
		roundF16:    roundF16Generic,

		dotF16x64Rows:  dotF16x64RowsGeneric,
		axpyF16Lanes64: axpyF16Lanes64Generic,
		axpyF16F64Rows: axpyF16F64RowsGeneric,
		quantizeF16:    quantizeF16Generic,
		readSum:        readSumGeneric,
	}
	ks.dotR4x8Q4_0Q8_0 = dotR4x8Q4_0Q8_0Generic
	ks.dotR4x8Q8_0Q8_0 = dotR4x8Q8_0Q8_0Generic
	ks.unpack4Q4_0 = unpack4Q4_0Generic
	ks.scan4Q8_0 = scan4Q8_0Generic
	ks.scatter4x8 = scatter4x8Go
	ks.pack8Q8_0 = packTile8Q8_0
	ks.pack8Q8_0Abs = packTile8Q8_0Abs
	ks.dotR4x8Q8_0Q8_0Abs = dotR4x8Q8_0Q8_0AbsGeneric
	ks.dotR4x8Q4_KQ8_K = dotR4x8Q4_KQ8_KGeneric
	ks.prep4Q4_K = prep4Q4_KGeneric
	ks.prep4x8Q4_K = prep4x8Q4_KGeneric
	ks.dotR8TQ4_0Q8_0 = rows8TGeneric(dotQ4_0Q8_0Generic)
	ks.dotR4Q4_KQ8_K = rows4(dotQ4_KQ8_KGeneric)
	ks.dotR4x8Q6_KQ8_K = dotR4x8Q6_KQ8_KGeneric
	ks.prep4Q6_K = prep4Q6_KGeneric
	ks.prep4x8Q6_K = prep4x8Q6_KGeneric
	ks.dotR4Q6_KQ8_K = rows4(dotQ6_KQ8_KGeneric)
	return ks
}

// loop4 makes a four-token kernel out of a one-token one.
func loop4(one func(w, x []byte) float32) func(w, x []byte, stride int, out *[4]float32) {
	return func(w, x []byte, stride int, out *[4]float32) {
		n := len(x) - 3*stride
		for k := range out {
			out[k] = one(w, x[k*stride:k*stride+n])
		}
	}
}

// rows4 makes a four-row kernel out of a one-row one.
func rows4(one func(w, x []byte) float32) func(w []byte, wstride int, x []byte, out *[4]float32) {
	return func(w []byte, wstride int, x []byte, out *[4]float32) {
		n := len(w) - 3*wstride
		for k := range out {
			out[k] = one(w[k*wstride:k*wstride+n], x)
		}
	}
}
