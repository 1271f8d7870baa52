package cpu

import (
	"bytes"
	"testing"

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
