package quant

import (
	"fmt"
	"os"
	"strings"
	"sync"
)

// Level is a kernel implementation level: the generic Go bodies, or a
// SIMD instruction set the running CPU has and this build carries code for.
type Level int

const (
	// Generic is the pure Go twin of every kernel; always available.
	Generic Level = iota
	// AVX2 is amd64 with AVX2, FMA and F16C (hand-written assembly).
	AVX2
	// NEON is arm64's Advanced SIMD (assembly generated from
	// _asm/kernels_arm64.s.in).
	NEON
	// NEONDot is NEON with the dot-product extension (SDOT).
	NEONDot
	// AVX512 is AVX2 plus AVX-512 F, BW, VL and VNNI (VPDPBUSD): the AVX2
	// kernels, with VNNI twins of the hot Q4_0, Q8_0 and Q4_K ones and of
	// Q6_K's four-row decode kernel.
	AVX512

	maxLevel = AVX512
)

func (l Level) String() string {
	switch l {
	case Generic:
		return "generic"
	case AVX2:
		return "avx2"
	case NEON:
		return "neon"
	case NEONDot:
		return "neondot"
	case AVX512:
		return "avx512"
	}
	return fmt.Sprintf("level(%d)", int(l))
}

// HasAVX2 reports whether l is one of amd64's SIMD levels (AVX2 and
// AVX512), whose CPUs run every AVX2 kernel.
func (l Level) HasAVX2() bool { return l == AVX2 || l == AVX512 }

// EnvLevel is the environment variable that caps the default level by
// name ("generic", "avx2", "avx512", "neon", "neondot"), for side-by-side
// runs such as MINFER_CPU_LEVEL=avx2 minfer bench …: the named level is
// the default when this CPU and build have it; otherwise (or when unset)
// the best level is.
const EnvLevel = "MINFER_CPU_LEVEL"

// ParseLevel is the level named s (Level.String's names, any case).
func ParseLevel(s string) (Level, error) {
	for l := Generic; l <= maxLevel; l++ {
		if strings.EqualFold(s, l.String()) {
			return l, nil
		}
	}
	return Generic, fmt.Errorf("quant: no kernel level %q: %w", s, ErrUnknownLevel)
}

// envLevel is the level EnvLevel names, -1 when unset or unknown; read
// before the init functions register levels.
var envLevel = func() Level {
	l, err := ParseLevel(os.Getenv(EnvLevel))
	if err != nil {
		return -1
	}
	return l
}()

