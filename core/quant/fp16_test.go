package quant

import (
	"math"
	"math/rand/v2"
	"sort"
	"testing"
)

// halfValue decodes binary16 from its definition, independently of
// F16ToF32: (−1)^s · 2^(e−15) · (1 + m/1024), or 2⁻¹⁴ · m/1024 for e = 0.
func halfValue(h uint16) float64 {
	s := 1.0
	if h&0x8000 != 0 {
		s = -1
	}
	e := int(h>>10) & 0x1f
	m := float64(h & 0x3ff)
	switch e {
	case 0:
		return s * math.Ldexp(m/1024, -14)
	case 0x1f:
		if m != 0 {
			return math.NaN()
		}
		return s * math.Inf(1)
	}
	return s * math.Ldexp(1+m/1024, e-15)
}

func TestF16ToF32AllValues(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		got := F16ToF32(h)
		want := halfValue(h)
		if math.IsNaN(want) {
			b := math.Float32bits(got)
			if !math.IsNaN(float64(got)) || b&0x00400000 == 0 || b>>31 != uint32(h>>15) {
				t.Fatalf("F16ToF32(%#04x) = %#08x, want a quiet NaN of the same sign", h, b)
			}
			continue
		}
		if float64(got) != want || math.Signbit(float64(got)) != (h&0x8000 != 0) {
			t.Fatalf("F16ToF32(%#04x) = %g, want %g", h, got, want)
		}
	}
}

func TestF16RoundTripAllValues(t *testing.T) {
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		back := F32ToF16(F16ToF32(h))
		isNaN := h&0x7c00 == 0x7c00 && h&0x3ff != 0
		if isNaN {
			// Signalling NaNs come back quiet, as through F16C.
			if back != h|0x0200 {
				t.Fatalf("NaN %#04x came back as %#04x, want %#04x", h, back, h|0x0200)
			}
			continue
		}
		if back != h {
			t.Fatalf("%#04x (%g) came back as %#04x", h, F16ToF32(h), back)
		}
	}
}

// sortedHalves is every non-NaN half with its value, ascending, +0 before −0
// removed so each value appears once with the encoding of its sign.
type halfEntry struct {
	v float64
	h uint16
}

func finiteHalves() []halfEntry {
	var out []halfEntry
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		v := halfValue(h)
		if math.IsNaN(v) || math.IsInf(v, 0) || v == 0 {
			continue
		}
		out = append(out, halfEntry{v, h})
	}
	sort.Slice(out, func(i, j int) bool { return out[i].v < out[j].v })
	return out
}

// nearestHalf is round-to-nearest-even by brute search over the table: the
// independent oracle for F32ToF16.
func nearestHalf(tab []halfEntry, x float32) uint16 {
	v := float64(x)
	sign := uint16(0)
	if math.Signbit(v) {
		sign = 0x8000
	}
	const maxHalf = 65504.0
	// Beyond max + half an ulp (2^4 at the top binade) is Inf; exactly at it
	// ties to even, which is Inf too (65504 has an odd mantissa).
	if math.Abs(v) >= maxHalf+16 {
		return sign | 0x7c00
	}
	if v == 0 {
		return sign
	}
	i := sort.Search(len(tab), func(i int) bool { return tab[i].v >= v })
	best := -1
	var bestErr float64
	for _, j := range []int{i - 1, i} {
		if j < 0 || j >= len(tab) {
			continue
		}
		e := math.Abs(tab[j].v - v)
		if best < 0 || e < bestErr || (e == bestErr && tab[j].h&1 == 0) {
			best, bestErr = j, e
		}
	}
	// Zero is a candidate near the smallest subnormal (2^-24).
	if z := math.Abs(v); z < bestErr || (z == bestErr) {
		return sign
	}
	return tab[best].h
}

