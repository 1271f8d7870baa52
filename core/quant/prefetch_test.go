package quant

import "testing"

// TestPrefetchLeavesBytes: Prefetch over every length and start inside a
// few lines (the first and last line partly covered, empty slices, the
// end of the backing array) returns with the bytes unchanged.
func TestPrefetchLeavesBytes(t *testing.T) {
	buf := make([]byte, 512)
	for i := range buf {
		buf[i] = byte(i * 7)
	}
	for start := 0; start < 130; start++ {
		for n := 0; start+n <= len(buf); n += 1 + n/8 {
			Prefetch(buf[start : start+n])
		}
	}
	for i := range buf {
		if buf[i] != byte(i*7) {
			t.Fatalf("byte %d changed to %d", i, buf[i])
		}
	}
}
