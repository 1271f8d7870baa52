//go:build !noasm && (amd64 || arm64)

package quant

// Adapters from the assembly kernels' pointer-and-count form to the kernel
// set's slice form, shared by the architectures with assembly.

// blocks wraps an assembly dot over nb weight blocks of wsize bytes and
// activation blocks of xsize bytes: the row's block count, the bounds
// checked once, 0 for an empty row (what the generic bodies return).
func blocks(asm func(w, x *byte, nb int) float32, wsize, xsize int) func(w, x []byte) float32 {
	return func(w, x []byte) float32 {
		nb := len(w) / wsize
		if nb == 0 {
			return 0
		}
		_ = x[nb*xsize-1]
		return asm(&w[0], &x[0], nb)
	}
}

// blocks4 is blocks for a four-token kernel (tokens at x, x+stride, …).
func blocks4(asm func(w, x *byte, stride, nb int, out *[4]float32), wsize, xsize int) func(w, x []byte, stride int, out *[4]float32) {
	return func(w, x []byte, stride int, out *[4]float32) {
		nb := len(w) / wsize
		if nb == 0 {
			*out = [4]float32{}
			return
		}
		_ = x[3*stride+nb*xsize-1]
		asm(&w[0], &x[0], stride, nb, out)
	}
}
