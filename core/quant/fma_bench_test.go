package quant

import "testing"

func BenchmarkFMA32(b *testing.B) {
	x, y, z := float32(1.1), float32(0.9), float32(0.3)
	for b.Loop() {
		z = FMA32(x, y, z) * 0.5
	}
	_ = z
}
