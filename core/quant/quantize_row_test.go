package quant

import (
	"errors"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/minfer/minfer/gguf"
)

func block32(vals ...float32) []float32 {
	x := make([]float32, 32)
	copy(x, vals)
	return x
}

func TestQuantizeRowQ8_0Rounding(t *testing.T) {
	cases := []struct {
		name  string
		x     []float32
		wantD float32
		wantQ []int8 // leading quants
	}{
		// amax 127 makes id exactly 1: x·id is x, so ties show directly.
		// roundf (the _ref) would give 3, −4, 1, 2; AVX2 rounds to even.
		{"ties to even", block32(127, 2.5, -3.5, 0.5, 1.5, -0.5), 1, []int8{127, 2, -4, 0, 2, 0}},
		{"negative extreme", block32(-63.5, 1), 0.5, []int8{-127, 2}},
		{"all zero", block32(), 0, []int8{0, 0}},
		// id = 127/amax, not 1/(amax/127): for this amax the two differ in
		// the last bit and x·id lands on opposite sides of 1.5.
		{"id is 127/amax", block32(math.Float32frombits(0x3f000011), math.Float32frombits(0x3bc1831f)),
			F16ToF32(F32ToF16(math.Float32frombits(0x3f000011) / 127)), []int8{127, 1}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := quantizeRow(t, gguf.TypeQ8_0, c.x)
			if d := f16le(b); d != c.wantD {
				t.Errorf("d = %g, want %g", d, c.wantD)
			}
			for j, want := range c.wantQ {
				if got := int8(b[2+j]); got != want {
					t.Errorf("q[%d] = %d, want %d (x = %g)", j, got, want, c.x[j])
				}
			}
			// Q8_1 quantizes identically.
			b1 := quantizeRow(t, gguf.TypeQ8_1, c.x)
			if string(b1[4:]) != string(b[2:]) || le16(b1) != le16(b) {
				t.Errorf("Q8_1 quants/d differ from Q8_0's")
			}
		})
	}
}

func TestQuantizeRowQ8_1Sum(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 1))
	x := gaussian(r, 32*8, 1)
	b := quantizeRow(t, gguf.TypeQ8_1, x)
	for blk := 0; blk < 8; blk++ {
		qb := b[blk*bytesQ81 : (blk+1)*bytesQ81]
		var sum int32
		for _, q := range qb[4:] {
			sum += int32(int8(q))
		}
		// s is fp16 of the float32 d (not the stored fp16 d) times Σq.
		d32 := amaxOf(x[32*blk:32*blk+32]) / 127
		if want := F32ToF16(d32 * float32(sum)); le16(qb[2:]) != want {
			t.Errorf("block %d: s = %#04x, want fp16(%g·%d) = %#04x", blk, le16(qb[2:]), d32, sum, want)
		}
	}
}

func TestQuantizeRowQ8_K(t *testing.T) {
	t.Run("positive max gives negative d", func(t *testing.T) {
		x := make([]float32, 256)
		x[0], x[1], x[2], x[3] = 127, 2.5, -3.5, -127 // first of equal magnitudes wins
		b := quantizeRow(t, gguf.TypeQ8_K, x)
		if d := f32le(b); d != -1 {
			t.Fatalf("d = %g, want −1 (iscale = −127/max)", d)
		}
		// nearest_int(−x): ties to even.
		for j, want := range []int8{-127, -2, 4, 127} {
			if got := int8(b[4+j]); got != want {
				t.Errorf("q[%d] = %d, want %d", j, got, want)
			}
		}
		if s := int16(le16(b[260:])); s != -127-2+4+127 {
			t.Errorf("bsums[0] = %d, want %d", s, -127-2+4+127)
		}
	})
	t.Run("bsums", func(t *testing.T) {
		r := rand.New(rand.NewPCG(2, 2))
		x := gaussian(r, 512, 1)
		b := quantizeRow(t, gguf.TypeQ8_K, x)
		for blk := 0; blk < 2; blk++ {
			qb := b[blk*bytesQ8K:]
			for j := 0; j < 16; j++ {
				var s int32
				for _, q := range qb[4+16*j : 4+16*j+16] {
					s += int32(int8(q))
				}
				if got := q8KBsum(qb, j); got != s {
					t.Errorf("block %d bsums[%d] = %d, want %d", blk, j, got, s)
				}
			}
		}
	})
	t.Run("zero block", func(t *testing.T) {
		b := make([]byte, bytesQ8K)
		for i := range b {
			b[i] = 0xAA
		}
		if err := QuantizeRow(gguf.TypeQ8_K, make([]float32, 256), b); err != nil {
			t.Fatal(err)
		}
		for i, v := range b {
			if v != 0 {
				t.Fatalf("byte %d = %#x, want an all-zero block", i, v)
			}
		}
	})
}

