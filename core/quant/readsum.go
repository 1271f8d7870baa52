package quant

import (
	"encoding/binary"
	"fmt"
)

// ReadSum is the sum, modulo 2⁶⁴, of b read as little-endian uint64 words,
// plus each of its last len(b)%8 bytes. It is a pure streaming read: the
// SIMD levels load b in full-width vectors (64 bytes at AVX512, 32 at
// AVX2) into eight independent accumulators and do nothing else with it,
// so on a buffer far larger than the caches it runs at the rate memory
// delivers bytes to one thread. The bench command's bandwidth meter
// (core.readMeter) is built on it.
func ReadSum(b []byte) uint64 { return cur.readSum(b) }

// ReadSumLevels are the levels whose ReadSum is an assembly body, lowest
// first (none without one: arm64, -tags noasm). The bandwidth meter reads
// at each of them and keeps the fastest: on an AMD EPYC (Zen 5) VM the
// AVX2 body streamed from memory −2 to +9 % against the AVX-512 one in 64
// KiB calls, four runs (bench/results/2026-12-06-s16-cpu/meter-variants.txt).
func ReadSumLevels() []Level {
	var ls []Level
	for _, l := range Levels() {
		if levels[l].readSumSIMD {
			ls = append(ls, l)
		}
	}
	return ls
}

// ReadSumAt is ReadSum at level l, one of Levels(), whatever the current
// level; unlike ForceLevel it is safe while kernels run elsewhere.
func ReadSumAt(l Level, b []byte) uint64 {
	ks := levels[l]
	if ks == nil {
		panic(fmt.Sprintf("quant: level %s is not available here (have %v)", l, Levels()))
	}
	return ks.readSum(b)
}

// readSumGeneric is ReadSum's Go twin.
func readSumGeneric(b []byte) uint64 {
	var s uint64
	n := len(b) &^ 7
	for i := 0; i < n; i += 8 {
		s += binary.LittleEndian.Uint64(b[i:])
	}
	for _, c := range b[n:] {
		s += uint64(c)
	}
	return s
}

// readSumLanes is ReadSum over an assembly body that sums the first
// len(b)/span·span bytes (span: the bytes of one loop iteration), the
// rest summed by the Go twin.
func readSumLanes(lanes func(p *byte, n int) uint64, span int) func(b []byte) uint64 {
	return func(b []byte) uint64 {
		n := len(b) / span
		var s uint64
		if n > 0 {
			s = lanes(&b[0], n)
		}
		return s + readSumGeneric(b[n*span:])
	}
}
