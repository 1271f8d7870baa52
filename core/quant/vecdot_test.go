package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// vecDotTol is the allowed |VecDot − exact| for one row, as a fraction of
// M = Σ|w_i·x_i| (the dequantized products). The integer block sums are
// exact, so what remains is float32 rounding of d_w·d_x and of the float32
// accumulation over blocks (≲ nb·2⁻²⁴·M in the worst case; measured ≤ 0.35 of
// this bound). A wrong bit layout or a missing min term is O(M).
const vecDotTol = 3e-7

// minTermSlack bounds the extra error of the Q4_1/Q5_1 × Q8_1 min term: the
// kernel uses the stored s = fp16(d32·Σq), the dequantized row implies
// fp16(d32)·Σq; each f16 rounding is ≤ 2⁻¹¹ relative, so ≤ 2⁻¹⁰·|m_w·s|.
func minTermSlack(typ gguf.GGMLType, w, x []byte) float64 {
	if typ != gguf.TypeQ4_1 && typ != gguf.TypeQ5_1 {
		return 0
	}
	ts := typ.TypeSize()
	var slack float64
	for b := 0; b < len(w)/ts; b++ {
		m := float64(f16le(w[b*ts+2:]))
		s := float64(f16le(x[b*bytesQ81+2:]))
		slack += math.Abs(m*s) * math.Ldexp(1, -10) * 1.01
	}
	return slack
}

func vecDotSizes(typ gguf.GGMLType) []int {
	sizes := []int{256, 512, 4096}
	if typ.BlockSize() == 32 {
		// 32-wide formats need not fill a 256 super-block.
		sizes = append(sizes, 32, 96, 32*37)
	}
	if typ.BlockSize() == 1 {
		sizes = append(sizes, 1, 33, 100) // ragged tails for the float kernels
	}
	return sizes
}

func TestVecDotMatchesDequantizedDot(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	for _, typ := range weightTypes {
		for _, n := range vecDotSizes(typ) {
			for _, src := range []string{"quantized", "random-bytes"} {
				t.Run(fmt.Sprintf("%s/n=%d/%s", typ, n, src), func(t *testing.T) {
					var w []byte
					if src == "quantized" {
						w = quantizeWeights(t, typ, gaussian(r, n, 0.02))
					} else {
						w = randomWeightBytes(t, r, typ, n)
					}
					vt := VecDotType(typ)
					act := gaussian(r, n, 1)
					x := quantizeRow(t, vt, act)
					if err := CheckVecDot(typ, n, len(w), len(x)); err != nil {
						t.Fatal(err)
					}
					got := float64(VecDot(typ, n, w, x))

					wd := dequantize(t, typ, w, n)
					xd := dequantize(t, vt, x, n)
					var want, mag float64
					for i := range wd {
						p := float64(wd[i]) * float64(xd[i])
						want += p
						mag += math.Abs(p)
					}
					tol := vecDotTol*mag + minTermSlack(typ, w, x)
					if math.Abs(got-want) > tol {
						t.Fatalf("VecDot = %.9g, dequantized dot = %.9g: |diff| %.3g > tolerance %.3g (Σ|w·x| = %.4g)",
							got, want, math.Abs(got-want), tol, mag)
					}
					// The activation quantization itself must be close to the
					// float row, or the comparison above proves little.
					if e := nmse(xd, act); e > 1e-3 {
						t.Fatalf("activation %s round trip NMSE %.3g", vt, e)
					}
				})
			}
		}
	}
}

func TestVecDotF32(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	for _, n := range []int{0, 1, 31, 32, 33, 100, 4096} {
		t.Run(fmt.Sprintf("n=%d", n), func(t *testing.T) {
			a, b := gaussian(r, n, 1), gaussian(r, n, 1)
			var want, mag float64
			for i := range a {
				want += float64(a[i]) * float64(b[i])
				mag += math.Abs(float64(a[i]) * float64(b[i]))
			}
			got := VecDotF32(a, b)
			if math.Abs(float64(got)-want) > 1e-6*mag+1e-30 {
				t.Fatalf("VecDotF32 = %g, want %g", got, want)
			}
			// The byte form used for F32 weights must agree exactly.
			wb, xb := quantizeRow(t, gguf.TypeF32, a), quantizeRow(t, gguf.TypeF32, b)
			if n > 0 {
				if gb := VecDot(gguf.TypeF32, n, wb, xb); gb != got {
					t.Fatalf("VecDot(F32) = %g, VecDotF32 = %g", gb, got)
				}
			}
		})
	}
}

