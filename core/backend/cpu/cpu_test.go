package cpu

import (
	"bytes"
	"fmt"
	"testing"
	"unsafe"

	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/alloc"
)

// TestBufRefLenIsTheLogicalLength: an input in a class-sized buffer is
// filled and read through its window of Len bytes, never the class size;
// persistent regions take exact-length writes.
func TestBufRefLenIsTheLogicalLength(t *testing.T) {
	c := New(1)
	defer c.Close()
	ga := alloc.NewGraphAllocator()
	ga.AddBackend(c, alloc.Unlimited("test"))
	ref, err := ga.AllocInPool(0, 3000)
	if err != nil {
		t.Fatal(err)
	}
	if ref.Class != 4096 || ref.Len != 3000 {
		t.Fatalf("ref %+v", ref)
	}
	data := bytes.Repeat([]byte{7}, 3000)
	if err := c.WriteHostWindow(ref, data); err != nil {
		t.Fatal(err)
	}
	if err := c.WriteHostWindow(ref, make([]byte, 4096)); err == nil {
		t.Error("a class-sized write into a 3000-byte window was accepted")
	}
	if err := c.WriteHostWindow(ref, make([]byte, 2999)); err == nil {
		t.Error("a short write was accepted")
	}
	back := make([]byte, 3000)
	if err := c.ReadHostWindow(ref, back); err != nil || !bytes.Equal(back, data) {
		t.Errorf("read back %v", err)
	}
	// A view inside the buffer reads only its window.
	view := ref
	view.Off, view.Len = 1000, 10
	win := make([]byte, 10)
	if err := c.ReadHostWindow(view, win); err != nil || !bytes.Equal(win, data[:10]) {
		t.Errorf("view read %v %v", err, win)
	}
	view.Off = 4090
	if err := c.ReadHostWindow(view, win); err == nil {
		t.Error("a window past the buffer was read")
	}
	kv, err := ga.AllocPersistent(0, 512, "kv")
	if err != nil {
		t.Fatal(err)
	}
	if err := c.WriteHost(kv.ID, make([]byte, 511)); err == nil {
		t.Error("an inexact write into a persistent region was accepted")
	}
	if err := c.WriteHost(kv.ID, make([]byte, 512)); err != nil {
		t.Error(err)
	}
}

// TestCopiedWeights: with copying on, a registered weight is the backend's
// own copy (changing the caller's bytes afterwards changes nothing the
// backend reads), with the same bytes; with it off, the backend uses the
// caller's bytes in place. Close releases the copies.
func TestCopiedWeights(t *testing.T) {
	for _, on := range []bool{false, true} {
		c := New(1)
		c.SetCopyWeights(on)
		if c.CopiesWeights() != on {
			t.Fatalf("CopiesWeights() = %v, want %v", c.CopiesWeights(), on)
		}
		src := make([]byte, 3<<20+5) // more than one huge page, not a multiple of one
		for i := range src {
			src[i] = byte(i * 7)
		}
		want := append([]byte(nil), src...)
		if err := c.RegisterWeight("w", gguf.TypeF32, []int64{int64(len(src) / 4)}, src); err != nil {
			t.Fatal(err)
		}
		got := c.weights["w"].data
		if len(got) != len(want) || string(got) != string(want) {
			t.Fatalf("copy %v: the registered bytes differ from the source's", on)
		}
		src[0], src[len(src)-1] = ^src[0], ^src[len(src)-1]
		if same := &got[0] == &src[0]; same == on {
			t.Errorf("copy %v: the backend's bytes are the caller's: %v", on, same)
		}
		if on && (got[0] != want[0] || got[len(got)-1] != want[len(want)-1]) {
			t.Error("a change to the source reached the copy")
		}
		if c.WeightsBytes() != int64(len(src)) {
			t.Errorf("WeightsBytes %d, want %d", c.WeightsBytes(), len(src))
		}
		if err := c.Close(); err != nil {
			t.Fatal(err)
		}
		if len(c.arena.frees) != 0 || len(c.weights) != 0 {
			t.Errorf("after Close: %d copy regions, %d weights kept", len(c.arena.frees), len(c.weights))
		}
	}
}

// TestCopiedWeightsArePacked: many small copied weights share one region
// (not a huge page each), each 64-byte aligned and holding its own bytes;
// a weight that does not fit in what is left gets a region of its own.
func TestCopiedWeightsArePacked(t *testing.T) {
	c := New(1)
	defer c.Close()
	c.SetCopyWeights(true)
	srcs := make([][]byte, 200)
	for i := range srcs {
		srcs[i] = make([]byte, 4*(i+1)) // norms and the like: a few bytes to a KiB
		for j := range srcs[i] {
			srcs[i][j] = byte(i + j)
		}
		if err := c.RegisterWeight(fmt.Sprintf("n%d", i), gguf.TypeF32, []int64{int64(i + 1)}, srcs[i]); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(c.arena.frees); n != 1 {
		t.Errorf("200 small weights took %d regions, want 1", n)
	}
	for i, src := range srcs {
		got := c.weights[fmt.Sprintf("n%d", i)].data
		if string(got) != string(src) || uintptr(unsafe.Pointer(&got[0]))%64 != 0 {
			t.Fatalf("weight %d: wrong bytes or not 64-byte aligned", i)
		}
	}
	big := make([]byte, weightChunk+1)
	if err := c.RegisterWeight("big", gguf.TypeF32, []int64{int64(len(big) / 4)}, big[:len(big)/4*4]); err != nil {
		t.Fatal(err)
	}
	if n := len(c.arena.frees); n != 2 {
		t.Errorf("after a weight larger than a region: %d regions, want 2", n)
	}
}
