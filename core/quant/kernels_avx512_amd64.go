//go:build !noasm

package quant

import "golang.org/x/sys/cpu"

// The AVX512 level: every AVX2 kernel, with AVX-512 VNNI twins of the hot
// ones of the Q4_0, Q8_0 and Q4_K weights (the prefill tile pairs and the
// decode multi-row kernels) and of Q6_K's four-row decode kernel. Offered
// when the CPU (and the OS, which x/sys/cpu checks for the ZMM state) has
// AVX-512 F, BW, VL and VNNI on top of the AVX2 level's AVX2, FMA and F16C.

// hasAVX512 reports whether this CPU runs the AVX512 level.
func hasAVX512() bool {
	x := cpu.X86
	return x.HasAVX2 && x.HasFMA && x.HasF16C &&
		x.HasAVX512F && x.HasAVX512BW && x.HasAVX512VL && x.HasAVX512VNNI
}

func init() {
	if !hasAVX512() {
		return
	}
	ks := *avx2Kernels()
	// The VNNI Q8_0 kernels read tile8Block's tiles, not tile8Abs.
	ks.tile8Q8_0Abs = false
	ks.dotR2x16Q4_0Q8_0 = pairQ4_0(q4_0q8_0r2x16AVX512)
	ks.dotR2x16Q8_0Q8_0 = pairQ8_0(q8_0q8_0r2x16AVX512)
	ks.dotR2x16Q4_KQ8_K = pairQ4_K(q4_Kq8_Kr2x16AVX512)
	// The Q4_0 quad kernel reads its rows' scales as float32 from the
	// preparation's tail (unpack4Q4_0S).
	ks.dotR4x16Q4_0Q8_0 = quadPrep(q4_0q8_0r4x16sAVX512, prep4Q4_0S, 0)
	ks.unpack4Q4_0S = unpack4Q4_0S(ks.unpack4Q4_0, scales4Q4_0AVX512)
	// The Q8_0 quad kernel takes its rows' quants biased to unsigned by
	// the preparation (once per row quad and prompt step), not by an XOR
	// per broadcast: 1.3x the kernel on a Xeon (BenchmarkTile8 Q8_0/x2).
	ks.dotR4x16Q8_0Q8_0 = quadPrep(q8_0q8_0r4x16pAVX512, prep4Q8_0, 0)
	ks.dotR8x16Q8_0Q8_0 = octPrep(q8_0q8_0r8x16pAVX512, tile8Block, prep4Q8_0)
	ks.dotR8x16Q4_KQ8_K = octPrep(q4_Kq8_Kr8x16AVX512, tile8KBlock, prep4Q4_KBlock)
	ks.dotR8x16Q4_0Q8_0 = octPrep(q4_0q8_0r8x16sAVX512, tile8Block, prep4Q4_0S)
	ks.bias4Q8_0 = bias4Q8_0(bias4Q8_0AVX512)
	ks.readSum, ks.readSumSIMD = readSumLanes(readSumAVX512, 512), true
	// The same preparations of the halves of x8 groups as they lie.
	ks.prep4x8Q4_0S = prepX8(unpack4x8Q4_0SAVX512, bytesQ4x8, prep4Q4_0S, 16)
	ks.prep4x8Q8_0 = prepX8(bias4x8Q8_0AVX512, bytesQ80x8, prep4Q8_0, 32)
	ks.dotR4x16Q4_KQ8_K = quadK(q4_Kq8_Kr4x16AVX512, tile8KBlock, prep4Q4_KBlock)
	ks.dotR4x16Q6_KQ8_K = quadK(q6_Kq8_Kr4x16AVX512, tile8Q6KBlock, prep4Q6_KBlock)
	ks.dotR8TQ4_0Q8_0 = rows8TQ4_0(q4_0q8_0r8tAVX512)
	ks.dotR8X8Q4_0Q8_0 = rows8X8(q4_0q8_0r8x8AVX512, bytesQ4x8)
	ks.dotR8X8Q8_0Q8_0 = rows8X8(q8_0q8_0r8x8AVX512, bytesQ80x8)
	ks.dotR8X8x4Q8_0Q8_0 = groups4(q8_0q8_0r8x8x4AVX512, bytesQ80x8)
	// Q4_0's sixteen-row column layout (rows16c.go): its decode kernel,
	// the tile kernels' preparation from it and its deinterleave.
	ks.dotR16C16Q4_0Q8_0 = rows16C16(c16Q4_0Kernel(cpu.X86.HasAVX512GFNI))
	if cpu.X86.HasAVX512GFNI {
		ks.dotR16C16x4Q4_0Q8_0 = groups4(c16Q4_0x4Kernel(), bytesQ4c16)
	}
	ks.prep4x16Q4_0S = prep16(prep4x16Q4_0SAVX512)
	ks.deinterleave16Q4_0 = deinterleave16(deinterleave16Q4_0AVX512)
	// Q4_K's and Q6_K's (rows16k.go).
	ks.dotR16C16Q4_KQ8_K = rows16C16Q4K
	ks.prep4x16Q4_K = prep16Q4K
	ks.deinterleave16Q4_K = deinterleave16K(gather4C16Q4KAVX512, bytesQ4K)
	ks.dotR16C16Q6_KQ8_K = rows16C16Q6K
	ks.prep4x16Q6_K = prep16Q6K
	ks.deinterleave16Q6_K = deinterleave16K(gather4C16Q6KAVX512, bytesQ6K)
	ks.dotR4Q8_0Q8_0 = blocksR4(q8_0q8_0r4AVX512, bytesQ80, bytesQ80)
	ks.dotR4Q4_KQ8_K = blocksR4(q4_Kq8_Kr4AVX512, bytesQ4K, bytesQ8K)
	ks.dotR4Q6_KQ8_K = blocksR4(q6_Kq8_Kr4AVX512, bytesQ6K, bytesQ8K)
	ks.dotR4x4Q4_KQ8_K = blocksR4x4(q4_Kq8_Kr4x4AVX512, bytesQ4K, bytesQ8K)
	ks.dotR4x4Q6_KQ8_K = blocksR4x4(q6_Kq8_Kr4x4AVX512, bytesQ6K, bytesQ8K)
	// Attention: the K dots of head dimension 64 four heads at a time, the
	// V rows into lanes sixteen columns a ZMM.
	ks.dotF16x64Rows = dotF16x64RowsAVX512
	ks.axpyF16Lanes64 = axpyF16Lanes64AVX512
	ks.axpyF16Lanes64Heads = axpyF16Lanes64HeadsAVX512
	register(AVX512, &ks)
}

