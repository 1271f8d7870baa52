//go:build !noasm

package quant

// How far ahead (bytes) the x8 decode kernels prefetch their group's
// stream (rows8i.go), read by the assembly (q4_0q8_0r8x8AVX2/AVX512,
// q8_0q8_0r8x8AVX512). The best distance is the machine's: measured with
// both threads decoding a 1B model (bench/results/2026-12-02-s10-cpu-pf),
// an Intel Xeon of this VM kind decodes Q4_0 ~20 % faster 16 blocks
// (2.25 KiB) ahead than 32, and Q8_0 ~35 % faster 8 blocks (2.1 KiB) ahead
// than with no prefetch; on the AMD EPYC kind measured before
// (BenchmarkMemDecode, session 9) Q4_0 read ~10 % slower 2.3 KiB ahead
// than 4.5 KiB, which it keeps (and Q8_0 the same ~4.3 KiB, not measured
// there). A prefetch changes no result.
var (
	x8PrefetchQ4_0 = 32 * bytesQ4x8  // 4608
	x8PrefetchQ8_0 = 16 * bytesQ80x8 // 4352
)

func init() {
	if cpuIsIntel() {
		x8PrefetchQ4_0 = 16 * bytesQ4x8 // 2304
		x8PrefetchQ8_0 = 8 * bytesQ80x8 // 2176
	}
}

// cpuIsIntel reports whether CPUID's vendor string is GenuineIntel.
func cpuIsIntel() bool {
	b, d, c := cpuVendor()
	return b == 0x756e6547 && d == 0x49656e69 && c == 0x6c65746e // "Genu" "ineI" "ntel"
}

// cpuVendor is CPUID leaf 0's EBX, EDX, ECX (the vendor string).
func cpuVendor() (ebx, edx, ecx uint32)
