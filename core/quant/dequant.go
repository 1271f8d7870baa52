package quant

// Dequantizers, one per type, following ggml-quants.c dequantize_row_*.
// llama.cpp uses these for embedding rows (get_rows), so the float
// expressions keep ggml's operation order, and explicit float32 conversions
// stop Go from fusing a multiply and an add where ggml-base (built without
// FMA) rounds twice. Callers have checked that src holds exactly len(dst)
// elements.

func dequantF32(src []byte, dst []float32) {
	src = src[:4*len(dst)]
	for i := range dst {
		dst[i] = f32le(src[4*i:])
	}
}

func dequantF16(src []byte, dst []float32) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = f16le(src[2*i:])
	}
}

func dequantBF16(src []byte, dst []float32) {
	src = src[:2*len(dst)]
	for i := range dst {
		dst[i] = BF16ToF32(le16(src[2*i:]))
	}
}

// dequantQ4_0: y = (nibble − 8)·d; low nibbles are elements 0..15.
func dequantQ4_0(src []byte, dst []float32) {
	for i := 0; i < len(dst)/qk; i++ {
		b := src[i*bytesQ4 : i*bytesQ4+bytesQ4 : i*bytesQ4+bytesQ4]
		y := dst[i*qk : i*qk+qk : i*qk+qk]
		d := f16le(b)
		qs := b[2:18:18]
		for j := 0; j < 16; j++ {
			y[j] = float32(int32(qs[j]&0xf)-8) * d
			y[j+16] = float32(int32(qs[j]>>4)-8) * d
		}
	}
}

// dequantQ4_1: y = nibble·d + m.
func dequantQ4_1(src []byte, dst []float32) {
	for i := 0; i < len(dst)/qk; i++ {
		b := src[i*bytesQ41 : i*bytesQ41+bytesQ41 : i*bytesQ41+bytesQ41]
		y := dst[i*qk : i*qk+qk : i*qk+qk]
		d, m := f16le(b), f16le(b[2:])
		qs := b[4:20:20]
		for j := 0; j < 16; j++ {
			y[j] = float32(float32(qs[j]&0xf)*d) + m
			y[j+16] = float32(float32(qs[j]>>4)*d) + m
		}
	}
}

// dequantQ5_0: y = (5-bit value − 16)·d; bit j of qh is element j's fifth bit.
func dequantQ5_0(src []byte, dst []float32) {
	for i := 0; i < len(dst)/qk; i++ {
		b := src[i*bytesQ50 : i*bytesQ50+bytesQ50 : i*bytesQ50+bytesQ50]
		y := dst[i*qk : i*qk+qk : i*qk+qk]
		d := f16le(b)
		qh := uint32(b[2]) | uint32(b[3])<<8 | uint32(b[4])<<16 | uint32(b[5])<<24
		qs := b[6:22:22]
		for j := 0; j < 16; j++ {
			v := uint32(qs[j])
			y[j] = float32(int32(v&0xf|(qh>>j<<4)&0x10)-16) * d
			y[j+16] = float32(int32(v>>4|(qh>>(j+12))&0x10)-16) * d
		}
	}
}

// dequantQ5_1: y = 5-bit value·d + m.
func dequantQ5_1(src []byte, dst []float32) {
	for i := 0; i < len(dst)/qk; i++ {
		b := src[i*bytesQ51 : i*bytesQ51+bytesQ51 : i*bytesQ51+bytesQ51]
		y := dst[i*qk : i*qk+qk : i*qk+qk]
		d, m := f16le(b), f16le(b[2:])
		qh := uint32(b[4]) | uint32(b[5])<<8 | uint32(b[6])<<16 | uint32(b[7])<<24
		qs := b[8:24:24]
		for j := 0; j < 16; j++ {
			v := uint32(qs[j])
			y[j] = float32(float32(v&0xf|(qh>>j<<4)&0x10)*d) + m
			y[j+16] = float32(float32(v>>4|(qh>>(j+12))&0x10)*d) + m
		}
	}
}