//go:noescape
func q4_0q8_0r2x16AVX512(w *byte, wstride int, u, ta, tb *byte, nb int, out *float32)

//go:noescape
func q8_0q8_0r2x16AVX512(w *byte, wstride int, ta, tb *byte, nb int, out *float32)

//go:noescape
func q4_Kq8_Kr2x16AVX512(u *byte, r0 int, ta, tb *byte, nb int, out *float32)

//go:noescape
func q4_Kq8_Kr4x16AVX512(u, ta, tb *byte, nb int, out *float32)

//go:noescape
func q8_0q8_0r4x16pAVX512(w *byte, wstride int, u, ta, tb *byte, nb int, out *float32)

//go:noescape
func q8_0q8_0r8x16pAVX512(u0, u1, ta, tb *byte, nb int, out0, out1 *float32)

//go:noescape
func q4_Kq8_Kr8x16AVX512(u0, u1, ta, tb *byte, nb int, out0, out1 *float32)

//go:noescape
func q4_0q8_0r8x16sAVX512(u0, u1, ta, tb *byte, nb int, out0, out1 *float32)

// octPrep wraps an eight-row sixteen-token kernel: two row quads prepared
// in u0 and u1 (prepBlock bytes a block) against tiles ta and tb, each
// quad's results in the quad layout (out0: u0's 64, out1: u1's).
func octPrep(asm func(u0, u1, ta, tb *byte, nb int, out0, out1 *float32), tileBlock, prepBlock int) func(u0, u1, ta, tb []byte, out0, out1 []float32) {
	return func(u0, u1, ta, tb []byte, out0, out1 []float32) {
		nb := len(ta) / tileBlock
		_, _ = out0[64-1], out1[64-1]
		if nb == 0 {
			clear(out0[:64])
			clear(out1[:64])
			return
		}
		_, _ = u0[nb*prepBlock-1], u1[nb*prepBlock-1]
		_ = tb[nb*tileBlock-1]
		asm(&u0[0], &u1[0], &ta[0], &tb[0], nb, &out0[0], &out1[0])
	}
}

//go:noescape
func q4_0q8_0r4x16sAVX512(w *byte, wstride int, u, ta, tb *byte, nb int, out *float32)

//go:noescape
func scales4Q4_0AVX512(w *byte, wstride int, s *byte, nb int)

// unpack4Q4_0S is the preparation of q4_0q8_0r4x16sAVX512 from the
// level's unpack4Q4_0 and scales kernel: nb 128-byte blocks of nibbles (as
// unpack4Q4_0 writes them, what the level's other Q4_0 tile kernels read),
// then 16 bytes a block of the four rows' d_w as float32.
func unpack4Q4_0S(unpack func(w []byte, wstride int, u []byte), scales func(w *byte, wstride int, s *byte, nb int)) func(w []byte, wstride int, u []byte) {
	return func(w []byte, wstride int, u []byte) {
		nb := len(u) / prep4Q4_0S
		if nb == 0 {
			return
		}
		unpack(w, wstride, u[:nb*prep4Q4_0])
		_ = w[3*wstride+nb*bytesQ4-1]
		_ = u[nb*prep4Q4_0S-1]
		scales(&w[0], wstride, &u[nb*prep4Q4_0], nb)
	}
}

