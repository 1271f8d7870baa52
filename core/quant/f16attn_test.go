package quant

import (
	"math"
	"math/rand/v2"
	"testing"
)

// TestF16AttentionHelpersMatchGenericTwins: DotF16x64, AxpyF16F64 and
// FoldLanes64 give the generic bits at every level, for lengths with and
// without a part past the SIMD groups, subnormal and extreme halves.
func TestF16AttentionHelpersMatchGenericTwins(t *testing.T) {
	r := rand.New(rand.NewPCG(81, 82))
	gen := genericKernels()
	for _, lvl := range Levels() {
		ks := levels[lvl]
		for _, n := range []int{0, 1, 7, 8, 9, 40, 63, 64, 65, 96, 128, 200, 256} {
			for rep := 0; rep < 12; rep++ {
				k := halfRow(r, n, rep)
				q := make([]float32, n)
				for i := range q {
					q[i] = F16ToF32(F32ToF16(float32(r.NormFloat64())))
				}
				n64 := n &^ 63
				if got, want := ks.dotF16x64(q[:n64], k[:n64]), gen.dotF16x64(q[:n64], k[:n64]); !sameBits(got, want) {
					t.Fatalf("%s n=%d rep %d: dotF16x64 %g, generic %g", lvl, n, rep, got, want)
				}
				func() {
					defer ForceLevel(lvl)()
					if got, want := DotF16x64(q, k), gen.dotF16x64(q[:n64], k[:n64]); !sameBits(got, want) {
						t.Fatalf("%s n=%d rep %d: DotF16x64 %g, generic %g", lvl, n, rep, got, want)
					}
				}()

				a := F16ToF32(F32ToF16(float32(r.NormFloat64())))
				acc := make([]float64, n)
				for i := range acc {
					acc[i] = r.NormFloat64()
				}
				want := append([]float64(nil), acc...)
				gen.axpyF16F64(want, a, k)
				ks.axpyF16F64(acc, a, k)
				for i := range acc {
					if acc[i] != want[i] && !(acc[i] != acc[i] && want[i] != want[i]) {
						t.Fatalf("%s n=%d rep %d: axpyF16F64[%d] = %g, generic %g", lvl, n, rep, i, acc[i], want[i])
					}
				}

				lanes := make([]float32, 64*n)
				for i := range lanes {
					lanes[i] = float32(r.NormFloat64())
					if rep%6 == 5 && i%5 == 0 {
						lanes[i] *= 1e30
					}
				}
				tail := make([]float64, n)
				for i := range tail {
					tail[i] = r.NormFloat64() * 1e-3
				}
				got, wantF := make([]float32, n), make([]float32, n)
				gen.foldLanes64(wantF, lanes, tail)
				ks.foldLanes64(got, lanes, tail)
				for j := range got {
					if !sameBits(got[j], wantF[j]) {
						t.Fatalf("%s n=%d rep %d: foldLanes64[%d] = %g, generic %g", lvl, n, rep, j, got[j], wantF[j])
					}
				}
			}
		}
	}
}

// TestRoundF16MatchesGenericTwin: RoundF16, RoundF16Scaled and the F16 row
// conversion (quantizeF16) give the generic bits at every level for every input class: normal, overflowing,
// half-subnormal, below the smallest half subnormal, ties, infinities,
// NaNs with payloads, signed zeros; odd lengths.
func TestRoundF16MatchesGenericTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(83, 84))
	for _, lvl := range Levels() {
		for _, n := range []int{0, 1, 7, 8, 9, 64, 100} {
			for rep := 0; rep < 40; rep++ {
				src := make([]float32, n)
				for i := range src {
					switch r.IntN(6) {
					case 0:
						src[i] = float32(r.NormFloat64())
					case 1:
						src[i] = float32(r.NormFloat64() * 70000) // some overflow
					case 2:
						src[i] = float32(r.NormFloat64() * 1e-6) // half subnormals
					case 3:
						src[i] = float32(r.NormFloat64() * 1e-8) // below them
					case 4:
						// exact ties: a half plus half its ulp
						h := F16ToF32(uint16(r.IntN(0x7c00)))
						src[i] = h * (1 + 1.0/2048)
					default:
						src[i] = math.Float32frombits([]uint32{0x7f800000, 0xff800000, 0x7fc00000 | uint32(r.IntN(1<<22)), 0xffa00001, 0, 0x80000000, 1}[r.IntN(7)])
					}
					if r.IntN(2) == 0 {
						src[i] = -src[i]
					}
				}
				// The F16 row conversion on the same inputs.
				wantB, gotB := make([]byte, 2*n), make([]byte, 2*n)
				genericKernels().quantizeF16(src, wantB)
				levels[lvl].quantizeF16(src, gotB)
				for i := 0; i < n; i++ {
					if le16(gotB[2*i:]) != le16(wantB[2*i:]) {
						t.Fatalf("%s n=%d: quantizeF16(%#x) = %#04x, generic %#04x", lvl, n, math.Float32bits(src[i]), le16(gotB[2*i:]), le16(wantB[2*i:]))
					}
				}
				s := float32(r.Float64() * 3)
				for _, scaled := range []bool{false, true} {
					want, got := make([]float32, n), make([]float32, n)
					genericKernels().roundF16(want, src, s, scaled)
					func() {
						defer ForceLevel(lvl)()
						if scaled {
							RoundF16Scaled(got, src, s)
						} else {
							RoundF16(got, src)
						}
					}()
					for i := range got {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
							t.Fatalf("%s n=%d scaled=%v: %g (%#x) → %#x, generic %#x", lvl, n, scaled, src[i], math.Float32bits(src[i]), math.Float32bits(got[i]), math.Float32bits(want[i]))
						}
					}
				}
			}
		}
	}
}

