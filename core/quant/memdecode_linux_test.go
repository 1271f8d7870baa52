package quant

// BenchmarkMemDecode: the one-token Q4_0, Q8_0, Q4_K and Q6_K mat-vecs from
// memory, as decode runs them, in the file layout and in the x8 one
// (rows8i.go, rows8k.go).

import (
	"math/rand/v2"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"github.com/minfer/minfer/gguf"
	"golang.org/x/sys/unix"
)

// hugeBuf is n bytes of anonymous memory advised for huge pages, as the
// CPU backend copies weights into.
func hugeBuf(tb testing.TB, n int) []byte {
	const huge = 2 << 20
	size := (n + huge - 1) / huge * huge
	m, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		tb.Fatal(err)
	}
	_ = unix.Madvise(m, unix.MADV_HUGEPAGE)
	tb.Cleanup(func() { unix.Munmap(m) })
	return m[:n:n]
}

// spin2 runs a function on two threads (the caller and one spinning
// helper) per call, like the backend's pool.
type spin2 struct {
	gen, done atomic.Int64
	quit      atomic.Bool
	fn        func(worker int)
}

func newSpin2() *spin2 {
	s := &spin2{}
	go func() {
		seen := int64(0)
		for !s.quit.Load() {
			if g := s.gen.Load(); g != seen {
				seen = g
				s.fn(1)
				s.done.Add(1)
			}
		}
	}()
	return s
}

func (s *spin2) run(fn func(worker int)) {
	s.fn = fn
	s.done.Store(0)
	s.gen.Add(1)
	fn(0)
	for s.done.Load() == 0 {
	}
}

// memVariant is one way of reading the matrix: bytes per pass.
type memVariant struct {
	name  string
	bytes int
	run   func()
}

// memRounds times one pass of each variant per round, alternating, and
// logs each one's median and best GB/s over the rounds.
func memRounds(b *testing.B, vs []memVariant) {
	gbs := alternateRounds(len(vs), func(i int) float64 {
		t0 := time.Now()
		vs[i].run()
		return float64(vs[i].bytes) / time.Since(t0).Seconds() / 1e9
	})
	for i, v := range vs {
		g := gbs[i]
		b.Logf("%-6s median %6.2f GB/s  best %6.2f  (%d rounds)", v.name, g[len(g)/2], g[len(g)-1], len(g))
	}
}

// BenchmarkMemDecode reads ~400 MB of Q4_0, Q8_0, Q4_K or Q6_K matrices
// (TinyLlama's gate shape, 5632 × 2048) against one token on two threads,
// matrix by matrix in chunks of decode's grain like the backend, at the
// current level: "file" runs Dot8RowsT (the K types: Dot4Rows twice) on
// the file layout, "x8" Dot8RowsX8 on the x8 copy, "meter" the bench command's bandwidth meter (VecDotF32) on a
// buffer of the same size. Results are logged (median and best GB/s of
// alternating rounds; b.N is ignored): run with -benchtime 1x.
func BenchmarkMemDecode(b *testing.B) {
	for _, typ := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		b.Run(typ.String(), func(b *testing.B) { benchMemDecode(b, typ) })
	}
}

// memDecodeN and memDecodeRows are the shape of the memory-decode
// benchmarks' matrices (TinyLlama's gate).
const memDecodeN, memDecodeRows = 2048, 5632

// memDecodeKernel is the memory-decode benchmarks' kernel for typ at the
// current level (skipping without two threads or an x8 kernel), its row
// bytes, how many matrices make ~400 MB and their rows in all.
func memDecodeKernel(b *testing.B, typ gguf.GGMLType) (k Kernel, wrb, mats, total int) {
	b.Helper()
	if runtime.GOMAXPROCS(0) < 2 {
		b.Skip("needs two threads")
	}
	k, err := NewKernel(typ, memDecodeN)
	if err != nil {
		b.Fatal(err)
	}
	if !k.HasX8() {
		b.Skip("no x8 kernel at this level")
	}
	wrb = k.WeightRowBytes()
	mats = 400e6 / (memDecodeRows * wrb)
	return k, wrb, mats, memDecodeRows * mats
}

// memDecodeToken is a random token quantized for k and its table (nil
// where k takes none).
func memDecodeToken(b *testing.B, k Kernel, r *rand.Rand) (x, tab []byte) {
	x = quantizeRow(b, VecDotType(k.Type()), gaussian(r, memDecodeN, 1))
	if tb := k.Token1TableBytes(); tb > 0 {
		tab = make([]byte, tb)
		k.PrepareToken1(x, tab)
	}
	return x, tab
}

