package quant

// Dot-product kernels as VecDot calls them. Each forwards to its generic
// reference body in kernels_generic.go; an architecture-specific twin
// replaces a forwarder (behind build tags, keeping `-tags noasm` on the
// generic path) without changing the signature. Every kernel takes whole
// weight blocks w and the matching activation blocks x, already checked by
// VecDot.

func dotF32Bytes(w, x []byte) float32 { return dotF32BytesGeneric(w, x) }
func dotF32(a, b []float32) float32   { return dotF32Generic(a, b) }
func dotF16(w, x []byte) float32      { return dotF16Generic(w, x) }
func dotBF16(w, x []byte) float32     { return dotBF16Generic(w, x) }
func dotQ4_0Q8_0(w, x []byte) float32 { return dotQ4_0Q8_0Generic(w, x) }
func dotQ4_1Q8_1(w, x []byte) float32 { return dotQ4_1Q8_1Generic(w, x) }
func dotQ5_0Q8_0(w, x []byte) float32 { return dotQ5_0Q8_0Generic(w, x) }
func dotQ5_1Q8_1(w, x []byte) float32 { return dotQ5_1Q8_1Generic(w, x) }
func dotQ8_0Q8_0(w, x []byte) float32 { return dotQ8_0Q8_0Generic(w, x) }
func dotQ2_KQ8_K(w, x []byte) float32 { return dotQ2_KQ8_KGeneric(w, x) }
func dotQ3_KQ8_K(w, x []byte) float32 { return dotQ3_KQ8_KGeneric(w, x) }
func dotQ4_KQ8_K(w, x []byte) float32 { return dotQ4_KQ8_KGeneric(w, x) }
func dotQ5_KQ8_K(w, x []byte) float32 { return dotQ5_KQ8_KGeneric(w, x) }
func dotQ6_KQ8_K(w, x []byte) float32 { return dotQ6_KQ8_KGeneric(w, x) }