// TestDotF16x64RowsMatchesOneHead: DotF16x64Rows gives, for every head
// and K row, the bits of the generic one-head kernel (DotF16x64) at every
// level: 1 to 9 heads, head dimensions with and without a part past the
// 64-lane chunks (and below one), row counts and strides as a cache has
// them, subnormal and extreme halves.
func TestDotF16x64RowsMatchesOneHead(t *testing.T) {
	r := rand.New(rand.NewPCG(85, 86))
	gen := genericKernels()
	for _, lvl := range Levels() {
		for _, ng := range []int{1, 2, 3, 4, 5, 8, 9} {
			for _, d := range []int{1, 40, 63, 64, 65, 72, 80, 128, 136, 256} {
				for _, rows := range []int{1, 2, 7, 33} {
					rep := r.IntN(8)
					kstride := d*2 + rep
					k := halfRow(r, (rows-1)*kstride+d, rep)
					q := make([]float32, ng*d)
					for i := range q {
						q[i] = F16ToF32(F32ToF16(float32(r.NormFloat64())))
						if rep == 5 && i%7 == 0 {
							q[i] = 0
						}
					}
					n64 := d &^ 63
					ostride := rows + 3
					got := make([]float32, ng*ostride)
					for i := range got {
						got[i] = -7 // outside the rows: kept
					}
					func() {
						defer ForceLevel(lvl)()
						DotF16x64Rows(got, ostride, q, ng, d, k, kstride, rows)
					}()
					for g := 0; g < ng; g++ {
						for j := 0; j < ostride; j++ {
							want := float32(-7)
							if j < rows {
								want = gen.dotF16x64(q[g*d:g*d+n64], k[j*kstride:j*kstride+n64])
							}
							if !sameBits(got[g*ostride+j], want) {
								t.Fatalf("%s ng=%d d=%d rows=%d: out[head %d, row %d] = %g, one head %g", lvl, ng, d, rows, g, j, got[g*ostride+j], want)
							}
						}
					}
				}
			}
		}
	}
}

