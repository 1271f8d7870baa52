package quant

import (
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"slices"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// The SIMD twins are checked against the generic bodies at every level this
// machine and build offer: same bits, on random rows and on edge rows.

// twinDot names a dot kernel of a kernel set.
type twinDot struct {
	wt   gguf.GGMLType
	one  func(*kernelSet) func(w, x []byte) float32
	four func(*kernelSet) func(w, x []byte, stride int, out *[4]float32)
}

var twinDots = []twinDot{
	{gguf.TypeQ4_0, func(k *kernelSet) func(w, x []byte) float32 { return k.dotQ4_0Q8_0 },
		func(k *kernelSet) func(w, x []byte, s int, o *[4]float32) { return k.dot4Q4_0Q8_0 }},
	{gguf.TypeQ8_0, func(k *kernelSet) func(w, x []byte) float32 { return k.dotQ8_0Q8_0 },
		func(k *kernelSet) func(w, x []byte, s int, o *[4]float32) { return k.dot4Q8_0Q8_0 }},
	{gguf.TypeQ4_K, func(k *kernelSet) func(w, x []byte) float32 { return k.dotQ4_KQ8_K },
		func(k *kernelSet) func(w, x []byte, s int, o *[4]float32) { return k.dot4Q4_KQ8_K }},
	{gguf.TypeQ6_K, func(k *kernelSet) func(w, x []byte) float32 { return k.dotQ6_KQ8_K },
		func(k *kernelSet) func(w, x []byte, s int, o *[4]float32) { return k.dot4Q6_KQ8_K }},
	{gguf.TypeF16, func(k *kernelSet) func(w, x []byte) float32 { return k.dotF16 }, nil},
}

// sameBits is bit equality, any NaN matching any NaN.
func sameBits(a, b float32) bool {
	return math.Float32bits(a) == math.Float32bits(b) || (a != a && b != b)
}

// edgeKind selects how twinRows fills a row.
type edgeKind int

const (
	edgeRandom edgeKind = iota
	edgeZero            // all bytes zero: zero scales and quants
	edgeMax             // largest finite scales, extreme quants
	edgeMixed           // random rows with some zero and some extreme blocks
)

// activation quant bytes are kept in −127..127, the range the quantizers
// produce (ggml's sign trick, which the AVX2 kernels share, needs it).
func clampAct(b byte) byte {
	if b == 0x80 {
		return 0x81
	}
	return b
}

// twinRows builds one weight row of typ and one activation row of its
// vec-dot type, n elements each, of the given kind.
func twinRows(t testing.TB, r *rand.Rand, typ gguf.GGMLType, n int, kind edgeKind) (w, x []byte) {
	vt := VecDotType(typ)
	w = randomWeightBytes(t, r, typ, n)
	x = make([]byte, mustRowBytes(t, vt, n))
	switch vt {
	case gguf.TypeF16:
		for i := 0; i < n; i++ {
			put16(x[2*i:], F32ToF16(float32(r.NormFloat64())))
		}
	case gguf.TypeQ8_0:
		for b := 0; b < n/qk; b++ {
			xb := x[b*bytesQ80 : (b+1)*bytesQ80]
			put16(xb, F32ToF16(float32(r.Float64()*0.1)))
			for j := 2; j < bytesQ80; j++ {
				xb[j] = clampAct(byte(r.Uint32()))
			}
		}
	case gguf.TypeF32:
		for i := 0; i < n; i++ {
			putF32(x[4*i:], float32(r.NormFloat64()))
		}
	case gguf.TypeBF16:
		for i := 0; i < n; i++ {
			put16(x[2*i:], F32ToBF16(float32(r.NormFloat64())))
		}
	case gguf.TypeQ8_1:
		for b := 0; b < n/qk; b++ {
			xb := x[b*bytesQ81 : (b+1)*bytesQ81]
			put16(xb, F32ToF16(float32(r.Float64()*0.1)))
			put16(xb[2:], F32ToF16(float32(r.NormFloat64())))
			for j := 4; j < bytesQ81; j++ {
				xb[j] = clampAct(byte(r.Uint32()))
			}
		}
	case gguf.TypeQ8_K:
		for b := 0; b < n/qkK; b++ {
			xb := x[b*bytesQ8K : (b+1)*bytesQ8K]
			putF32(xb, float32(r.NormFloat64()*0.01))
			for j := 4; j < 260; j++ {
				xb[j] = clampAct(byte(r.Uint32()))
			}
			fixBsums(xb)
		}
	}
	ts, vts := typ.TypeSize(), vt.TypeSize()
	nb := len(w) / ts
	xbs := vts * (typ.BlockSize() / vt.BlockSize())
	for b := 0; b < nb; b++ {
		k := kind
		if kind == edgeMixed {
			k = []edgeKind{edgeRandom, edgeZero, edgeMax}[r.IntN(3)]
		}
		wb := w[b*ts : (b+1)*ts]
		xb := x[b*xbs : (b+1)*xbs]
		switch k {
		case edgeZero:
			clear(wb)
			if r.IntN(2) == 0 {
				clear(xb)
			}
		case edgeMax:
			maxBlock(typ, wb, r)
			maxBlock(vt, xb, r)
		}
	}
	return w, x
}

// fixBsums recomputes a Q8_K block's bsums from its quants.
func fixBsums(xb []byte) {
	for j := 0; j < 16; j++ {
		var s int32
		for _, q := range xb[4+16*j : 4+16*j+16] {
			s += int32(int8(q))
		}
		put16(xb[260+2*j:], uint16(int16(s)))
	}
}

// maxBlock fills a block with the largest finite scales and extreme quants.
func maxBlock(typ gguf.GGMLType, b []byte, r *rand.Rand) {
	ext := func(signed bool) byte {
		switch r.IntN(3) {
		case 0:
			return 0xff // all bits: nibbles 15, int8 −1 or max unsigned
		case 1:
			if signed {
				return 0x81 // −127
			}
			return 0x00
		}
		if signed {
			return 0x7f
		}
		return 0xf0
	}
	switch typ {
	case gguf.TypeQ8_0:
		put16(b, 0x7bff) // 65504
		for j := 2; j < len(b); j++ {
			b[j] = ext(true)
		}
	case gguf.TypeQ8_K:
		putF32(b, -1e30)
		for j := 4; j < 260; j++ {
			b[j] = ext(true)
		}
		fixBsums(b)
	case gguf.TypeF16:
		for j := 0; j+1 < len(b); j += 2 {
			put16(b[j:], 0x7bff^uint16(r.IntN(2))<<15)
		}
	case gguf.TypeQ8_1:
		put16(b, 0x7bff)
		put16(b[2:], 0x7bff^uint16(r.IntN(2))<<15)
		for j := 4; j < len(b); j++ {
			b[j] = ext(true)
		}
	case gguf.TypeBF16:
		// Large enough that products and sums overflow float32.
		for j := 0; j+1 < len(b); j += 2 {
			put16(b[j:], F32ToBF16(float32(1e20*(2*r.Float64()-1))))
		}
	case gguf.TypeF32:
		for j := 0; j+3 < len(b); j += 4 {
			putF32(b[j:], float32(1e19*(2*r.Float64()-1)))
		}
	default:
		for j := range b {
			b[j] = ext(false)
		}
		for _, off := range scaleFields[typ] {
			put16(b[off:], 0x7bff^uint16(r.IntN(2))<<15)
		}
	}
}

func twinSizes(typ gguf.GGMLType) []int {
	bs := typ.BlockSize()
	if bs == 1 {
		return []int{0, 1, 7, 31, 32, 33, 64, 100, 2048 + 5}
	}
	return []int{0, bs, 2 * bs, 3 * bs, 7 * bs, 8 * bs, 37 * bs}
}

func TestKernelsMatchGenericTwins(t *testing.T) {
	checkTwinDots(t, twinDots, 0, 64)
}

// checkTwinDots runs every dot of dots at every level against its generic
// twin, bit for bit, on twinRows' random and edge rows at twinSizes'
// lengths (seeded by the length plus seed and the kind), and the
// four-token form (where there is one) on four tokens gap bytes apart,
// each against the one-token generic result.
func checkTwinDots(t *testing.T, dots []twinDot, seed uint64, gap int) {
	gen := genericKernels()
	for _, lvl := range Levels() {
		ks := levels[lvl]
		for _, td := range dots {
			for _, n := range twinSizes(td.wt) {
				for kind := edgeRandom; kind <= edgeMixed; kind++ {
					name := fmt.Sprintf("%s/%s/n=%d/kind=%d", lvl, td.wt, n, kind)
					t.Run(name, func(t *testing.T) {
						r := rand.New(rand.NewPCG(uint64(n)+seed, uint64(kind)))
						for rep := 0; rep < 8; rep++ {
							w, x := twinRows(t, r, td.wt, n, kind)
							want := td.one(gen)(w, x)
							if got := td.one(ks)(w, x); !sameBits(got, want) {
								t.Fatalf("rep %d: %s = %g (%#08x), generic %g (%#08x)", rep, lvl, got, math.Float32bits(got), want, math.Float32bits(want))
							}
							if td.four == nil {
								continue
							}
							xs := make([][]byte, 4)
							stride := len(x) + gap
							buf := make([]byte, 3*stride+len(x))
							for k := range xs {
								_, xs[k] = twinRows(t, r, td.wt, n, kind)
								copy(buf[k*stride:], xs[k])
							}
							var out [4]float32
							td.four(ks)(w, buf, stride, &out)
							for k := range xs {
								if want := td.one(gen)(w, xs[k]); !sameBits(out[k], want) {
									t.Fatalf("rep %d token %d: %s four-token = %g, generic %g", rep, k, lvl, out[k], want)
								}
							}
						}
					})
				}
			}
		}
	}
}

// TestQuantizersMatchGenericTwins: the activation quantizers give the same
// bytes at every level, on random rows and on rows with zeros, ties,
// huge values, infinities and NaNs.
func TestQuantizersMatchGenericTwins(t *testing.T) {
	gen := genericKernels()
	type qz struct {
		vt gguf.GGMLType
		f  func(*kernelSet) func([]float32, []byte)
	}
	qs := []qz{
		{gguf.TypeQ8_0, func(k *kernelSet) func([]float32, []byte) { return k.quantizeQ8_0 }},
		{gguf.TypeQ8_K, func(k *kernelSet) func([]float32, []byte) { return k.quantizeQ8_K }},
	}
	for _, lvl := range Levels() {
		ks := levels[lvl]
		for _, q := range qs {
			bs := q.vt.BlockSize()
			for _, nb := range []int{0, 1, 2, 5, 16} {
				for kind := 0; kind < 5; kind++ {
					t.Run(fmt.Sprintf("%s/%s/blocks=%d/kind=%d", lvl, q.vt, nb, kind), func(t *testing.T) {
						r := rand.New(rand.NewPCG(uint64(nb), uint64(kind)+100))
						for rep := 0; rep < 8; rep++ {
							src := make([]float32, nb*bs)
							for i := range src {
								src[i] = float32(r.NormFloat64())
								switch kind {
								case 1: // zero blocks and signed zeros
									src[i] = float32(math.Copysign(0, r.NormFloat64()))
								case 2: // ties: halves that land on .5 after scaling
									src[i] = float32(r.IntN(255)-127) / 2
								case 3: // huge and tiny
									src[i] = float32(r.NormFloat64() * math.Pow(10, float64(r.IntN(70)-35)))
								case 4: // some specials
									switch r.IntN(16) {
									case 0:
										src[i] = float32(math.Inf(1 - 2*r.IntN(2)))
									case 1:
										src[i] = float32(math.NaN())
									case 2:
										src[i] = math.MaxFloat32
									case 3: // a quiet NaN with a payload
										src[i] = math.Float32frombits(0x7fc00000 | uint32(r.IntN(1<<22)) | uint32(r.IntN(2))<<31)
									}
								}
							}
							want := make([]byte, nb*q.vt.TypeSize())
							got := make([]byte, len(want))
							q.f(gen)(src, want)
							q.f(ks)(src, got)
							for i := range want {
								if got[i] != want[i] {
									t.Fatalf("rep %d: byte %d (block %d) = %#02x, generic %#02x", rep, i, i/q.vt.TypeSize(), got[i], want[i])
								}
							}
						}
					})
				}
			}
		}
	}
}

func TestForceLevel(t *testing.T) {
	ls := Levels()
	if ls[0] != Generic {
		t.Fatalf("Levels() = %v, want Generic first", ls)
	}
	// The default is the best available, or the level EnvLevel names
	// where this CPU and build have it.
	before, want := CurrentLevel(), ls[len(ls)-1]
	if slices.Contains(ls, envLevel) {
		want = envLevel
	}
	if before != want {
		t.Errorf("default level %s, want %s (%s=%q)", before, want, EnvLevel, os.Getenv(EnvLevel))
	}
	restore := ForceLevel(Generic)
	if CurrentLevel() != Generic || cur != levels[Generic] {
		t.Errorf("ForceLevel(Generic) left %s", CurrentLevel())
	}
	restore()
	if CurrentLevel() != before {
		t.Errorf("restore left %s, want %s", CurrentLevel(), before)
	}
	defer func() {
		if recover() == nil {
			t.Error("ForceLevel of a level that is not available did not panic")
		}
	}()
	ForceLevel(Level(99))
}

// halfRow is n random halves: normal values, some subnormals, some of the
// largest magnitude.
func halfRow(r *rand.Rand, n, rep int) []uint16 {
	v := make([]uint16, n)
	for i := range v {
		v[i] = F32ToF16(float32(r.NormFloat64()))
		if rep%5 == 4 {
			v[i] = uint16(r.Uint32()) & 0x83ff // zero exponent: subnormals
		}
		if rep%7 == 6 && i%3 == 0 {
			v[i] = 0x7bff ^ uint16(r.IntN(2))<<15
		}
	}
	return v
}

// TestAxpyF16MatchesGenericTwin: acc += a·v at every level, odd lengths,
// half-valued a (as attention passes it) and extreme halves.
func TestAxpyF16MatchesGenericTwin(t *testing.T) {
	gen := genericKernels()
	r := rand.New(rand.NewPCG(21, 22))
	for _, lvl := range Levels() {
		for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 65, 300} {
			for rep := 0; rep < 20; rep++ {
				v := halfRow(r, n, rep)
				acc := make([]float32, n)
				for i := range acc {
					acc[i] = float32(r.NormFloat64())
				}
				a := F16ToF32(F32ToF16(float32(r.Float64())))
				want := append([]float32(nil), acc...)
				gen.axpyF16(want, a, v)
				levels[lvl].axpyF16(acc, a, v)
				for i := range acc {
					if !sameBits(acc[i], want[i]) {
						t.Fatalf("%s n=%d rep %d: acc[%d] = %g, generic %g", lvl, n, rep, i, acc[i], want[i])
					}
				}
			}
		}
	}
}

