//go:build !noasm

package quant

import "golang.org/x/sys/cpu"

// How far ahead (bytes) the x8 decode kernels prefetch their group's
// stream (rows8i.go), read by the assembly (q4_0q8_0r8x8AVX2/AVX512,
// q8_0q8_0r8x8AVX2/AVX512). The best distance is the machine's: measured
// with both threads decoding a 1B model (bench/results/2026-12-02-s10-cpu-pf),
// an Intel Xeon of this VM kind decodes Q4_0 ~20 % faster 16 blocks
// (2.25 KiB) ahead than 32, and Q8_0 ~35 % faster 8 blocks (2.1 KiB) ahead
// than with no prefetch. On an AMD EPYC Zen 3 (AVX2; BenchmarkMemDecodePF,
// six alternating runs, bench/results/2026-12-02-s11-cpu-avx2) Q8_0 read
// fastest 4 blocks (1088 B) ahead, ~7 % above 16 blocks and ~13 % above 0,
// and Q4_0 12 blocks (1728 B) ahead, ~3 % above 32 blocks (4.5 KiB). On
// the AMD EPYC Zen 5 (AVX-512) of session 9 the AVX-512 Q4_0 kernel read
// 2.3 KiB ahead ~10 % slower than 4.5 KiB (BenchmarkMemDecode): AMD parts
// with AVX-512 keep 4.5 KiB (and Q8_0 4.25 KiB, not measured there). A
// prefetch changes no result.
var x8PrefetchQ4_0, x8PrefetchQ8_0 = x8Prefetch(cpuIsIntel(), cpu.X86.HasAVX512F)

// x8PrefetchQ4_K and x8PrefetchQ6_K are the same for the K x8 kernels
// (rows8k.go; q4_Kq8_Kr4x4AVX512, q6_Kq8_Kr4x4AVX512): bytes ahead of the
// half group's stream, eight and four block columns (4·144, 4·210 bytes).
// Those two prefetch to L2 (PREFETCHT2): on the Intel Xeon VM of session
// 12 (BenchmarkMemDecodePF, bench/results/2026-12-02-s12-cpu-kx8) Q4_K
// read ~28 GB/s at any distance from 4 to 32 columns that way, where
// PREFETCHT0 peaked at 4 (27.3) and fell to ~19 from 8 on; Q6_K read best
// 3 to 4 columns ahead (~27.2), less further on. Not measured on AMD parts
// (which keep these distances).
var x8PrefetchQ4_K, x8PrefetchQ6_K = 8 * 4 * bytesQ4K, 4 * 4 * bytesQ6K

// x8PrefetchQ4_KAVX2 and x8PrefetchQ6_KAVX2 are the AVX2 K x8 kernels'
// (q4_Kq8_Kr4x4AVX2, q6_Kq8_Kr4x4AVX2: the file-layout kernels' PREFETCHT0
// on the half group's stream): four and three block columns. Measured only
// at the AVX2 level of session 12's Intel VM (BenchmarkMemDecodePF with
// MINFER_CPU_LEVEL=avx2), not on an AVX2-only machine.
var x8PrefetchQ4_KAVX2, x8PrefetchQ6_KAVX2 = 4 * 4 * bytesQ4K, 3 * 4 * bytesQ6K

// x8Prefetch is the x8 kernels' prefetch distances (Q4_0, Q8_0) for an
// Intel or other CPU, with AVX-512 or without.
//
// On the AMD EPYC Zen 5 VM of session 15 (AVX-512) the
// x8 kernels read fastest with no lead at all (the kernel then prefetches
// the lines it is about to read, which the hardware prefetchers already
// fetch): BenchmarkMemDecodePF, two runs, Q8_0 49.3 and 53.0 GB/s against
// 44.7 and 46.8 at 16 blocks (4352 bytes, the old distance) and 41.5–47.8
// from 2 to 8, Q4_0 46.0 and 47.3 against 45.5 and 45.7 at 32 blocks (4608
// bytes) and 39.3–46.2 elsewhere (bench/results/2026-12-06-s15-cpu2).
// Decode of the 1B Q8_0 model, alternating binaries, gained a median 3.0 %
// over 7 rounds (−4.2 to +5.8); Q4_0 decode lost a median 4 % over 9
// (−12 to +7.6), so Q4_0 keeps 4608. Zen 4 not measured.
func x8Prefetch(intel, avx512 bool) (q4_0, q8_0 int) {
	switch {
	case intel:
		return 16 * bytesQ4x8, 8 * bytesQ80x8 // 2304, 2176
	case avx512:
		return 32 * bytesQ4x8, 0 // 4608; Q8_0 the hardware prefetchers alone (above)
	}
	return 12 * bytesQ4x8, 4 * bytesQ80x8 // 1728, 1088
}

// cpuIsIntel reports whether CPUID's vendor string is GenuineIntel.
func cpuIsIntel() bool {
	b, d, c := cpuVendor()
	return b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e // "Genu" "ineI" "ntel"
}

// cpuVendor is CPUID leaf 0's EBX, EDX, ECX (the vendor string).
func cpuVendor() (ebx, edx, ecx uint32)