// dequantQ8_0: y = q·d.
func dequantQ8_0(src []byte, dst []float32) {
	for i := 0; i < len(dst)/qk; i++ {
		b := src[i*bytesQ80 : i*bytesQ80+bytesQ80 : i*bytesQ80+bytesQ80]
		y := dst[i*qk : i*qk+qk : i*qk+qk]
		d := f16le(b)
		qs := b[2:34:34]
		for j := range y {
			y[j] = float32(int8(qs[j])) * d
		}
	}
}

// dequantQ8_1: y = q·d; the stored s = d·Σq is not needed.
func dequantQ8_1(src []byte, dst []float32) {
	for i := 0; i < len(dst)/qk; i++ {
		b := src[i*bytesQ81 : i*bytesQ81+bytesQ81 : i*bytesQ81+bytesQ81]
		y := dst[i*qk : i*qk+qk : i*qk+qk]
		d := f16le(b)
		qs := b[4:36:36]
		for j := range y {
			y[j] = float32(int8(qs[j])) * d
		}
	}
}

// dequantQ2_K: y = (d·scale)·q − dmin·min per sub-block of 16; see
// dotQ2_KQ8_KGeneric for the element order.
func dequantQ2_K(src []byte, dst []float32) {
	for i := 0; i < len(dst)/qkK; i++ {
		b := src[i*bytesQ2K : i*bytesQ2K+bytesQ2K : i*bytesQ2K+bytesQ2K]
		y := dst[i*qkK : i*qkK+qkK : i*qkK+qkK]
		scales := b[0:16:16]
		d, dmin := f16le(b[80:]), f16le(b[82:])
		for half := 0; half < 2; half++ {
			q := b[16+32*half : 48+32*half : 48+32*half]
			for j := 0; j < 4; j++ {
				shift := uint(2 * j)
				out := y[128*half+32*j : 128*half+32*j+32 : 128*half+32*j+32]
				for sub := 0; sub < 2; sub++ {
					sc := scales[8*half+2*j+sub]
					dl := d * float32(sc&0xf)
					ml := dmin * float32(sc>>4)
					for l := 16 * sub; l < 16*sub+16; l++ {
						out[l] = float32(dl*float32((q[l]>>shift)&3)) - ml
					}
				}
			}
		}
	}
}

// dequantQ3_K: y = (d·scale)·q3 per sub-block of 16.
func dequantQ3_K(src []byte, dst []float32) {
	for i := 0; i < len(dst)/qkK; i++ {
		b := src[i*bytesQ3K : i*bytesQ3K+bytesQ3K : i*bytesQ3K+bytesQ3K]
		y := dst[i*qkK : i*qkK+qkK : i*qkK+qkK]
		hmask := b[0:32:32]
		scales := b[96:108:108]
		d := f16le(b[108:])
		for half := 0; half < 2; half++ {
			q := b[32+32*half : 64+32*half : 64+32*half]
			for j := 0; j < 4; j++ {
				shift := uint(2 * j)
				bit := uint(4*half + j)
				out := y[128*half+32*j : 128*half+32*j+32 : 128*half+32*j+32]
				for sub := 0; sub < 2; sub++ {
					dl := d * float32(scaleQ3K(8*half+2*j+sub, scales))
					for l := 16 * sub; l < 16*sub+16; l++ {
						v := int32((q[l]>>shift)&3) - 4*int32((hmask[l]>>bit)&1^1)
						out[l] = dl * float32(v)
					}
				}
			}
		}
	}
}

// dequantQ4_K: y = (d·sc)·q − dmin·m per sub-block of 32.
func dequantQ4_K(src []byte, dst []float32) {
	for i := 0; i < len(dst)/qkK; i++ {
		b := src[i*bytesQ4K : i*bytesQ4K+bytesQ4K : i*bytesQ4K+bytesQ4K]
		y := dst[i*qkK : i*qkK+qkK : i*qkK+qkK]
		d, dmin := f16le(b), f16le(b[2:])
		scales := b[4:16:16]
		for j := 0; j < 4; j++ {
			sc0, m0 := scaleMinK4(2*j, scales)
			sc1, m1 := scaleMinK4(2*j+1, scales)
			d1, mm1 := d*float32(sc0), dmin*float32(m0)
			d2, mm2 := d*float32(sc1), dmin*float32(m1)
			q := b[16+32*j : 48+32*j : 48+32*j]
			out := y[64*j : 64*j+64 : 64*j+64]
			for l := 0; l < 32; l++ {
				out[l] = float32(d1*float32(q[l]&0xf)) - mm1
				out[l+32] = float32(d2*float32(q[l]>>4)) - mm2
			}
		}
	}
}

