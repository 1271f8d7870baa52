package quant

import (
	"encoding/binary"
	"math"
)

// Little-endian field readers for block headers. They are small enough to be
// inlined into the kernels.

func le16(b []byte) uint16     { return binary.LittleEndian.Uint16(b) }
func f16le(b []byte) float32   { return F16ToF32(binary.LittleEndian.Uint16(b)) }
func f32le(b []byte) float32   { return math.Float32frombits(binary.LittleEndian.Uint32(b)) }
func put16(b []byte, v uint16) { binary.LittleEndian.PutUint16(b, v) }
func putF32(b []byte, v float32) {
	binary.LittleEndian.PutUint32(b, math.Float32bits(v))
}

// scaleMinK4 unpacks the 6-bit scale and min of sub-block j (0..7) from the
// 12 packed bytes of a Q4_K or Q5_K block (ggml's get_scale_min_k4): the
// first four sub-blocks sit in the low 6 bits of bytes 0..3 (scales) and
// 4..7 (mins); the last four keep their low nibbles in bytes 8..11 and their
// top two bits in the spare high bits of bytes 0..7.
func scaleMinK4(j int, s []byte) (sc, m uint8) {
	if j < 4 {
		return s[j] & 63, s[j+4] & 63
	}
	return s[j+4]&0xf | (s[j-4]>>6)<<4, s[j+4]>>4 | (s[j]>>6)<<4
}

// scaleQ3K unpacks the signed 6-bit scale of sub-block j (0..15) from the 12
// packed bytes of a Q3_K block: the low nibble is in byte j (j < 8) or the
// high nibble of byte j−8, the top two bits in byte 8+j%4 at bit 2·(j/4);
// the stored value is biased by 32.
func scaleQ3K(j int, s []byte) int32 {
	var low uint8
	if j < 8 {
		low = s[j] & 0xf
	} else {
		low = s[j-8] >> 4
	}
	high := (s[8+j%4] >> (2 * (j / 4))) & 3
	return int32(low|high<<4) - 32
}