// ggmlFloatDot models ggml's AVX float dot kernels as written in C: four
// 8-lane vectors sum[j] (STEP 32), the reduce that matches the kernel (the
// GGML_F32x8_REDUCE offset loop with two hadds, or the bf16 movehl/movehdup
// tail), then the leftovers added in float32 (f32) or float64 (f16, bf16).
func ggmlFloatDot(a, b []float32, movehl, f64Tail bool) float32 {
	n := len(a)
	np := n &^ 31
	var sum [4][8]float32
	for i := 0; i < np; i += 32 {
		for j := 0; j < 4; j++ {
			for l := 0; l < 8; l++ {
				sum[j][l] = sum[j][l] + a[i+8*j+l]*b[i+8*j+l]
			}
		}
	}
	var x [8]float32
	if movehl {
		for l := range x {
			x[l] = (sum[0][l] + sum[2][l]) + (sum[1][l] + sum[3][l])
		}
	} else {
		for off := 2; off > 0; off >>= 1 {
			for j := 0; j < off; j++ {
				for l := 0; l < 8; l++ {
					sum[j][l] = sum[j][l] + sum[off+j][l]
				}
			}
		}
		x = sum[0]
	}
	g := [4]float32{x[0] + x[4], x[1] + x[5], x[2] + x[6], x[3] + x[7]}
	var r float32
	if movehl {
		r = (g[0] + g[2]) + (g[1] + g[3])
	} else {
		r = (g[0] + g[1]) + (g[2] + g[3])
	}
	if !f64Tail {
		for i := np; i < n; i++ {
			r += a[i] * b[i]
		}
		return r
	}
	s := float64(r)
	for i := np; i < n; i++ {
		s += float64(a[i] * b[i])
	}
	return float32(s)
}

// TestFloatDotsFollowGGMLOrder pins the float32 lane structure of the F16
// and BF16 kernels bit for bit, on values spanning 2^±12 so that any other
// summation order (one float32 accumulator, float64 throughout) shows. The
// products of two halves or two bfloat16 are exact in float32, so ggml's FMA
// and a multiply-add agree and the match must be exact.
func TestFloatDotsFollowGGMLOrder(t *testing.T) {
	r := rand.New(rand.NewPCG(21, 22))
	wide := func(n int) []float32 {
		x := make([]float32, n)
		for i := range x {
			x[i] = float32(math.Ldexp(r.Float64()*2-1, r.IntN(25)-12))
		}
		return x
	}
	for _, typ := range []gguf.GGMLType{gguf.TypeF16, gguf.TypeBF16} {
		for _, n := range []int{31, 32, 100, 4096, 4099} {
			t.Run(fmt.Sprintf("%s/n=%d", typ, n), func(t *testing.T) {
				differsFromFloat64 := false
				for trial := 0; trial < 20; trial++ {
					w := quantizeRow(t, typ, wide(n))
					x := quantizeRow(t, typ, wide(n))
					a, b := dequantize(t, typ, w, n), dequantize(t, typ, x, n)
					got := VecDot(typ, n, w, x)
					want := ggmlFloatDot(a, b, typ == gguf.TypeBF16, true)
					if math.Float32bits(got) != math.Float32bits(want) {
						t.Fatalf("trial %d: VecDot = %.9g, ggml order gives %.9g", trial, got, want)
					}
					var exact float64
					for i := range a {
						exact += float64(a[i]) * float64(b[i])
					}
					differsFromFloat64 = differsFromFloat64 || float32(exact) != got
				}
				if n >= 100 && !differsFromFloat64 {
					t.Fatal("inputs too tame: float64 accumulation gives the same bits, the test proves nothing")
				}
			})
		}
	}
	t.Run("F32", func(t *testing.T) {
		for _, n := range []int{31, 100, 4099} {
			a, b := wide(n), wide(n)
			got, want := VecDotF32(a, b), ggmlFloatDot(a, b, false, false)
			if math.Float32bits(got) != math.Float32bits(want) {
				t.Fatalf("n=%d: VecDotF32 = %.9g, ggml order without FMA gives %.9g", n, got, want)
			}
		}
	})
}

