package quant

import (
	"fmt"

	"github.com/minfer/minfer/gguf"
)

// Kernel is the dot product for one weight type and row length, resolved
// once (per matrix product) at the current level, so the hot loop makes no
// type switch and no shape check per row. The zero Kernel is not usable.
type Kernel struct {
	t        gguf.GGMLType
	n        int
	wrb, xrb int
	one      func(w, x []byte) float32
	four     func(w, x []byte, stride int, out *[4]float32)
	rows4    func(w []byte, wstride int, x []byte, out *[4]float32)
	fourT    func(w, x []byte, stride int, tab []byte, out *[4]float32)
	rows4T   func(w []byte, wstride int, x, tab []byte, out *[4]float32)
	t8       tile8Kernel
	rows8T   func(w []byte, wstride int, x, tab []byte, out *[8]float32)
	rows8X8  func(w, x, tab []byte, out *[8]float32)
	// rows16, prep16: the col16 decode kernel and the tile kernels'
	// preparation of a col16 group's row quad (rows16c.go), where the
	// level has them; rows16 set makes col16 the kernel's Layout.
	rows16 func(w, x, tab []byte, out *[16]float32)
	// rows16x4: rows16 on four groups at once (DotGroups4), where the
	// level has it.
	rows16x4 func(w []byte, stride int, x, tab []byte, out *[64]float32)
	// rows8x4: the same for x8 groups (Q8_0).
	rows8x4 func(w []byte, stride int, x, tab []byte, out *[32]float32)
	prep16  func(group []byte, q int, u []byte)
	deint16 func(dst []byte, wrb int, src []byte)
	rows4x4 func(w, x []byte, out *[4]float32)
	deint8  func(dst []byte, wrb int, src []byte)
}

// NewKernel resolves the kernel for rows of n elements of weight type t
// against activations quantized to VecDotType(t). It allocates nothing.
func NewKernel(t gguf.GGMLType, n int) (Kernel, error) {
	if !Supported(t) {
		return Kernel{}, fmt.Errorf("quant: dot product with %s weights: %w", t, ErrUnsupported)
	}
	wrb, err := rowBytes(t, n)
	if err != nil {
		return Kernel{}, err
	}
	xrb, err := rowBytes(VecDotType(t), n)
	if err != nil {
		return Kernel{}, err
	}
	k := Kernel{t: t, n: n, wrb: wrb, xrb: xrb}
	k.one, k.four = cur.forType(t)
	k.fourT = cur.fourTFor(t)
	k.t8 = cur.tile8For(t)
	if t == gguf.TypeQ4_0 {
		k.rows4T = cur.dotR4TQ4_0Q8_0
		if k.rows4T != nil { // the token table exists only with rows4T
			k.rows8T = cur.dotR8TQ4_0Q8_0
			k.rows8X8 = cur.dotR8X8Q4_0Q8_0
			k.deint8 = cur.deinterleave8Q4_0
			k.rows16 = cur.dotR16C16Q4_0Q8_0
			if 16*wrb >= groups4MinBytes {
				k.rows16x4 = cur.dotR16C16x4Q4_0Q8_0
			}
			k.deint16 = cur.deinterleave16Q4_0
		}
		if k.t8.prepX8 != nil { // the same preparation as the x8 halves'
			k.prep16 = cur.prep4x16Q4_0S
		}
	}
	switch t {
	case gguf.TypeQ4_0:
		k.rows4 = cur.dotR4Q4_0Q8_0
	case gguf.TypeQ8_0:
		k.rows4 = cur.dotR4Q8_0Q8_0
		k.rows8X8 = cur.dotR8X8Q8_0Q8_0
		if 8*wrb >= groups4MinBytes {
			k.rows8x4 = cur.dotR8X8x4Q8_0Q8_0
		}
		k.deint8 = cur.deinterleave8Q8_0
	case gguf.TypeQ4_K:
		k.rows4 = cur.dotR4Q4_KQ8_K
		k.rows4x4 = cur.dotR4x4Q4_KQ8_K
		k.rows16 = cur.dotR16C16Q4_KQ8_K
		k.deint16 = cur.deinterleave16Q4_K
		if k.t8.prepX8 != nil { // the tile kernels' preparation, from a c16 quad
			k.prep16 = cur.prep4x16Q4_K
		}
	case gguf.TypeQ6_K:
		k.rows4 = cur.dotR4Q6_KQ8_K
		k.rows4x4 = cur.dotR4x4Q6_KQ8_K
		k.rows16 = cur.dotR16C16Q6_KQ8_K
		k.deint16 = cur.deinterleave16Q6_K
		if k.t8.prepX8 != nil { // the tile kernels' preparation, from a c16 quad
			k.prep16 = cur.prep4x16Q6_K
		}
	}
	return k, nil
}

