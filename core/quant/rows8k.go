package quant

import "github.com/minfer/minfer/gguf"

// The x8 layout of the K types with a four-row decode kernel (Q4_K, Q6_K;
// rows8i.go has Q4_0's and Q8_0's): a group of eight rows is two halves of
// four rows (rows 0..3, then 4..7), each half one sequential stream that
// holds, per super-block j, the four rows' super-blocks j one after
// another (4·144 bytes for Q4_K, 4·210 for Q6_K). The super-blocks are the
// file's bytes, and a group keeps its size (8·WeightRowBytes).
//
// In the file layout the four-row kernels read four streams a row apart;
// from memory on two threads of an Intel Xeon VM they read Q4_K at ~22
// GB/s and Q6_K at ~24 against ~32 GB/s of bandwidth, where in cache one
// thread alone runs them at ~33 and ~36 GB/s (BenchmarkMatVecDRAM2,
// BenchmarkFourRowQ4_K/Q6_K): the stream, not the arithmetic, was short.
// The AVX-512 and AVX2 levels have the half-group kernels (Q4_K_M decode
// on that VM: +8.7 % at AVX-512, +27 % at the AVX2 level:
// bench/results/2026-12-02-s12-cpu-kx8).

// kx8 reports whether t has the K x8 layout, and its super-block bytes.
func kx8(t gguf.GGMLType) (bs int, ok bool) {
	switch t {
	case gguf.TypeQ4_K:
		return bytesQ4K, true
	case gguf.TypeQ6_K:
		return bytesQ6K, true
	}
	return 0, false
}

// kx8Offset is where super-block j of row r (0..7) of a group of rows of
// nb super-blocks of bs bytes lies in the K x8 layout.
func kx8Offset(r, j, nb, bs int) int {
	return (r/4)*4*nb*bs + j*4*bs + (r%4)*bs
}

// moveK8 copies each super-block of a group of eight rows of nb
// super-blocks of bs bytes between the file layout (file) and the K x8
// layout (x8): into x8 (Interleave8) or back into file (Deinterleave8).
func moveK8(file, x8 []byte, nb, bs int, toX8 bool) {
	wrb := nb * bs
	for r := 0; r < 8; r++ {
		for j := 0; j < nb; j++ {
			f := file[r*wrb+j*bs : r*wrb+(j+1)*bs]
			o := kx8Offset(r, j, nb, bs)
			if toX8 {
				copy(x8[o:o+bs], f)
			} else {
				copy(f, x8[o:o+bs])
			}
		}
	}
}

// dotRowX8K is the dot of row r (0..7) of the K x8 group w against x: the
// one-row generic kernel one super-block at a time, its per-block terms
// added in block order as it adds them (each generic call returns 0 plus
// the block's term: that term exactly), so the bits are the row's Dot.
func (k *Kernel) dotRowX8K(w []byte, r int, x []byte) float32 {
	bs, _ := kx8(k.t)
	nb := k.n / qkK
	one := dotQ4_KQ8_KGeneric
	if k.t == gguf.TypeQ6_K {
		one = dotQ6_KQ8_KGeneric
	}
	var sum float32
	for j := 0; j < nb; j++ {
		o := kx8Offset(r, j, nb, bs)
		sum += one(w[o:o+bs:o+bs], x[j*bytesQ8K:(j+1)*bytesQ8K:(j+1)*bytesQ8K])
	}
	return sum
}

// dot8RowsX8K is Dot8RowsX8 for the K types: the level's four-row kernel
// on each half's stream, or dotRowX8K row by row where it has none.
func (k *Kernel) dot8RowsX8K(w, x []byte, out *[8]float32) {
	h := 4 * k.wrb
	if k.rows4x4 == nil {
		for r := range out {
			out[r] = k.dotRowX8K(w, r, x)
		}
		return
	}
	k.rows4x4(w[:h:h], x, (*[4]float32)(out[:4]))
	k.rows4x4(w[h:2*h:2*h], x, (*[4]float32)(out[4:]))
}