// memPass runs kern over mats matrices of mrows rows on s's two threads,
// matrix by matrix, each claiming chunks of decode's grain for two threads
// (rows lo..hi of the matrix whose first row is base), as the backend
// splits a decode mat-vec.
func memPass(s *spin2, mats, mrows int, kern func(worker, lo, hi, base int)) {
	grain := max(16, mrows/8) &^ 7 // the fixed chunks decode took until session 12 (now guided: cpu.workers.runGuided)
	var cursor atomic.Int64
	for m := 0; m < mats; m++ {
		cursor.Store(0)
		s.run(func(worker int) {
			for {
				lo := int(cursor.Add(int64(grain))) - grain
				if lo >= mrows {
					return
				}
				kern(worker, lo, min(lo+grain, mrows), m*mrows)
			}
		})
	}
}

// meterVariant is the bench command's bandwidth meter's wide read at the
// current level (ReadSum in 64 KiB calls, each of s's two threads on half,
// its sum in a local) on a buffer of about n bytes. Until session 16 it
// was the meter's plain read (VecDotF32 in 4 KiB calls) adding each call
// into one array of both threads' sums: one cache line that both threads
// stored to at every call, which read 12–28 % slower than a local sum
// (BenchmarkMemMeterVariants, bench/results/2026-12-06-s16-cpu), so the
// "meter" of the memory benchmarks before then under-reads.
func meterVariant(b *testing.B, s *spin2, n int) memVariant {
	meter := hugeBuf(b, n)
	clear(meter)
	const span = 64 << 10 // as core/bench.go's meterWideSpan
	var sink [2][8]uint64 // each thread's on its own cache line
	half := len(meter) / 2 / span * span
	return memVariant{"meter", 2 * half, func() {
		s.run(func(worker int) {
			part := meter[worker*half : (worker+1)*half]
			var sum uint64
			for i := 0; i < len(part); i += span {
				sum += ReadSum(part[i : i+span])
			}
			sink[worker][0] += sum
		})
	}}
}

func benchMemDecode(b *testing.B, typ gguf.GGMLType) {
	const n, mrows = memDecodeN, memDecodeRows
	k, wrb, mats, total := memDecodeKernel(b, typ)
	w := hugeBuf(b, total*wrb)
	r := rand.New(rand.NewPCG(1, 2))
	row := quantizeWeights(b, typ, gaussian(r, 64*n, 0.02))
	for o := 0; o < len(w); o += len(row) {
		copy(w[o:], row)
	}
	w8 := hugeBuf(b, len(w))
	for o := 0; o < len(w); o += 8 * wrb {
		k.Interleave8(w8[o:o+8*wrb], w[o:o+8*wrb])
	}
	x, tab := memDecodeToken(b, k, r)
	out := [2][]float32{make([]float32, total), make([]float32, total)}
	s := newSpin2()
	defer s.quit.Store(true)
	pass := func(kern func(worker, lo, hi, base int)) { memPass(s, mats, mrows, kern) }
	var o8 [2][8]float32
	vs := []memVariant{
		meterVariant(b, s, len(w)),
		{"file", len(w), func() {
			pass(func(worker, lo, hi, base int) {
				for i := base + lo; i < base+hi; i += 8 {
					if tab == nil {
						k.Dot4Rows(w[i*wrb:(i+4)*wrb], x, (*[4]float32)(o8[worker][:4]))
						k.Dot4Rows(w[(i+4)*wrb:(i+8)*wrb], x, (*[4]float32)(o8[worker][4:]))
					} else {
						k.Dot8RowsT(w[i*wrb:(i+8)*wrb], x, tab, &o8[worker])
					}
					copy(out[0][i:], o8[worker][:])
				}
			})
		}},
		{"x8", len(w8), func() {
			pass(func(worker, lo, hi, base int) {
				for i := base + lo; i < base+hi; i += 8 {
					k.Dot8RowsX8(w8[i*wrb:(i+8)*wrb], x, tab, &o8[worker])
					copy(out[1][i:], o8[worker][:])
				}
			})
		}},
	}
	for b.Loop() {
		memRounds(b, vs)
	}
	for i := range out[0] {
		if out[0][i] != out[1][i] {
			b.Fatalf("row %d: file %g, x8 %g", i, out[0][i], out[1][i])
		}
	}
}
