package hugemem

import "testing"

// TestAllocIsUsableAndSized: Alloc gives exactly n writable bytes (a
// whole number of huge pages is mapped, not exposed), and free gives
// them back.
func TestAllocIsUsableAndSized(t *testing.T) {
	for _, n := range []int{1, 4096, 3<<20 + 5} {
		b, free := Alloc(n)
		if len(b) != n || cap(b) != n {
			t.Fatalf("Alloc(%d): len %d cap %d", n, len(b), cap(b))
		}
		for i := range b {
			b[i] = byte(i)
		}
		if b[n-1] != byte(n-1) {
			t.Fatalf("Alloc(%d): last byte %d", n, b[n-1])
		}
		free()
	}
}