// dequantQ5_K: Q4_K with the fifth bit from qh.
func dequantQ5_K(src []byte, dst []float32) {
	for i := 0; i < len(dst)/qkK; i++ {
		b := src[i*bytesQ5K : i*bytesQ5K+bytesQ5K : i*bytesQ5K+bytesQ5K]
		y := dst[i*qkK : i*qkK+qkK : i*qkK+qkK]
		d, dmin := f16le(b), f16le(b[2:])
		scales := b[4:16:16]
		qh := b[16:48:48]
		for j := 0; j < 4; j++ {
			sc0, m0 := scaleMinK4(2*j, scales)
			sc1, m1 := scaleMinK4(2*j+1, scales)
			d1, mm1 := d*float32(sc0), dmin*float32(m0)
			d2, mm2 := d*float32(sc1), dmin*float32(m1)
			q := b[48+32*j : 80+32*j : 80+32*j]
			out := y[64*j : 64*j+64 : 64*j+64]
			b0, b1 := uint(2*j), uint(2*j+1)
			for l := 0; l < 32; l++ {
				v0 := q[l]&0xf | (qh[l]>>b0&1)<<4
				v1 := q[l]>>4 | (qh[l]>>b1&1)<<4
				out[l] = float32(d1*float32(v0)) - mm1
				out[l+32] = float32(d2*float32(v1)) - mm2
			}
		}
	}
}

// dequantQ6_K: y = (d·scale)·q6 per sub-block of 16.
func dequantQ6_K(src []byte, dst []float32) {
	for i := 0; i < len(dst)/qkK; i++ {
		b := src[i*bytesQ6K : i*bytesQ6K+bytesQ6K : i*bytesQ6K+bytesQ6K]
		y := dst[i*qkK : i*qkK+qkK : i*qkK+qkK]
		d := f16le(b[208:])
		for half := 0; half < 2; half++ {
			ql := b[64*half : 64*half+64 : 64*half+64]
			qh := b[128+32*half : 160+32*half : 160+32*half]
			sc := b[192+8*half : 200+8*half : 200+8*half]
			out := y[128*half : 128*half+128 : 128*half+128]
			for l := 0; l < 32; l++ {
				is := l / 16
				h := qh[l]
				q1 := int32(ql[l]&0xf|(h&3)<<4) - 32
				q2 := int32(ql[l+32]&0xf|(h>>2&3)<<4) - 32
				q3 := int32(ql[l]>>4|(h>>4&3)<<4) - 32
				q4 := int32(ql[l+32]>>4|(h>>6)<<4) - 32
				out[l] = float32(d*float32(int8(sc[is]))) * float32(q1)
				out[l+32] = float32(d*float32(int8(sc[is+2]))) * float32(q2)
				out[l+64] = float32(d*float32(int8(sc[is+4]))) * float32(q3)
				out[l+96] = float32(d*float32(int8(sc[is+6]))) * float32(q4)
			}
		}
	}
}

// dequantQ8_K: y = d·q with d stored as float32.
func dequantQ8_K(src []byte, dst []float32) {
	for i := 0; i < len(dst)/qkK; i++ {
		b := src[i*bytesQ8K : i*bytesQ8K+bytesQ8K : i*bytesQ8K+bytesQ8K]
		y := dst[i*qkK : i*qkK+qkK : i*qkK+qkK]
		d := f32le(b)
		qs := b[4:260:260]
		for j := range y {
			y[j] = d * float32(int8(qs[j]))
		}
	}
}
