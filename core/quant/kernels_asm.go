//go:build !noasm && (amd64 || arm64)

package quant

import "unsafe"

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

// blocksR4 is blocks for a four-row kernel (rows at w, w+wstride, …, one
// activation row): the block count of the last row.
func blocksR4(asm func(w *byte, wstride int, x *byte, nb int, out *[4]float32), wsize, xsize int) func(w []byte, wstride int, x []byte, out *[4]float32) {
	return func(w []byte, wstride int, x []byte, out *[4]float32) {
		nb := (len(w) - 3*wstride) / wsize
		if nb <= 0 {
			*out = [4]float32{}
			return
		}
		_ = x[nb*xsize-1]
		asm(&w[0], wstride, &x[0], nb, out)
	}
}

// blocksR4x4 is blocks for a four-row kernel on one half of a K x8 group
// (rows8k.go: four super-blocks of wsize bytes a block column).
func blocksR4x4(asm func(w *byte, x *byte, nb int, out *[4]float32), wsize, xsize int) func(w, x []byte, out *[4]float32) {
	return func(w, x []byte, out *[4]float32) {
		nb := len(w) / (4 * wsize)
		if nb <= 0 {
			*out = [4]float32{}
			return
		}
		_ = x[nb*xsize-1]
		asm(&w[0], &x[0], nb, out)
	}
}

// quantizer wraps an assembly activation quantizer over nb blocks of n
// floats into blocks of size bytes.
func quantizer(asm func(src *float32, dst *byte, nb int), n, size int) func(src []float32, dst []byte) {
	return func(src []float32, dst []byte) {
		nb := len(src) / n
		if nb == 0 {
			return
		}
		_ = dst[nb*size-1]
		asm(&src[0], &dst[0], nb)
	}
}

// The float dots: the assembly adds whole groups of 32 elements in lanes,
// and the tails are added in Go exactly as the generic bodies add them.

// f32BytesDot is dotF32Bytes over the assembly's lane part.
func f32BytesDot(lanes func(a, b *byte, n32 int) float32) func(w, x []byte) float32 {
	return func(w, x []byte) float32 {
		n := len(w) / 4
		x = x[:4*n]
		np := n &^ 31
		var sum float32
		if np > 0 {
			sum = lanes(&w[0], &x[0], np/32)
		}
		for i := np; i < n; i++ {
			sum += float32(f32le(w[4*i:]) * f32le(x[4*i:]))
		}
		return sum
	}
}

// f32Dot is dotF32 over the assembly's lane part.
func f32Dot(lanes func(a, b *byte, n32 int) float32) func(a, b []float32) float32 {
	return func(a, b []float32) float32 {
		n := len(a)
		b = b[:n]
		np := n &^ 31
		var sum float32
		if np > 0 {
			sum = lanes((*byte)(unsafe.Pointer(&a[0])), (*byte)(unsafe.Pointer(&b[0])), np/32)
		}
		for i := np; i < n; i++ {
			sum += float32(a[i] * b[i])
		}
		return sum
	}
}

// half16Dot is dotF16 (or dotBF16, with its own conversion) over the
// assembly's lane part: the tail in float64 after the lanes' float32.
func half16Dot(lanes func(a, b *byte, n32 int) float32, conv func(uint16) float32) func(w, x []byte) float32 {
	return func(w, x []byte) float32 {
		n := len(w) / 2
		x = x[:2*n]
		np := n &^ 31
		var l float32
		if np > 0 {
			l = lanes(&w[0], &x[0], np/32)
		}
		sum := float64(l)
		for i := np; i < n; i++ {
			sum += float64(conv(le16(w[2*i:])) * conv(le16(x[2*i:])))
		}
		return float32(sum)
	}
}