func TestVecDotRejectsBadShapes(t *testing.T) {
	cases := []struct {
		name       string
		typ        gguf.GGMLType
		n, wl, xl  int
		wantSubstr string
	}{
		{"ragged K row", gguf.TypeQ4_K, 100, 0, 0, "not a multiple of Q4_K's 256"},
		{"short weights", gguf.TypeQ4_0, 64, 35, 68, "take 36 bytes, got 35"},
		{"wrong activation", gguf.TypeQ6_K, 256, 210, 34, "take 292 bytes, got 34"},
		{"unsupported", gguf.TypeIQ2_XS, 256, 0, 0, "IQ2_XS"},
		{"Q8_K is not a weight type", gguf.TypeQ8_K, 256, 292, 292, "Q8_K"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckVecDot(c.typ, c.n, c.wl, c.xl)
			if err == nil || !strings.Contains(err.Error(), c.wantSubstr) {
				t.Fatalf("CheckVecDot error = %v, want it to mention %q", err, c.wantSubstr)
			}
			defer func() {
				p := recover()
				if p == nil {
					t.Fatal("VecDot accepted a call CheckVecDot rejects")
				}
				if perr, ok := p.(error); !ok || perr.Error() != err.Error() {
					t.Fatalf("VecDot panicked with %v, want CheckVecDot's error", p)
				}
			}()
			VecDot(c.typ, c.n, make([]byte, c.wl), make([]byte, c.xl))
		})
	}
}

func TestNoAllocations(t *testing.T) {
	r := rand.New(rand.NewPCG(5, 6))
	const n = 4096
	act := gaussian(r, n, 1)
	out := make([]float32, n)
	for _, typ := range weightTypes {
		vt := VecDotType(typ)
		w := quantizeWeights(t, typ, gaussian(r, n, 0.02))
		x := quantizeRow(t, vt, act)
		if a := testing.AllocsPerRun(10, func() { VecDot(typ, n, w, x) }); a != 0 {
			t.Errorf("VecDot(%s) allocates %v times", typ, a)
		}
		if a := testing.AllocsPerRun(10, func() { _ = Dequantize(typ, w, out) }); a != 0 {
			t.Errorf("Dequantize(%s) allocates %v times", typ, a)
		}
		if a := testing.AllocsPerRun(10, func() { _ = QuantizeRow(vt, act, x) }); a != 0 {
			t.Errorf("QuantizeRow(%s) allocates %v times", vt, a)
		}
	}
}

func BenchmarkVecDot(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	const n = 4096
	act := gaussian(r, n, 1)
	for _, typ := range weightTypes {
		w := quantizeWeights(b, typ, gaussian(r, n, 0.02))
		x := quantizeRow(b, VecDotType(typ), act)
		for _, lvl := range Levels() {
			b.Run(lvl.String()+"/"+typ.String(), func(b *testing.B) {
				defer ForceLevel(lvl)()
				b.SetBytes(int64(len(w)))
				var sink float32
				for b.Loop() {
					sink += VecDot(typ, n, w, x)
				}
				_ = sink
			})
		}
	}
}

func BenchmarkQuantizeRow(b *testing.B) {
	r := rand.New(rand.NewPCG(9, 10))
	const n = 4096
	act := gaussian(r, n, 1)
	for _, vt := range []gguf.GGMLType{gguf.TypeF16, gguf.TypeQ8_0, gguf.TypeQ8_1, gguf.TypeQ8_K} {
		x := make([]byte, mustRowBytes(b, vt, n))
		for _, lvl := range Levels() {
			b.Run(lvl.String()+"/"+vt.String(), func(b *testing.B) {
				defer ForceLevel(lvl)()
				b.SetBytes(4 * n)
				for b.Loop() {
					_ = QuantizeRow(vt, act, x)
				}
			})
		}
	}
}
