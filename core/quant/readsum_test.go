package quant

import (
	"fmt"
	"math/rand/v2"
	"testing"
)

// TestReadSumMatchesGenericTwin: ReadSum at every level against its Go
// twin, on random bytes, all-ones bytes (every lane add carries out) and
// zeros, at odd lengths and unaligned starts.
func TestReadSumMatchesGenericTwin(t *testing.T) {
	r := rand.New(rand.NewPCG(3, 4))
	buf := make([]byte, 1<<16+64)
	for _, lvl := range Levels() {
		for _, n := range []int{0, 1, 7, 8, 9, 63, 64, 255, 256, 257, 511, 512, 513, 1023, 4096, 4096 + 13, 1 << 16} {
			for _, off := range []int{0, 1, 8, 32, 63} {
				for fill := 0; fill < 3; fill++ {
					b := buf[off : off+n]
					for i := range b {
						switch fill {
						case 0:
							b[i] = byte(r.Uint32())
						case 1:
							b[i] = 0xff
						case 2:
							b[i] = 0
						}
					}
					want := readSumGeneric(b)
					if got := levels[lvl].readSum(b); got != want {
						t.Fatalf("%s n=%d off=%d fill %d: %#x, generic %#x", lvl, n, off, fill, got, want)
					}
					if got := ReadSumAt(lvl, b); got != want {
						t.Fatalf("%s n=%d off=%d fill %d: ReadSumAt %#x, generic %#x", lvl, n, off, fill, got, want)
					}
					func() {
						defer ForceLevel(lvl)()
						if got := ReadSum(b); got != want {
							t.Fatalf("%s n=%d off=%d fill %d: ReadSum %#x, generic %#x", lvl, n, off, fill, got, want)
						}
					}()
				}
			}
		}
	}
}

// TestReadSumGeneric: the twin's sum on buffers whose sum is known.
func TestReadSumGeneric(t *testing.T) {
	ones := make([]byte, 8*100+3)
	for i := range ones {
		ones[i] = 0xff
	}
	// 100 words of 2⁶⁴−1 are −100 modulo 2⁶⁴; three tail bytes add 3·255.
	minus100 := uint64(0)
	minus100 -= 100
	if got, want := readSumGeneric(ones), minus100+3*255; got != want {
		t.Fatalf("all ones: %#x, want %#x", got, want)
	}
	b := []byte{1, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 5}
	if got, want := readSumGeneric(b), uint64(1+256+5); got != want {
		t.Fatalf("words: %d, want %d", got, want)
	}
}

// TestReadSumLevels: the levels with an assembly ReadSum are the amd64
// SIMD levels this CPU has.
func TestReadSumLevels(t *testing.T) {
	var want []Level
	for _, l := range Levels() {
		if l.HasAVX2() {
			want = append(want, l)
		}
	}
	got := ReadSumLevels()
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Fatalf("ReadSumLevels %v, want %v", got, want)
	}
}
