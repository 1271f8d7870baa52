//go:build !noasm

package quant

//go:noescape
func q4_0q8_0r4x8AVX2(w *byte, wstride int, u, tile *byte, nb int, out *[32]float32)

//go:noescape
func q8_0q8_0r4x8AVX2(w *byte, wstride int, tile *byte, nb int, out *[32]float32)

//go:noescape
func unpack4Q4_0AVX2asm(w *byte, wstride int, nb int, u *byte)

func dotR4x8Q4_0Q8_0AVX2(w []byte, wstride int, u, tile []byte, out *[32]float32) {
	nb := len(tile) / tile8Block
	if nb == 0 {
		*out = [32]float32{}
		return
	}
	_ = w[3*wstride+nb*bytesQ4-1]
	_ = u[nb*prep4Q4_0-1]
	q4_0q8_0r4x8AVX2(&w[0], wstride, &u[0], &tile[0], nb, out)
}

func dotR4x8Q8_0Q8_0AVX2(w []byte, wstride int, _, tile []byte, out *[32]float32) {
	nb := len(tile) / tile8Block
	if nb == 0 {
		*out = [32]float32{}
		return
	}
	_ = w[3*wstride+nb*bytesQ80-1]
	q8_0q8_0r4x8AVX2(&w[0], wstride, &tile[0], nb, out)
}

func unpack4Q4_0AVX2(w []byte, wstride int, u []byte) {
	nb := len(u) / prep4Q4_0
	if nb == 0 {
		return
	}
	_ = w[3*wstride+nb*bytesQ4-1]
	unpack4Q4_0AVX2asm(&w[0], wstride, nb, &u[0])
}

//go:noescape
func q4_Kq8_Kr4x8AVX2(u, tile *byte, nb int, out *[32]float32)

func dotR4x8Q4_KQ8_KAVX2(_ []byte, _ int, u, tile []byte, out *[32]float32) {
	nb := len(tile) / tile8KBlock
	if nb == 0 {
		*out = [32]float32{}
		return
	}
	_ = u[nb*prep4Q4_KBlock-1]
	q4_Kq8_Kr4x8AVX2(&u[0], &tile[0], nb, out)
}

//go:noescape
func q8_0q8_0r2x16AVX2(w *byte, wstride int, ta, tb *byte, nb int, out *float32)

// pairQ8_0 wraps a Q8_0 pair kernel (tile8Kernel.pair): rows r0, r0+1
// of the four rows in w against tiles ta and tb.
func pairQ8_0(asm func(w *byte, wstride int, ta, tb *byte, nb int, out *float32)) func(w []byte, wstride int, u []byte, r0 int, ta, tb []byte, out []float32) {
	return func(w []byte, wstride int, _ []byte, r0 int, ta, tb []byte, out []float32) {
		nb := len(ta) / tile8Block
		_ = out[48-1]
		if nb == 0 {
			clear(out[:16])
			clear(out[32:48])
			return
		}
		_ = w[(r0+1)*wstride+nb*bytesQ80-1]
		_ = tb[nb*tile8Block-1]
		asm(&w[r0*wstride], wstride, &ta[0], &tb[0], nb, &out[0])
	}
}

//go:noescape
func q4_0q8_0r2x16AVX2(w *byte, wstride int, u, ta, tb *byte, nb int, out *float32)

//go:noescape
func q4_0q8_0r4x16AVX2(w *byte, wstride int, u, ta, tb *byte, nb int, out *float32)

//go:noescape
func q4_Kq8_Kr2x16AVX2(u *byte, r0 int, ta, tb *byte, nb int, out *float32)

// pairQ4_0 wraps a Q4_0 pair kernel: rows r0, r0+1 of the four rows in w
// (u their unpacked nibbles) against tiles ta and tb.
func pairQ4_0(asm func(w *byte, wstride int, u, ta, tb *byte, nb int, out *float32)) func(w []byte, wstride int, u []byte, r0 int, ta, tb []byte, out []float32) {
	return func(w []byte, wstride int, u []byte, r0 int, ta, tb []byte, out []float32) {
		nb := len(ta) / tile8Block
		_ = out[48-1]
		if nb == 0 {
			clear(out[:16])
			clear(out[32:48])
			return
		}
		_ = w[(r0+1)*wstride+nb*bytesQ4-1]
		_ = u[nb*prep4Q4_0-1]
		_ = tb[nb*tile8Block-1]
		asm(&w[r0*wstride], wstride, &u[32*r0], &ta[0], &tb[0], nb, &out[0])
	}
}

// pairQ4_K wraps a Q4_K pair kernel: rows r0, r0+1 of the four rows
// prepared in u against tiles ta and tb.
func pairQ4_K(asm func(u *byte, r0 int, ta, tb *byte, nb int, out *float32)) func(w []byte, wstride int, u []byte, r0 int, ta, tb []byte, out []float32) {
	return func(_ []byte, _ int, u []byte, r0 int, ta, tb []byte, out []float32) {
		nb := len(ta) / tile8KBlock
		_ = out[48-1]
		if nb == 0 {
			clear(out[:16])
			clear(out[32:48])
			return
		}
		_ = u[nb*prep4Q4_KBlock-1]
		_ = tb[nb*tile8KBlock-1]
		asm(&u[0], r0, &ta[0], &tb[0], nb, &out[0])
	}
}

//go:noescape
func q4_Kq8_Kr4x16AVX2(u, ta, tb *byte, nb int, out *float32)

//go:noescape
func prep4Q4_KAVX2asm(w *byte, wstride, adv, nb int, u *byte)

