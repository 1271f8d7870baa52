package cuda

import (
	"bytes"
	"testing"

	"github.com/minfer/minfer/internal/alloc"
)

// TestPolledReads (GPU): on a driver of CUDA 12 or later the polled reads
// are set up; reads of every size, polled (up to pollSize) or plain (over
// it), return what was written and wait for the work queued before them;
// reads whose poll falls back to a stream synchronize at once return the
// same; MINFER_CUDA_POLLREAD=0 leaves every read plain and as right.
func TestPolledReads(t *testing.T) {
	b := gpu(t)
	if b.dv.poll == nil {
		if b.dv.drvVersion >= 12000 {
			t.Errorf("CUDA %s driver: polled reads not set up (stream memory operations missing or the probe failed)", versionString(b.dv.drvVersion))
		} else {
			t.Logf("polled reads not set up (CUDA %s driver)", versionString(b.dv.drvVersion))
		}
	}
	checkReads(t, b)
	if b.dv.poll != nil {
		b.dv.poll.limit = 0 // every poll gives up at once
		checkReads(t, b)
		b.dv.poll.limit = pollLimit
	}
	t.Setenv("MINFER_CUDA_POLLREAD", "0")
	p := gpu(t)
	if p.dv.poll != nil {
		t.Error("MINFER_CUDA_POLLREAD=0: polled reads set up")
	}
	checkReads(t, p)
}

// filledBuffer is a device buffer of size bytes holding data, byte i
// fill(i) (the caller frees it).
func filledBuffer(t *testing.T, b *Backend, size int64, fill func(int) byte) (alloc.BufID, []byte) {
	t.Helper()
	id, err := b.AllocBuffer(size)
	if err != nil {
		t.Fatal(err)
	}
	data := make([]byte, size)
	for i := range data {
		data[i] = fill(i)
	}
	if err := b.WriteHost(id, data); err != nil {
		b.FreeBuffer(id)
		t.Fatal(err)
	}
	return id, data
}

func checkReads(t *testing.T, b *Backend) {
	t.Helper()
	const size = pollSize + 1<<20
	id, data := filledBuffer(t, b, size, func(i int) byte { return byte(i*7 + i>>11) })
	defer b.FreeBuffer(id)
	for _, w := range []struct{ off, n int64 }{{0, 4}, {12, 1000}, {4096, 128 << 10}, {0, pollSize}, {3, pollSize}, {0, pollSize + 4}, {0, size}} {
		dst := make([]byte, w.n)
		if err := b.ReadHostWindow(alloc.BufRef{ID: id, Off: w.off, Len: w.n}, dst); err != nil {
			t.Fatalf("read of %d bytes at %d: %v", w.n, w.off, err)
		}
		if !bytes.Equal(dst, data[w.off:w.off+w.n]) {
			t.Fatalf("read of %d bytes at %d: wrong bytes", w.n, w.off)
		}
	}
	// A read waits for the work queued before it: a memset, then a read.
	for round := 0; round < 20; round++ {
		if err := b.dv.t.do(func() error { return b.dv.memset(b.bufs[id].ptr, size) }); err != nil {
			t.Fatal(err)
		}
		dst := make([]byte, 256<<10)
		if err := b.ReadHostWindow(alloc.BufRef{ID: id, Off: size - int64(len(dst)), Len: int64(len(dst))}, dst); err != nil {
			t.Fatal(err)
		}
		if i := bytes.IndexFunc(dst, func(r rune) bool { return r != 0 }); i >= 0 {
			t.Fatalf("round %d: byte %d not zero after the memset queued before the read", round, i)
		}
		if err := b.WriteHost(id, data); err != nil {
			t.Fatal(err)
		}
	}
}

// TestDirectReads (GPU): with polled reads, PinHost registers a host
// buffer and reads into it (wholly inside) come straight from the device:
// the right bytes, the staging untouched; reads of the logits' size after
// a memset queued before them wait for it; after UnpinHost the same reads
// go through the staging and are as right; a second UnpinHost is an error;
// MINFER_CUDA_DIRECTREAD=0 makes PinHost fail.
func TestDirectReads(t *testing.T) {
	b := gpu(t)
	if b.dv.poll == nil {
		t.Skip("no polled reads")
	}
	const size = 512 << 10
	id, data := filledBuffer(t, b, size, func(i int) byte { return byte(i*11 + i>>9) })
	defer b.FreeBuffer(id)
	pinned := make([]byte, 256<<10)
	if err := b.PinHost(pinned); err != nil {
		t.Fatalf("PinHost: %v", err)
	}
	read := func(what string, off, n int64, dst []byte) {
		t.Helper()
		for i := range b.dv.poll.buf[:n] {
			b.dv.poll.buf[i] = 0xee
		}
		if err := b.ReadHostWindow(alloc.BufRef{ID: id, Off: off, Len: n}, dst); err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if !bytes.Equal(dst, data[off:off+n]) {
			t.Fatalf("%s: wrong bytes", what)
		}
	}
	for _, w := range []struct{ off, n, at int64 }{{0, 4, 0}, {100, 128 << 10, 64}, {4096, 256 << 10, 0}, {12, 1000, 255 << 10}} {
		read("direct", w.off, w.n, pinned[w.at:w.at+w.n])
		if w.n > 64 && bytes.Equal(b.dv.poll.buf[:w.n], data[w.off:w.off+w.n]) {
			t.Errorf("a direct read of %d bytes went through the staging", w.n)
		}
	}
	for round := 0; round < 20; round++ {
		if err := b.dv.t.do(func() error { return b.dv.memset(b.bufs[id].ptr, size) }); err != nil {
			t.Fatal(err)
		}
		dst := pinned[:128<<10]
		if err := b.ReadHostWindow(alloc.BufRef{ID: id, Off: 1000, Len: int64(len(dst))}, dst); err != nil {
			t.Fatal(err)
		}
		if i := bytes.IndexFunc(dst, func(r rune) bool { return r != 0 }); i >= 0 {
			t.Fatalf("round %d: byte %d not zero after the memset queued before the direct read", round, i)
		}
		if err := b.WriteHost(id, data); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.UnpinHost(pinned); err != nil {
		t.Fatalf("UnpinHost: %v", err)
	}
	read("after UnpinHost", 100, 128<<10, pinned[:128<<10])
	if !bytes.Equal(b.dv.poll.buf[:128<<10], data[100:100+128<<10]) {
		t.Error("a read after UnpinHost did not go through the staging")
	}
	if err := b.UnpinHost(pinned); err == nil {
		t.Error("a second UnpinHost: no error")
	}
	t.Setenv("MINFER_CUDA_DIRECTREAD", "0")
	if err := b.PinHost(pinned); err == nil {
		t.Error("MINFER_CUDA_DIRECTREAD=0: PinHost did not fail")
		b.UnpinHost(pinned)
	}
}