// kernelSet is one level's kernels. A nil field means the level has no
// twin for that kernel and the generic body runs.
type kernelSet struct {
	dotQ4_0Q8_0 func(w, x []byte) float32
	dotQ8_0Q8_0 func(w, x []byte) float32
	dotQ4_KQ8_K func(w, x []byte) float32
	dotQ6_KQ8_K func(w, x []byte) float32
	dotF16      func(w, x []byte) float32
	axpyF16     func(acc []float32, a float32, v []uint16)
	f16Lanes64  func(q []float32, k []uint16, out *[16]float32)

	// Multi-token twins: one weight row against four activation rows at
	// x, x+stride, x+2·stride, x+3·stride; out[k] is token k's dot.
	dot4Q4_0Q8_0 func(w, x []byte, stride int, out *[4]float32)
	dot4Q8_0Q8_0 func(w, x []byte, stride int, out *[4]float32)
	dot4Q4_KQ8_K func(w, x []byte, stride int, out *[4]float32)
	dot4Q6_KQ8_K func(w, x []byte, stride int, out *[4]float32)

	// Four-row twins: four weight rows at w, w+wstride, … against one
	// activation row; out[k] is row k's dot.
	dotR4Q4_0Q8_0 func(w []byte, wstride int, x []byte, out *[4]float32)
	// dot4TQ4_0Q8_0 is dot4Q4_0Q8_0 taking the group table (group4.go);
	// nil where the level has none.
	dot4TQ4_0Q8_0 func(w, x []byte, stride int, tab []byte, out *[4]float32)
	// dotR4TQ4_0Q8_0 is dotR4Q4_0Q8_0 taking the token table; nil where
	// the level has none.
	dotR4TQ4_0Q8_0 func(w []byte, wstride int, x, tab []byte, out *[4]float32)
	dotR4Q8_0Q8_0  func(w []byte, wstride int, x []byte, out *[4]float32)

	// Four-row eight-token twins (tile8.go): four weight rows at w,
	// w+wstride, … (Q4_0: their nibbles unpacked into u by unpack4Q4_0)
	// against an eight-token tile; out[8·r+t] is row r's dot with token t.
	dotR4x8Q4_0Q8_0 func(w []byte, wstride int, u, tile []byte, out *[32]float32)
	dotR4x8Q8_0Q8_0 func(w []byte, wstride int, u, tile []byte, out *[32]float32)
	// Two rows against two tiles (tile8Kernel.pair); nil where the level
	// has none.
	dotR2x16Q4_0Q8_0 func(w []byte, wstride int, u []byte, r0 int, ta, tb []byte, out []float32)
	dotR2x16Q8_0Q8_0 func(w []byte, wstride int, u []byte, r0 int, ta, tb []byte, out []float32)
	dotR2x16Q4_KQ8_K func(w []byte, wstride int, u []byte, r0 int, ta, tb []byte, out []float32)
	// Four rows against two tiles (tile8Kernel.quad); nil where the level
	// has none.
	dotR4x16Q4_0Q8_0 func(w []byte, wstride int, u []byte, ta, tb []byte, out []float32)
	dotR4x16Q8_0Q8_0 func(w []byte, wstride int, u []byte, ta, tb []byte, out []float32)
	dotR4x16Q4_KQ8_K func(w []byte, wstride int, u []byte, ta, tb []byte, out []float32)
	unpack4Q4_0      func(w []byte, wstride int, u []byte)
	// unpack4Q4_0S: unpack4Q4_0's blocks, then the rows' scales as
	// float32 (prep4Q4_0S), for a quad kernel that reads them there (nil:
	// the Q4_0 tile kernels take unpack4Q4_0's).
	unpack4Q4_0S func(w []byte, wstride int, u []byte)
	// bias4Q8_0: the quants of four Q8_0 rows plus 128, for a quad
	// kernel that takes them so (nil: the quad kernel reads w).
	bias4Q8_0 func(w []byte, wstride int, u []byte)
	// dotR8x16Q8_0Q8_0: two row quads prepared by bias4Q8_0 (u0, u1)
	// against two tiles, each quad's results in the quad layout; nil where
	// the level has none (tile8Kernel.oct).
	dotR8x16Q8_0Q8_0 func(u0, u1, ta, tb []byte, out0, out1 []float32)
	// dotR8x16Q4_KQ8_K: the same for Q4_K rows prepared by prep4Q4_K;
	// dotR8x16Q4_0Q8_0 for Q4_0 rows prepared by unpack4Q4_0S.
	dotR8x16Q4_0Q8_0 func(u0, u1, ta, tb []byte, out0, out1 []float32)
	dotR8x16Q4_KQ8_K func(u0, u1, ta, tb []byte, out0, out1 []float32)
	// prep4x8Q4_0S, prep4x8Q8_0: unpack4Q4_0S and bias4Q8_0 of one half
	// (0: rows 0..3, 1: rows 4..7) of an x8 group as it lies (rows8i.go);
	// nil where the level has none.
	prep4x8Q4_0S func(group []byte, half int, u []byte)
	prep4x8Q8_0  func(group []byte, half int, u []byte)
	// tile8Q8_0Abs: Q8_0's tiles are tile8Abs (tile8q8.go), run by
	// dotR4x8Q8_0Q8_0Abs, dotR2x16Q8_0Q8_0Abs and (where set)
	// dotR4x16Q8_0Q8_0Abs, the row quads scanned by scan4Q8_0 for a −128
	// quant.
	tile8Q8_0Abs        bool
	dotR4x8Q8_0Q8_0Abs  func(w []byte, wstride int, u, tile []byte, out *[32]float32)
	dotR2x16Q8_0Q8_0Abs func(w []byte, wstride int, u []byte, r0 int, ta, tb []byte, out []float32)
	dotR4x16Q8_0Q8_0Abs func(w []byte, wstride int, u []byte, ta, tb []byte, out []float32)
	scan4Q8_0           func(w []byte, wstride int, u []byte)
	// scatter4x8: Scatter4x8's move of a tile's four rows of eight
	// results into the token-major output.
	scatter4x8 func(o *[32]float32, dst []float32, stride int)
	// pack8Q8_0, pack8Q8_0Abs: the Q8_0 eight-token tile packers
	// (tile8Block's and tile8Abs's tiles: packTile8Q8_0, packTile8Q8_0Abs
	// in Go).
	pack8Q8_0, pack8Q8_0Abs func(x []byte, xrb, nb int, tile []byte)
	// dotR4x8Q4_KQ8_K: the same for Q4_K rows prepared by prep4Q4_K
	// (tile8k.go); nil where the level has none.
	dotR4x8Q4_KQ8_K func(w []byte, wstride int, u, tile []byte, out *[32]float32)
	prep4Q4_K       func(w []byte, wstride int, u []byte)
	// prep4x8Q4_K: prep4Q4_K for the four rows of one half (0 or 1) of a
	// K x8 group (rows8k.go), as prep4x8Q4_0S for Q4_0.
	prep4x8Q4_K func(group []byte, half int, u []byte)
	// dotR4x8Q6_KQ8_K, dotR2x16Q6_KQ8_K, prep4Q6_K: the same for Q6_K
	// (tile8q6k.go); the pair nil where the level has none.
	dotR4x8Q6_KQ8_K  func(w []byte, wstride int, u, tile []byte, out *[32]float32)
	dotR2x16Q6_KQ8_K func(w []byte, wstride int, u []byte, r0 int, ta, tb []byte, out []float32)
	dotR4x16Q6_KQ8_K func(w []byte, wstride int, u []byte, ta, tb []byte, out []float32)
	prep4Q6_K        func(w []byte, wstride int, u []byte)
	prep4x8Q6_K      func(group []byte, half int, u []byte)
	// dotR8TQ4_0Q8_0: eight Q4_0 rows against one token with its table
	// (rows8.go).
	dotR8TQ4_0Q8_0 func(w []byte, wstride int, x, tab []byte, out *[8]float32)
	// dotR8X8Q4_0Q8_0: the eight rows of one Q4_0 x8 group (rows8i.go)
	// against one token with its table; nil where the level has none (the
	// generic twin then runs without the table).
	dotR8X8Q4_0Q8_0 func(w, x, tab []byte, out *[8]float32)
	// dotR16C16Q4_0Q8_0: the sixteen rows of one Q4_0 col16 group
	// (rows16c.go) against one token with its table; nil where the level
	// has none (the layout is then not chosen, and the generic twin runs
	// a col16 weight). prep4x16Q4_0S: prep4x8Q4_0S for rows 4q..4q+3 of a
	// col16 group.
	dotR16C16Q4_0Q8_0 func(w, x, tab []byte, out *[16]float32)
	prep4x16Q4_0S     func(group []byte, q int, u []byte)
	// dotR16C16x4Q4_0Q8_0: dotR16C16Q4_0Q8_0 on four groups at once
	// (group g at w[g·stride:], its sums at out[16g:]), block by block;
	// nil where the level has none (the groups then run one by one).
	dotR16C16x4Q4_0Q8_0 func(w []byte, stride int, x, tab []byte, out *[64]float32)
	// dotR16C16Q4_KQ8_K, prep4x16Q4_K: the same for Q4_K's col16 layout
	// (rows16k.go; no token table: tab is nil), prep4Q4_K's preparation.
	dotR16C16Q4_KQ8_K func(w, x, tab []byte, out *[16]float32)
	prep4x16Q4_K      func(group []byte, q int, u []byte)
	// dotR16C16Q6_KQ8_K, prep4x16Q6_K: the same for Q6_K.
	dotR16C16Q6_KQ8_K func(w, x, tab []byte, out *[16]float32)
	prep4x16Q6_K      func(group []byte, q int, u []byte)
	// deinterleave16Q4_0, deinterleave16Q4_K, deinterleave16Q6_K:
	// Kernel.Deinterleave of a col16 group; nil where the level has none
	// (the Go moves run).
	deinterleave16Q4_0 func(dst []byte, wrb int, src []byte)
	deinterleave16Q4_K func(dst []byte, wrb int, src []byte)
	deinterleave16Q6_K func(dst []byte, wrb int, src []byte)
	// deinterleave8Q4_0: Kernel.Deinterleave8 for Q4_0; nil where the level
	// has none (deinterleave8Q4_0Generic runs).
	deinterleave8Q4_0 func(dst []byte, wrb int, src []byte)
	// dotR8X8Q8_0Q8_0, deinterleave8Q8_0: the same for Q8_0.
	dotR8X8Q8_0Q8_0 func(w, x, tab []byte, out *[8]float32)
	// dotR8X8x4Q8_0Q8_0: dotR8X8Q8_0Q8_0 on four groups at once (group g
	// at w[g·stride:], its sums at out[8g:]), block by block; nil where
	// the level has none.
	dotR8X8x4Q8_0Q8_0 func(w []byte, stride int, x, tab []byte, out *[32]float32)
	deinterleave8Q8_0 func(dst []byte, wrb int, src []byte)
	// dotR4Q4_KQ8_K: four Q4_K rows against one token.
	dotR4Q4_KQ8_K func(w []byte, wstride int, x []byte, out *[4]float32)
	// dotR4Q6_KQ8_K: four Q6_K rows against one token.
	dotR4Q6_KQ8_K func(w []byte, wstride int, x []byte, out *[4]float32)
	// dotR4x4Q4_KQ8_K, dotR4x4Q6_KQ8_K: the four rows of one half of a
	// K x8 group (rows8k.go) against one token; nil where the level has
	// none (the K x8 layout is then not used).
	dotR4x4Q4_KQ8_K func(w, x []byte, out *[4]float32)
	dotR4x4Q6_KQ8_K func(w, x []byte, out *[4]float32)

	quantizeQ8_0 func(src []float32, dst []byte)
	quantizeQ8_K func(src []float32, dst []byte)
	// token1Q8_0 fills the token table (PrepareToken1) of the Q8_0 row x,
	// len(tab)/token1Q8_0 blocks.
	token1Q8_0 func(x, tab []byte)

	// One-token dots of the remaining weight types.
	dotQ4_1Q8_1 func(w, x []byte) float32
	dotQ5_0Q8_0 func(w, x []byte) float32
	dotQ5_1Q8_1 func(w, x []byte) float32
	dotQ2_KQ8_K func(w, x []byte) float32
	dotQ3_KQ8_K func(w, x []byte) float32
	dotQ5_KQ8_K func(w, x []byte) float32
	dotF32Bytes func(w, x []byte) float32
	dotBF16     func(w, x []byte) float32
	// dotF32 is dotF32Bytes over float32 slices (VecDotF32).
	dotF32 func(a, b []float32) float32
	// Four-token forms (as dot4Q4_KQ8_K) of the remaining quantized types.
	dot4Q2_KQ8_K func(w, x []byte, stride int, out *[4]float32)
	dot4Q3_KQ8_K func(w, x []byte, stride int, out *[4]float32)
	dot4Q5_KQ8_K func(w, x []byte, stride int, out *[4]float32)
	dot4Q4_1Q8_1 func(w, x []byte, stride int, out *[4]float32)
	dot4Q5_0Q8_0 func(w, x []byte, stride int, out *[4]float32)
	dot4Q5_1Q8_1 func(w, x []byte, stride int, out *[4]float32)

	// Rope rotations (rope.go).
	ropePairs  func(out, x, cs []float32)
	ropeHalves func(out, x, cs []float32)
	// dotF16F32 is DotF16F32 (tinyBLAS's F16 × F32 row).
	dotF16F32   func(w []byte, x []float32) float32
	dotF16F32x4 func(w []byte, x []float32, stride int, out *[4]float32)
	// Attention over an F16 cache (f16attn.go).
	dotF16x64   func(q []float32, k []uint16) float32
	axpyF16F64  func(acc []float64, a float32, v []uint16)
	foldLanes64 func(out, lanes []float32, tail []float64)
	roundF16    func(dst, src []float32, s float32, scaled bool)
	// The grouped forms (one K or V row for several q heads).
	dotF16x64Rows func(out []float32, ostride int, q []float32, ng, d int, k []uint16, kstride, nrows int)
	// axpyF16Lanes64: every V row of one head into transposed lanes.
	axpyF16Lanes64 func(lanes []float32, d int, w []float32, v []uint16, vstride int)
	// axpyF16Lanes64Heads: the same for ng heads of one V (nil: head by
	// head through axpyF16Lanes64).
	axpyF16Lanes64Heads func(lanes []float32, ng, d int, w []float32, wstride, n int, v []uint16, vstride int)
	// axpyF16F64Rows: the float64 tail rows of one head.
	axpyF16F64Rows func(acc []float64, w []float32, v []uint16, vstride int)
	// quantizeF16 is the F32 → F16 row conversion (QuantizeRow,
	// QuantizeWeights).
	quantizeF16 func(src []float32, dst []byte)
	// readSum is ReadSum (readsum.go): the bandwidth meter's read.
	readSum func(b []byte) uint64
	// readSumSIMD: readSum is an assembly body (ReadSumLevels).
	readSumSIMD bool
}