func prep4Q4_KAVX2(w []byte, wstride int, u []byte) {
	nb := len(u) / prep4Q4_KBlock
	if nb == 0 {
		return
	}
	_ = w[3*wstride+nb*bytesQ4K-1]
	prep4Q4_KAVX2asm(&w[0], wstride, bytesQ4K, nb, &u[0])
}

// prep4x8Q4_KAVX2 is prep4x8Q4_KGeneric.
var prep4x8Q4_KAVX2 = prepK8(prep4Q4_KAVX2asm, bytesQ4K, prep4Q4_KBlock)

// prepK8 wraps a K-type row preparation (rows wstride apart, super-blocks
// adv apart) for one half of a K x8 group (rows8k.go) of super-blocks of
// bs bytes, prepared into prepBlock bytes each.
func prepK8(asm func(w *byte, wstride, adv, nb int, u *byte), bs, prepBlock int) func(group []byte, half int, u []byte) {
	return func(group []byte, half int, u []byte) {
		nb := len(u) / prepBlock
		if nb == 0 {
			return
		}
		h := 4 * nb * bs
		_ = group[(half+1)*h-1]
		asm(&group[half*h], bs, 4*bs, nb, &u[0])
	}
}

// The AVX2 Q8_0 kernels on tile8Abs tiles (tile8q8.go).

//go:noescape
func q8_0q8_0r4x8t8aAVX2(w *byte, wstride int, tile *byte, nb int, out *[32]float32)

//go:noescape
func q8_0q8_0r2x16t8aAVX2(w *byte, wstride int, ta, tb *byte, nb int, out *float32)

//go:noescape
func q8_0q8_0r2x16absAVX2(w *byte, wstride int, ta, tb *byte, nb int, out *float32)

//go:noescape
func q8_0q8_0r4x16absAVX2(w *byte, wstride int, ta, tb *byte, nb int, out *float32)

//go:noescape
func scan4Q8_0AVX2asm(w *byte, wstride int, nb int) bool

func dotR4x8Q8_0Q8_0AbsAVX2(w []byte, wstride int, _, tile []byte, out *[32]float32) {
	nb := len(tile) / tile8AbsBlock
	if nb == 0 {
		*out = [32]float32{}
		return
	}
	_ = w[3*wstride+nb*bytesQ80-1]
	q8_0q8_0r4x8t8aAVX2(&w[0], wstride, &tile[0], nb, out)
}

// dotR2x16Q8_0Q8_0AbsAVX2 runs rows r0, r0+1 of the four rows in w against
// tiles ta and tb: |x| against w·sign(x) unless the quad's scan (u[0])
// found a −128 weight quant, then ggml's |w| against x·sign(w).
func dotR2x16Q8_0Q8_0AbsAVX2(w []byte, wstride int, u []byte, r0 int, ta, tb []byte, out []float32) {
	nb := len(ta) / tile8AbsBlock
	_ = out[48-1]
	if nb == 0 {
		clear(out[:16])
		clear(out[32:48])
		return
	}
	_ = w[(r0+1)*wstride+nb*bytesQ80-1]
	_ = tb[nb*tile8AbsBlock-1]
	if u[0] == 0 {
		q8_0q8_0r2x16absAVX2(&w[r0*wstride], wstride, &ta[0], &tb[0], nb, &out[0])
		return
	}
	q8_0q8_0r2x16t8aAVX2(&w[r0*wstride], wstride, &ta[0], &tb[0], nb, &out[0])
}

// dotR4x16Q8_0Q8_0AbsAVX2 runs the four rows in w against tiles ta and
// tb, row r's results for ta at out[8r:8r+8], for tb at out[32+8r:]: one
// pass of the quad kernel, unless the quad's scan (u[0]) found a −128
// weight quant, then the |w| form's pair kernel for rows 0, 1 and 2, 3.
func dotR4x16Q8_0Q8_0AbsAVX2(w []byte, wstride int, u []byte, ta, tb []byte, out []float32) {
	nb := len(ta) / tile8AbsBlock
	_ = out[64-1]
	if nb == 0 {
		clear(out[:64])
		return
	}
	_ = w[3*wstride+nb*bytesQ80-1]
	_ = tb[nb*tile8AbsBlock-1]
	if u[0] == 0 {
		q8_0q8_0r4x16absAVX2(&w[0], wstride, &ta[0], &tb[0], nb, &out[0])
		return
	}
	q8_0q8_0r2x16t8aAVX2(&w[0], wstride, &ta[0], &tb[0], nb, &out[0])
	q8_0q8_0r2x16t8aAVX2(&w[2*wstride], wstride, &ta[0], &tb[0], nb, &out[16])
}

// scan4Q8_0AVX2 is scan4Q8_0Generic with one compare per 32 quants.
func scan4Q8_0AVX2(w []byte, wstride int, u []byte) {
	nb := len(u)
	if nb == 0 {
		return
	}
	u[0] = 0
	_ = w[3*wstride+nb*bytesQ80-1]
	if scan4Q8_0AVX2asm(&w[0], wstride, nb) {
		u[0] = 1
	}
}

//go:noescape
func packTile8Q8_0AVX2(x *byte, xrb, nb int, tile *byte)

//go:noescape
func packTile8Q8_0AbsAVX2(x *byte, xrb, nb int, tile *byte)

// packTile8 wraps a Q8_0 tile packer of blk bytes a tile block: nb blocks
// of the eight activation rows in x (xrb apart) into tile.
func packTile8(asm func(x *byte, xrb, nb int, tile *byte), blk int) func(x []byte, xrb, nb int, tile []byte) {
	return func(x []byte, xrb, nb int, tile []byte) {
		if nb <= 0 {
			return
		}
		_ = x[7*xrb+nb*bytesQ80-1]
		_ = tile[nb*blk-1]
		asm(&x[0], xrb, nb, &tile[0])
	}
}