//go:noescape
func bias4Q8_0AVX512(w *byte, wstride int, u *byte, nb int)

//go:noescape
func unpack4x8Q4_0SAVX512(q, s, u *byte, nb int)

//go:noescape
func bias4x8Q8_0AVX512(q, s, u *byte, nb int)

// prepX8 wraps a preparation of one half of an x8 group (Q4_0: group bytes
// 144 a block, the half's quants 16 bytes on; Q8_0: 272, 32 bytes on):
// its quants from 16 + half·step bytes into a block, its scales from
// 2·4·half.
func prepX8(asm func(q, s, u *byte, nb int), group, prepBlock, step int) func(g []byte, half int, u []byte) {
	return func(g []byte, half int, u []byte) {
		nb := len(u) / prepBlock
		if nb == 0 {
			return
		}
		_ = g[nb*group-1]
		asm(&g[16+step*half], &g[8*half], &u[0], nb)
	}
}

// bias4Q8_0 wraps the preparation of the Q8_0 quad kernel's rows.
func bias4Q8_0(asm func(w *byte, wstride int, u *byte, nb int)) func(w []byte, wstride int, u []byte) {
	return func(w []byte, wstride int, u []byte) {
		nb := len(u) / prep4Q8_0
		if nb == 0 {
			return
		}
		_ = w[3*wstride+nb*bytesQ80-1]
		asm(&w[0], wstride, &u[0], nb)
	}
}

// quadPrep wraps a four-row sixteen-token kernel over the four rows in w
// (wstride apart) and their preparation in u (prepBlock bytes a block)
// against tiles ta and tb, row r's results for ta at out[8r:8r+8], for tb
// at out[32+8r:32+8r+8]. wBlock is the bytes a block of each row the
// kernel reads from w (the AVX2 Q4_0 quad reads its scales there), 0 when
// it reads only u (the AVX-512 Q4_0 and Q8_0 quads; w is passed, not
// read).
func quadPrep(asm func(w *byte, wstride int, u, ta, tb *byte, nb int, out *float32), prepBlock, wBlock int) func(w []byte, wstride int, u []byte, ta, tb []byte, out []float32) {
	return func(w []byte, wstride int, u []byte, ta, tb []byte, out []float32) {
		nb := len(ta) / tile8Block
		_ = out[64-1]
		if nb == 0 {
			clear(out[:64])
			return
		}
		if wBlock > 0 {
			_ = w[3*wstride+nb*wBlock-1]
		}
		_ = u[nb*prepBlock-1]
		_ = tb[nb*tile8Block-1]
		asm(&w[0], wstride, &u[0], &ta[0], &tb[0], nb, &out[0])
	}
}

// quadK wraps a four-row sixteen-token K-quant kernel that reads its rows
// from their preparation in u (prepBlock bytes a super-block) and tiles of
// tileBlock bytes a super-block.
func quadK(asm func(u, ta, tb *byte, nb int, out *float32), tileBlock, prepBlock int) func(w []byte, wstride int, u []byte, ta, tb []byte, out []float32) {
	return func(_ []byte, _ int, u []byte, ta, tb []byte, out []float32) {
		nb := len(ta) / tileBlock
		_ = out[64-1]
		if nb == 0 {
			clear(out[:64])
			return
		}
		_ = u[nb*prepBlock-1]
		_ = tb[nb*tileBlock-1]
		asm(&u[0], &ta[0], &tb[0], nb, &out[0])
	}
}

//go:noescape
func q6_Kq8_Kr4x16AVX512(u, ta, tb *byte, nb int, out *float32)

//go:noescape
func q4_0q8_0r8tAVX512(w *byte, wstride int, x *byte, nb int, tab *byte, out *[8]float32)

//go:noescape
func q8_0q8_0r4AVX512(w *byte, wstride int, x *byte, nb int, out *[4]float32)

//go:noescape
func q4_Kq8_Kr4AVX512(w *byte, wstride int, x *byte, nb int, out *[4]float32)

//go:noescape
func q4_Kq8_Kr4x4AVX512(w *byte, x *byte, nb int, out *[4]float32)

//go:noescape
func q6_Kq8_Kr4x4AVX512(w *byte, x *byte, nb int, out *[4]float32)

//go:noescape
func q6_Kq8_Kr4AVX512(w *byte, wstride int, x *byte, nb int, out *[4]float32)