var (
	levelMu sync.Mutex
	// levels holds the kernel set of every level this build and CPU
	// support, indexed by Level; filled by init functions.
	levels = map[Level]*kernelSet{Generic: genericKernels()}
	// cur is the active set, read without locking by the hot paths; it is
	// written only by ForceLevel (tests) and at init.
	cur     = levels[Generic]
	curLvl  = Generic
	bestLvl = Generic
)

// register makes a level available and, being the best one seen so far,
// the active one. Called from init functions of architecture files.
// When EnvLevel names a level, that level stays the default once
// registered, whatever the registration order.
func register(l Level, ks *kernelSet) {
	levels[l] = ks
	if l > bestLvl {
		bestLvl = l
		if curLvl != envLevel {
			cur, curLvl = ks, l
		}
	}
	if l == envLevel {
		cur, curLvl = ks, l
	}
}

// CurrentLevel is the level the kernels run at now.
func CurrentLevel() Level { return curLvl }

// Levels lists the levels available on this CPU in this build, lowest
// first; Generic is always there.
func Levels() []Level {
	var ls []Level
	for l := Generic; l <= maxLevel; l++ {
		if levels[l] != nil {
			ls = append(ls, l)
		}
	}
	return ls
}

// ForceLevel switches every kernel to level l and returns the function that
// restores the previous level, for tests and benchmarks:
//
//	defer quant.ForceLevel(quant.Generic)()
//
// It panics if l is not in Levels(). Not safe while kernels run on other
// goroutines.
func ForceLevel(l Level) (restore func()) {
	levelMu.Lock()
	defer levelMu.Unlock()
	ks := levels[l]
	if ks == nil {
		panic(fmt.Sprintf("quant: level %s is not available here (have %v)", l, Levels()))
	}
	prev, prevLvl := cur, curLvl
	cur, curLvl = ks, l
	return func() {
		levelMu.Lock()
		defer levelMu.Unlock()
		cur, curLvl = prev, prevLvl
	}
}
