package cpu

import (
	"math"
	"math/rand/v2"
	"testing"
)

// expf16 is a polynomial within ~1.5 ulp of exp; it must stay so, flush
// below −103.97 to 0, overflow above 88.38 to +Inf and keep NaN.
func TestExpf16CloseToExpAndEdges(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	for i := 0; i < 100000; i++ {
		x := float32(r.Float64()*180 - 100)
		got, want := expf16(x), float32(math.Exp(float64(x)))
		if want == 0 || math.IsInf(float64(want), 1) {
			continue
		}
		ulp := math.Abs(float64(math.Float32bits(got)) - float64(math.Float32bits(want)))
		if ulp > 2 && want > 1e-37 {
			t.Fatalf("expf16(%g) = %g, exp = %g (%g ulp)", x, got, want, ulp)
		}
	}
	if g := expf16(float32(math.Inf(-1))); g != 0 {
		t.Errorf("expf16(-Inf) = %g", g)
	}
	if g := expf16(-200); g != 0 {
		t.Errorf("expf16(-200) = %g", g)
	}
	if g := expf16(200); !math.IsInf(float64(g), 1) {
		t.Errorf("expf16(200) = %g", g)
	}
	if g := expf16(float32(math.NaN())); g == g {
		t.Errorf("expf16(NaN) = %g", g)
	}
	if g := expf16(0); g != 1 {
		t.Errorf("expf16(0) = %g", g)
	}
}

// Below one full 64-element step the F16 dot is the plain float64 sum of
// the products; from 64 on, the lanes are float32 and the reduction order
// is fixed: check it against an explicit transcription.
func TestDotF16AccOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{1, 31, 63, 64, 65, 127, 128, 200} {
		p := make([]float32, n)
		for i := range p {
			p[i] = float32(r.NormFloat64())
		}
		var a dotF16Acc
		np := n &^ 63
		for i, v := range p {
			a.add(i, np, v)
		}
		var acc [4][16]float32
		for i := 0; i < np; i++ {
			acc[(i%64)/16][i%16] += p[i]
		}
		var v [16]float32
		for l := range v {
			x0 := acc[0][l] + acc[2][l]
			x1 := acc[1][l] + acc[3][l]
			v[l] = x0 + x1
		}
		var t3 [8]float32
		for l := range t3 {
			t3[l] = v[l] + v[8+l]
		}
		t6 := [4]float32{t3[0] + t3[4], t3[1] + t3[5], t3[2] + t3[6], t3[3] + t3[7]}
		want := float64((t6[0] + t6[2]) + (t6[1] + t6[3]))
		if np == 0 {
			want = 0
		}
		for i := np; i < n; i++ {
			want += float64(p[i])
		}
		if got := a.sum(); got != want {
			t.Errorf("n=%d: %v, want %v", n, got, want)
		}
	}
}

// The softmax sum puts full 16-blocks through expf16 and the rest through
// the C library's expf; masked (−Inf) entries become exact zeros.
func TestSoftmaxSum16Blocks(t *testing.T) {
	row := make([]float32, 35)
	for i := range row {
		row[i] = -float32(i) / 7
	}
	row[3] = float32(math.Inf(-1))
	in := append([]float32(nil), row...)
	sum := softmaxSum16(row)
	var want float64
	for i, x := range in {
		var e float32
		if i < 32 {
			e = expf16(x)
		} else {
			e = expfLibm(x)
		}
		if row[i] != e {
			t.Fatalf("element %d: %g, want %g", i, row[i], e)
		}
		want += float64(e)
	}
	if row[3] != 0 {
		t.Fatalf("masked entry became %g", row[3])
	}
	if math.Abs(sum-want) > 1e-6 {
		t.Fatalf("sum %v, want about %v", sum, want)
	}
	if nkvPad(1) != 32 || nkvPad(32) != 32 || nkvPad(33) != 64 {
		t.Fatal("nkvPad is llama.cpp's n_kv: cells rounded up to 32, at least 32")
	}
}