// Type is the weight type.
func (k *Kernel) Type() gguf.GGMLType { return k.t }

// WeightRowBytes is the byte length of one weight row.
func (k *Kernel) WeightRowBytes() int { return k.wrb }

// ActRowBytes is the byte length of one quantized activation row.
func (k *Kernel) ActRowBytes() int { return k.xrb }

// Dot is VecDot for one weight row w and one activation row x, both of
// exactly the kernel's row lengths (a shorter slice panics).
func (k *Kernel) Dot(w, x []byte) float32 {
	return k.one(w[:k.wrb:k.wrb], x[:k.xrb:k.xrb])
}

// Dot4 is Dot of one weight row against four consecutive activation rows
// x[0:ActRowBytes], x[ActRowBytes:2·ActRowBytes], …; the weight blocks are
// read once for the four. Each out[k] is bit-identical to Dot with row k.
func (k *Kernel) Dot4(w, x []byte, out *[4]float32) {
	w = w[:k.wrb:k.wrb]
	if k.four == nil {
		for i := range out {
			out[i] = k.one(w, x[i*k.xrb:(i+1)*k.xrb:(i+1)*k.xrb])
		}
		return
	}
	k.four(w, x[:4*k.xrb:4*k.xrb], k.xrb, out)
}

// Dot4Rows is Dot of four consecutive weight rows (w holds them at
// WeightRowBytes apart) against one activation row; out[k] is row k's,
// bit-identical to Dot. Types with a four-row kernel read the activation
// blocks once for the four.
func (k *Kernel) Dot4Rows(w, x []byte, out *[4]float32) {
	x = x[:k.xrb:k.xrb]
	w = w[: 4*k.wrb : 4*k.wrb]
	if k.rows4 == nil {
		for i := range out {
			out[i] = k.one(w[i*k.wrb:(i+1)*k.wrb:(i+1)*k.wrb], x)
		}
		return
	}
	k.rows4(w, k.wrb, x, out)
}

// forType returns the one- and (where the level has one) four-token
// kernels of weight type t; t must be Supported.
func (ks *kernelSet) forType(t gguf.GGMLType) (func(w, x []byte) float32, func(w, x []byte, stride int, out *[4]float32)) {
	switch t {
	case gguf.TypeQ4_0:
		return ks.dotQ4_0Q8_0, ks.dot4Q4_0Q8_0
	case gguf.TypeQ8_0:
		return ks.dotQ8_0Q8_0, ks.dot4Q8_0Q8_0
	case gguf.TypeQ4_K:
		return ks.dotQ4_KQ8_K, ks.dot4Q4_KQ8_K
	case gguf.TypeQ6_K:
		return ks.dotQ6_KQ8_K, ks.dot4Q6_KQ8_K
	case gguf.TypeF16:
		return ks.dotF16, nil
	case gguf.TypeF32:
		return ks.dotF32Bytes, nil
	case gguf.TypeBF16:
		return ks.dotBF16, nil
	case gguf.TypeQ4_1:
		return ks.dotQ4_1Q8_1, ks.dot4Q4_1Q8_1
	case gguf.TypeQ5_0:
		return ks.dotQ5_0Q8_0, ks.dot4Q5_0Q8_0
	case gguf.TypeQ5_1:
		return ks.dotQ5_1Q8_1, ks.dot4Q5_1Q8_1
	case gguf.TypeQ2_K:
		return ks.dotQ2_KQ8_K, ks.dot4Q2_KQ8_K
	case gguf.TypeQ3_K:
		return ks.dotQ3_KQ8_K, ks.dot4Q3_KQ8_K
	case gguf.TypeQ5_K:
		return ks.dotQ5_KQ8_K, ks.dot4Q5_KQ8_K
	}
	panic("quant: forType of an unsupported type " + t.String())
}
