//go:build linux && amd64 && !noasm

package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"
	"unsafe"

	"github.com/minfer/minfer/gguf"
)

// BenchmarkMemMeterVariants: ways of measuring the read bandwidth two
// threads get, against the Q8_0 x8 and Q4_0 c16 decode kernels streaming
// buffers of the same size, all alternating round by round in one process
// (memRounds). A meter is an honest upper bound only if no kernel streams
// faster than it. Variants, each over ~400 MB:
//   - f32-4k-shared: the memory benchmarks' meter until session 16:
//     VecDotF32 in 4 KiB calls, each thread on one half (spin2's
//     threads), each call's result added into one array of both threads'
//     sums (one cache line); f32-4k-local: the same summed in a local, as
//     core.readMeter's plain read;
//   - f32-64k: VecDotF32 in 64 KiB calls (its 64 KiB second vector leaves
//     L1);
//   - rs-4k-shared, rs-4k-local: ReadSum in 4 KiB calls, both ways;
//   - rs-LEVEL-SIZE: ReadSum at each level in calls of SIZE, summed per
//     thread on a cache line of its own;
//   - rs-chunk: ReadSum over the chunks memPass hands out (the two
//     threads on neighbouring chunks of each matrix, as decode runs);
//   - meter: meterVariant (the wide read at the current level).
//
// Logged like BenchmarkMemDecode: run with -benchtime 1x.
func BenchmarkMemMeterVariants(b *testing.B) {
	s := newSpin2()
	defer s.quit.Store(true)
	var vs []memVariant
	var size int
	for _, typ := range []gguf.GGMLType{gguf.TypeQ8_0, gguf.TypeQ4_0} {
		k, wrb, mats, total := memDecodeKernel(b, typ)
		r := rand.New(rand.NewPCG(1, 2))
		src := memDecodeSource16(b, typ, wrb, r)
		x, tab := memDecodeToken(b, k, r)
		if typ == gguf.TypeQ8_0 {
			size = total * wrb
			w8 := hugeBuf(b, total*wrb)
			for o := 0; o+16*wrb <= len(w8); o += 16 * wrb {
				k.Interleave8(w8[o:o+8*wrb], src[:8*wrb])
				k.Interleave8(w8[o+8*wrb:o+16*wrb], src[8*wrb:])
			}
			var o8 [2][8]float32
			vs = append(vs, memVariant{"Q8_0x8", len(w8), func() {
				memPass(s, mats, memDecodeRows, func(worker, lo, hi, base int) {
					for i := base + lo; i < base+hi; i += 8 {
						k.Dot8RowsX8(w8[i*wrb:(i+8)*wrb], x, tab, &o8[worker])
					}
				})
			}})
			continue
		}
		if !k.Has(LayoutCol16) || k.rows16 == nil {
			continue
		}
		wc := hugeBuf(b, total*wrb)
		for o := 0; o+16*wrb <= len(wc); o += 16 * wrb {
			k.Interleave(LayoutCol16, wc[o:o+16*wrb], src)
		}
		var o16 [2][16]float32
		vs = append(vs, memVariant{"Q4_0c16", len(wc), func() {
			memPass(s, mats, memDecodeRows, func(worker, lo, hi, base int) {
				for i := base + lo; i < base+hi; i += 16 {
					k.DotGroup(LayoutCol16, wc[i*wrb:(i+16)*wrb], x, tab, o16[worker][:])
				}
			})
		}})
	}

	buf := hugeBuf(b, size)
	for i := range buf {
		buf[i] = byte(i)
	}
	// sink: each thread's sum on a cache line of its own; shared: on one
	// line (false sharing: a store per call moves the line).
	var sink [2][8]uint64
	var shared [2]uint64
	half := len(buf) / 2 / (1 << 20) * (1 << 20)
	halves := func(span int, read func([]byte) uint64) func() {
		return func() {
			s.run(func(worker int) {
				part := buf[worker*half : (worker+1)*half]
				for i := 0; i < len(part); i += span {
					sink[worker][0] += read(part[i : i+span])
				}
			})
		}
	}
	vs = append(vs, memVariant{"rs-4k-shared", 2 * half, func() {
		s.run(func(worker int) {
			part := buf[worker*half : (worker+1)*half]
			for i := 0; i < len(part); i += 4096 {
				shared[worker] += ReadSum(part[i : i+4096])
			}
		})
	}}, memVariant{"rs-4k-local", 2 * half, func() {
		s.run(func(worker int) {
			part := buf[worker*half : (worker+1)*half]
			var l uint64
			for i := 0; i < len(part); i += 4096 {
				l += ReadSum(part[i : i+4096])
			}
			sink[worker][0] += l
		})
	}})
	fl := unsafe.Slice((*float32)(unsafe.Pointer(&buf[0])), len(buf)/4)
	ones := make([]float32, 16384)
	var fsink [2]float32
	var flocal [2][16]float32
	vs = append(vs, memVariant{"f32-4k-shared", 2 * half, func() {
		s.run(func(worker int) {
			part := fl[worker*half/4 : (worker+1)*half/4]
			for i := 0; i < len(part); i += 1024 {
				fsink[worker] += VecDotF32(part[i:i+1024], ones[:1024])
			}
		})
	}}, memVariant{"f32-4k-local", 2 * half, func() {
		s.run(func(worker int) {
			part := fl[worker*half/4 : (worker+1)*half/4]
			var l float32
			for i := 0; i < len(part); i += 1024 {
				l += VecDotF32(part[i:i+1024], ones[:1024])
			}
			flocal[worker][0] += l
		})
	}})
	vs = append(vs, memVariant{"f32-64k", 2 * half, func() {
		s.run(func(worker int) {
			part := fl[worker*half/4 : (worker+1)*half/4]
			var l float32
			for i := 0; i < len(part); i += 16384 {
				l += VecDotF32(part[i:i+16384], ones)
			}
			flocal[worker][0] += l
		})
	}})
	for _, l := range Levels() {
		if l == Generic {
			continue
		}
		for _, span := range []int{4 << 10, 16 << 10, 64 << 10, 1 << 20} {
			vs = append(vs, memVariant{fmt.Sprintf("rs-%s-%dk", l, span>>10), 2 * half, halves(span, levels[l].readSum)})
		}
	}
	// rs-chunk: memPass's chunks of a Q8_0 matrix's rows (2176 bytes each).
	const wrb = 2176
	mats := len(buf) / (memDecodeRows * wrb)
	vs = append(vs, memVariant{"rs-chunk", mats * memDecodeRows * wrb, func() {
		memPass(s, mats, memDecodeRows, func(worker, lo, hi, base int) {
			sink[worker][0] += ReadSum(buf[(base+lo)*wrb : (base+hi)*wrb])
		})
	}})
	vs = append(vs, meterVariant(b, s, size))
	for b.Loop() {
		memRounds(b, vs)
	}
}