// TestAxpyF16Lanes64MatchesRows: AxpyF16Lanes64 gives, at every level,
// the bits of the generic AxpyF16 row by row into cleared lanes (row j to
// lane j mod 64, SkipWeight rows left out): head dimensions with and
// without a part past the 8- and 64-column groups, row counts below, at and
// past 64 and 128, strides past the row, +0 weights (added: 0·inf is NaN)
// and skipped ones, infinite and subnormal halves.
func TestAxpyF16Lanes64MatchesRows(t *testing.T) {
	r := rand.New(rand.NewPCG(87, 88))
	for _, lvl := range Levels() {
		for _, d := range []int{1, 7, 8, 9, 40, 64, 65, 72, 80, 128, 136} {
			for _, rows := range []int{0, 1, 5, 63, 64, 65, 130, 192, 200} {
				for rep := 0; rep < 3; rep++ {
					vstride := d*3 + rep
					v := lanesHalves(r, rows*vstride+d, rep+4)
					w := lanesWeights(r, rows)
					want := make([]float32, 64*d)
					lanesRows(want, d, w, v, vstride)
					got := make([]float32, 64*d)
					for i := range got {
						got[i] = float32(r.NormFloat64()) // overwritten
					}
					func() {
						defer ForceLevel(lvl)()
						AxpyF16Lanes64(got, w, v, vstride)
					}()
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
							t.Fatalf("%s d=%d rows=%d rep %d: lanes[%d] (lane %d, column %d) = %g, rows %g", lvl, d, rows, rep, i, i/d, i%d, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// TestAxpyF16F64RowsMatchesRows: AxpyF16F64Rows gives, at every level, the
// bits of the generic AxpyF16F64 row by row (SkipWeight rows left out):
// column counts with and without a part past the 8-column groups, strides
// past the row, +0 and skipped weights, infinite and subnormal halves.
func TestAxpyF16F64RowsMatchesRows(t *testing.T) {
	r := rand.New(rand.NewPCG(89, 90))
	for _, lvl := range Levels() {
		for _, d := range []int{1, 7, 8, 9, 40, 64, 65, 80, 128, 136} {
			for _, rows := range []int{0, 1, 2, 31, 63} {
				vstride := d*2 + rows%3
				v := lanesHalves(r, rows*vstride+d, rows)
				w := lanesWeights(r, rows)
				acc := make([]float64, d)
				for i := range acc {
					acc[i] = r.NormFloat64() * 1e-3
				}
				want := append([]float64(nil), acc...)
				for j, a := range w {
					if math.Float32bits(a) != 0x80000000 {
						axpyF16F64Generic(want, a, v[j*vstride:j*vstride+d])
					}
				}
				func() {
					defer ForceLevel(lvl)()
					AxpyF16F64Rows(acc, w, v, vstride)
				}()
				for i := range want {
					if math.Float64bits(acc[i]) != math.Float64bits(want[i]) && !(acc[i] != acc[i] && want[i] != want[i]) {
						t.Fatalf("%s d=%d rows=%d: acc[%d] = %g, rows %g", lvl, d, rows, i, acc[i], want[i])
					}
				}
			}
		}
	}
}

// TestAxpyF16Lanes64HeadsMatchesRows: AxpyF16Lanes64Heads gives every head,
// at every level, the bits of the generic AxpyF16 row by row into cleared
// lanes from its own weights (as TestAxpyF16Lanes64MatchesRows for one
// head): head counts around the four-head kernel's, head dimension 64 and
// others, row counts below, at and past 64, weight strides past the rows,
// skipped, +0 and ordinary weights per head, infinite halves.
func TestAxpyF16Lanes64HeadsMatchesRows(t *testing.T) {
	r := rand.New(rand.NewPCG(89, 90))
	for _, lvl := range Levels() {
		for _, d := range []int{64, 40, 128} {
			for _, ng := range []int{1, 3, 4, 5, 8} {
				for _, rows := range []int{0, 1, 63, 64, 65, 130, 200} {
					vstride := d*4 + 3
					wstride := rows + 5
					v := lanesHalves(r, max(rows, 1)*vstride+d, ng+4)
					w := lanesWeights(r, ng*wstride)
					want := make([]float32, ng*64*d)
					for g := 0; g < ng; g++ {
						lanesRows(want[g*64*d:(g+1)*64*d], d, w[g*wstride:g*wstride+rows], v, vstride)
					}
					got := make([]float32, ng*64*d)
					for i := range got {
						got[i] = float32(r.NormFloat64()) // overwritten
					}
					func() {
						defer ForceLevel(lvl)()
						AxpyF16Lanes64Heads(got, ng, w, wstride, rows, v, vstride)
					}()
					for i := range want {
						if math.Float32bits(got[i]) != math.Float32bits(want[i]) && !(got[i] != got[i] && want[i] != want[i]) {
							g, k := i/(64*d), i%(64*d)
							t.Fatalf("%s d=%d heads=%d rows=%d: head %d lane %d column %d = %g, rows %g", lvl, d, ng, rows, g, k/d, k%d, got[i], want[i])
						}
					}
				}
			}
		}
	}
}

// lanesHalves is halfRow(r, n, seed) with about one half in 300 ±inf.
func lanesHalves(r *rand.Rand, n, seed int) []uint16 {
	v := halfRow(r, n, seed)
	for i := range v {
		if r.IntN(300) == 0 {
			v[i] = 0x7c00 | uint16(r.IntN(2))<<15 // ±inf
		}
	}
	return v
}

// lanesWeights is n F16-exact weights in [0, 1), about one in ten
// SkipWeight and one in ten +0.
func lanesWeights(r *rand.Rand, n int) []float32 {
	w := make([]float32, n)
	for j := range w {
		w[j] = F16ToF32(F32ToF16(float32(r.Float64())))
		switch r.IntN(10) {
		case 0:
			w[j] = SkipWeight
		case 1:
			w[j] = 0
		}
	}
	return w
}

// lanesRows is AxpyF16Lanes64's definition: the generic AxpyF16 of every
// row j < len(w) not skipped into lane j mod 64 of want (cleared lanes).
func lanesRows(want []float32, d int, w []float32, v []uint16, vstride int) {
	for j, a := range w {
		if math.Float32bits(a) == 0x80000000 {
			continue
		}
		l := (j & 63) * d
		axpyF16Generic(want[l:l+d], a, v[j*vstride:j*vstride+d])
	}
}