func TestQuantizeRowFloat(t *testing.T) {
	x := []float32{1, -2.5, 65520, 1.0 / 3}
	f16 := quantizeRow(t, gguf.TypeF16, x)
	bf16 := quantizeRow(t, gguf.TypeBF16, x)
	f32 := quantizeRow(t, gguf.TypeF32, x)
	for i, v := range x {
		if got := le16(f16[2*i:]); got != F32ToF16(v) {
			t.Errorf("F16[%d] = %#04x, want %#04x", i, got, F32ToF16(v))
		}
		if got := le16(bf16[2*i:]); got != F32ToBF16(v) {
			t.Errorf("BF16[%d] = %#04x, want %#04x", i, got, F32ToBF16(v))
		}
		if got := f32le(f32[4*i:]); got != v {
			t.Errorf("F32[%d] = %g, want %g", i, got, v)
		}
	}
}

func TestErrors(t *testing.T) {
	cases := []struct {
		name        string
		err         error
		unsupported bool
		substr      string
	}{
		{"dequantize IQ type", Dequantize(gguf.TypeIQ2_XS, nil, nil), true, "IQ2_XS"},
		{"dequantize unknown type", Dequantize(gguf.GGMLType(99), nil, nil), true, "type(99)"},
		{"dequantize short src", Dequantize(gguf.TypeQ4_K, make([]byte, 143), make([]float32, 256)), false, "256 elements of Q4_K take 144 bytes, got 143"},
		{"dequantize ragged", Dequantize(gguf.TypeQ8_0, make([]byte, 34), make([]float32, 33)), false, "row of 33 elements is not a multiple of Q8_0's 32"},
		{"activation type Q4_0", QuantizeRow(gguf.TypeQ4_0, make([]float32, 32), make([]byte, 18)), true, "Q4_0"},
		{"activation long dst", QuantizeRow(gguf.TypeQ8_K, make([]float32, 256), make([]byte, 300)), false, "take 292 bytes, got 300"},
		{"weights Q8_K", QuantizeWeights(gguf.TypeQ8_K, make([]float32, 256), make([]byte, 292)), true, "Q8_K"},
		{"weights ragged", QuantizeWeights(gguf.TypeQ6_K, make([]float32, 100), nil), false, "row of 100 elements is not a multiple of Q6_K's 256"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if c.err == nil {
				t.Fatal("no error")
			}
			if errors.Is(c.err, ErrUnsupported) != c.unsupported {
				t.Errorf("errors.Is(%v, ErrUnsupported) = %v, want %v", c.err, !c.unsupported, c.unsupported)
			}
			if !strings.Contains(c.err.Error(), c.substr) {
				t.Errorf("error %q does not mention %q", c.err, c.substr)
			}
		})
	}
}

func TestVecDotTypeAndSupported(t *testing.T) {
	want := map[gguf.GGMLType]gguf.GGMLType{
		gguf.TypeF32: gguf.TypeF32, gguf.TypeF16: gguf.TypeF16, gguf.TypeBF16: gguf.TypeBF16,
		gguf.TypeQ4_0: gguf.TypeQ8_0, gguf.TypeQ5_0: gguf.TypeQ8_0, gguf.TypeQ8_0: gguf.TypeQ8_0,
		gguf.TypeQ4_1: gguf.TypeQ8_1, gguf.TypeQ5_1: gguf.TypeQ8_1,
		gguf.TypeQ2_K: gguf.TypeQ8_K, gguf.TypeQ3_K: gguf.TypeQ8_K, gguf.TypeQ4_K: gguf.TypeQ8_K,
		gguf.TypeQ5_K: gguf.TypeQ8_K, gguf.TypeQ6_K: gguf.TypeQ8_K,
	}
	for typ, vt := range want {
		if !Supported(typ) || VecDotType(typ) != vt {
			t.Errorf("%s: Supported %v, VecDotType %s; want true, %s", typ, Supported(typ), VecDotType(typ), vt)
		}
	}
	for _, typ := range []gguf.GGMLType{gguf.TypeQ8_1, gguf.TypeQ8_K, gguf.TypeIQ4_NL, gguf.TypeI8, gguf.TypeMXFP4} {
		if Supported(typ) {
			t.Errorf("Supported(%s) = true", typ)
		}
	}
}
