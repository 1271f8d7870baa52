package memview

import (
	"encoding/binary"
	"math"
	"testing"
)

func TestBytesAndBackAlias(t *testing.T) {
	f := []float32{1, -2.5, float32(math.Inf(-1))}
	b := Bytes(f)
	if len(b) != 12 {
		t.Fatalf("len %d, want 12", len(b))
	}
	if got := math.Float32frombits(binary.NativeEndian.Uint32(b[4:])); got != -2.5 {
		t.Fatalf("byte view reads %v, want -2.5", got)
	}
	back := As[float32](b)
	back[0] = 7 // a view, not a copy
	if f[0] != 7 || len(back) != 3 {
		t.Fatalf("As did not alias the source: %v (len %d)", f, len(back))
	}
	i := []int32{1, -1}
	if got := As[int32](Bytes(i)); len(got) != 2 || got[1] != -1 {
		t.Fatalf("int32 round trip: %v", got)
	}
	u := As[uint16](Bytes([]uint16{0xbeef}))
	if len(u) != 1 || u[0] != 0xbeef {
		t.Fatalf("uint16 round trip: %v", u)
	}
}

func TestEmptyAndPartial(t *testing.T) {
	if Bytes([]float32{}) != nil || Bytes[int32](nil) != nil {
		t.Fatal("an empty slice has a nil view")
	}
	if As[float32](make([]byte, 3)) != nil || As[int32](nil) != nil {
		t.Fatal("fewer bytes than one element give a nil view")
	}
	if got := As[float32](Bytes(make([]float32, 3))[:9]); len(got) != 2 {
		t.Fatalf("9 bytes hold %d float32, want 2", len(got))
	}
}