// TestDotF16Lanes64MatchesGenericTwin: the 16 folded lanes are the same
// bits at every level, for one to several chunks of 64 and ragged lengths.
func TestDotF16Lanes64MatchesGenericTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(23, 24))
	for _, lvl := range Levels() {
		for _, n := range []int{0, 63, 64, 65, 128, 200, 256} {
			for rep := 0; rep < 20; rep++ {
				k := halfRow(r, n, rep)
				q := make([]float32, n)
				for i := range q {
					q[i] = F16ToF32(F32ToF16(float32(r.NormFloat64())))
				}
				var want, got [16]float32
				func() {
					defer ForceLevel(Generic)()
					DotF16Lanes64(q, k, &want)
				}()
				func() {
					defer ForceLevel(lvl)()
					DotF16Lanes64(q, k, &got)
				}()
				for l := range got {
					if !sameBits(got[l], want[l]) {
						t.Fatalf("%s n=%d rep %d: lane %d = %g, generic %g", lvl, n, rep, l, got[l], want[l])
					}
				}
			}
		}
	}
}

// TestFourRowKernelsMatchGenericTwins: the four-row Q4_0, Q8_0, Q4_K and Q6_K kernels
// give each row the one-row generic bits, on random and edge rows.
func TestFourRowKernelsMatchGenericTwins(t *testing.T) {
	gen := genericKernels()
	type r4 struct {
		wt gguf.GGMLType
		f  func(*kernelSet) func(w []byte, wstride int, x []byte, out *[4]float32)
		g  func(w, x []byte) float32
	}
	for _, lvl := range Levels() {
		ks := levels[lvl]
		for _, c := range []r4{
			{gguf.TypeQ4_0, func(k *kernelSet) func([]byte, int, []byte, *[4]float32) { return k.dotR4Q4_0Q8_0 }, gen.dotQ4_0Q8_0},
			{gguf.TypeQ8_0, func(k *kernelSet) func([]byte, int, []byte, *[4]float32) { return k.dotR4Q8_0Q8_0 }, gen.dotQ8_0Q8_0},
			{gguf.TypeQ4_K, func(k *kernelSet) func([]byte, int, []byte, *[4]float32) { return k.dotR4Q4_KQ8_K }, gen.dotQ4_KQ8_K},
			{gguf.TypeQ6_K, func(k *kernelSet) func([]byte, int, []byte, *[4]float32) { return k.dotR4Q6_KQ8_K }, gen.dotQ6_KQ8_K},
		} {
			for _, n := range twinSizes(c.wt) {
				for kind := edgeRandom; kind <= edgeMixed; kind++ {
					r := rand.New(rand.NewPCG(uint64(n)+7, uint64(kind)))
					for rep := 0; rep < 8; rep++ {
						var ws [4][]byte
						var x []byte
						for k := range ws {
							ws[k], x = twinRows(t, r, c.wt, n, kind)
						}
						stride := len(ws[0]) + 36 // rows need not be adjacent
						buf := make([]byte, 3*stride+len(ws[0]))
						for k := range ws {
							copy(buf[k*stride:], ws[k])
						}
						var out [4]float32
						c.f(ks)(buf, stride, x, &out)
						for k := range ws {
							if want := c.g(ws[k], x); !sameBits(out[k], want) {
								t.Fatalf("%s %s n=%d kind %d rep %d row %d: %g, generic %g", lvl, c.wt, n, kind, rep, k, out[k], want)
							}
						}
					}
				}
			}
		}
	}
}