func TestF32ToF16RoundsToNearestEven(t *testing.T) {
	tab := finiteHalves()
	check := func(x float32) {
		t.Helper()
		got, want := F32ToF16(x), nearestHalf(tab, x)
		if got != want {
			t.Fatalf("F32ToF16(%g = %#08x) = %#04x (%g), want %#04x (%g)",
				x, math.Float32bits(x), got, F16ToF32(got), want, F16ToF32(want))
		}
	}
	t.Run("midpoints", func(t *testing.T) {
		// Every midpoint between neighbours (exact in float32) and one ulp
		// either side of it.
		for i := 0; i+1 < len(tab); i++ {
			if (tab[i].v < 0) != (tab[i+1].v < 0) {
				continue
			}
			mid := float32((tab[i].v + tab[i+1].v) / 2)
			check(mid)
			check(math.Nextafter32(mid, float32(math.Inf(1))))
			check(math.Nextafter32(mid, float32(math.Inf(-1))))
		}
	})
	t.Run("random", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for range 200000 {
			// Exponents spanning underflow to overflow of binary16.
			x := float32(math.Ldexp(r.Float64()*2-1, r.IntN(50)-30))
			check(x)
		}
	})
	t.Run("specials", func(t *testing.T) {
		cases := []struct {
			x    float32
			want uint16
		}{
			{0, 0}, {float32(math.Copysign(0, -1)), 0x8000},
			{1, 0x3c00}, {-2, 0xc000}, {65504, 0x7bff},
			{65519.996, 0x7bff}, {65520, 0x7c00}, {1e10, 0x7c00}, {-1e10, 0xfc00},
			{float32(math.Inf(1)), 0x7c00}, {float32(math.Inf(-1)), 0xfc00},
			{float32(math.Ldexp(1, -24)), 0x0001}, {float32(math.Ldexp(1, -25)), 0},
			{float32(math.Ldexp(1.5, -25)), 0x0001}, {float32(math.Ldexp(3, -25)), 0x0002},
			{float32(math.Ldexp(1, -14)), 0x0400}, {math.SmallestNonzeroFloat32, 0},
			{math.Float32frombits(0x7f800001), 0x7e00}, // signalling NaN quieted
			{math.Float32frombits(0xffc12345), 0xfe09},
		}
		for _, c := range cases {
			if got := F32ToF16(c.x); got != c.want {
				t.Errorf("F32ToF16(%g = %#08x) = %#04x, want %#04x", c.x, math.Float32bits(c.x), got, c.want)
			}
		}
	})
}

func TestBF16(t *testing.T) {
	cases := []struct {
		name string
		in   uint32
		want uint16
	}{
		{"one", 0x3f800000, 0x3f80},
		{"tie down to even", 0x3f808000, 0x3f80},
		{"tie up to even", 0x3f818000, 0x3f82},
		{"above tie", 0x3f808001, 0x3f81},
		{"below tie", 0x3f807fff, 0x3f80},
		{"max rounds to inf", 0x7f7fffff, 0x7f80},
		{"inf", 0x7f800000, 0x7f80},
		{"subnormal kept", 0x00012345, 0x0001},
		{"negative", 0xc0490fdb, 0xc049},
		{"nan quieted", 0x7f800001, 0x7fc0},
		{"nan payload", 0xff812345, 0xffc1},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := F32ToBF16(math.Float32frombits(c.in)); got != c.want {
				t.Errorf("F32ToBF16(%#08x) = %#04x, want %#04x", c.in, got, c.want)
			}
		})
	}
	for i := 0; i < 1<<16; i++ {
		h := uint16(i)
		f := BF16ToF32(h)
		if math.Float32bits(f) != uint32(h)<<16 {
			t.Fatalf("BF16ToF32(%#04x) = %#08x", h, math.Float32bits(f))
		}
		back := F32ToBF16(f)
		if math.IsNaN(float64(f)) {
			if back != h|0x40 {
				t.Fatalf("NaN %#04x came back as %#04x", h, back)
			}
		} else if back != h {
			t.Fatalf("%#04x came back as %#04x", h, back)
		}
	}
}
