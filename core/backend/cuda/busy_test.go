package cuda

import (
	"testing"

	"github.com/minfer/minfer/internal/alloc"
)

// TestBusyTiming: with the busy timer on, each read closes one span of the
// device work queued since the previous one (a 256 MiB memset takes tens
// of microseconds on any device), a read with no work queued closes none,
// and turning it off zeroes the totals and stops counting.
func TestBusyTiming(t *testing.T) {
	b := gpu(t)
	const size = 256 << 20
	id, err := b.AllocBuffer(size)
	if err != nil {
		t.Fatal(err)
	}
	defer b.FreeBuffer(id)
	ref := alloc.BufRef{ID: id, Off: 0, Len: 16}
	work := func() {
		t.Helper()
		if err := b.dv.t.do(func() error {
			b.busyBefore()
			err := b.dv.memset(b.bufs[id].ptr, size)
			b.busyAfter()
			return err
		}); err != nil {
			t.Fatal(err)
		}
	}
	read := func() {
		t.Helper()
		if err := b.ReadHostWindow(ref, make([]byte, 16)); err != nil {
			t.Fatal(err)
		}
	}
	if err := b.SetBusyTiming(true); err != nil {
		t.Fatal(err)
	}
	work()
	work()
	read()
	d1, n := b.DeviceBusy()
	if n != 1 || d1 <= 0 {
		t.Fatalf("after two memsets and a read: %v in %d spans, want one span > 0", d1, n)
	}
	read()
	if d, n := b.DeviceBusy(); n != 1 || d != d1 {
		t.Fatalf("a read with nothing queued changed the totals: %v in %d spans", d, n)
	}
	work()
	read()
	if d, n := b.DeviceBusy(); n != 2 || d <= d1 {
		t.Fatalf("second span: %v in %d spans, want 2 spans over %v", d, n, d1)
	}
	if err := b.SetBusyTiming(false); err != nil {
		t.Fatal(err)
	}
	work()
	read()
	if d, n := b.DeviceBusy(); n != 0 || d != 0 {
		t.Fatalf("timer off: %v in %d spans, want none", d, n)
	}
	t.Logf("one span of two 256 MiB memsets: %v", d1)
}

// TestWriteHostWindows: one call fills several windows of a buffer (the
// bytes read back are each window's) even when the caller overwrites its
// payloads right after the call (they were copied aside), two calls before
// any request land in order (the later write to a window wins), and a
// payload whose length is not its window's is refused before anything is
// written.
func TestWriteHostWindows(t *testing.T) {
	b := gpu(t)
	id, err := b.AllocBuffer(4096)
	if err != nil {
		t.Fatal(err)
	}
	defer b.FreeBuffer(id)
	refs := []alloc.BufRef{{ID: id, Off: 0, Len: 4}, {ID: id, Off: 1024, Len: 8}, {ID: id, Off: 4000, Len: 96}}
	data := [][]byte{{1, 2, 3, 4}, {5, 6, 7, 8, 9, 10, 11, 12}, make([]byte, 96)}
	for i := range data[2] {
		data[2][i] = byte(200 - i)
	}
	// A first write of window 1, overwritten by the batch after it.
	if err := b.WriteHostWindows(refs[1:2], [][]byte{{0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee, 0xee}}); err != nil {
		t.Fatal(err)
	}
	if err := b.WriteHostWindows(refs, data); err != nil {
		t.Fatal(err)
	}
	want := make([][]byte, len(data))
	for i := range data {
		want[i] = append([]byte(nil), data[i]...)
		clear(data[i]) // the caller reuses its slices
	}
	data = want
	for i, ref := range refs {
		got := make([]byte, ref.Len)
		if err := b.ReadHostWindow(ref, got); err != nil {
			t.Fatal(err)
		}
		if string(got) != string(data[i]) {
			t.Errorf("window %d: %v, want %v", i, got, data[i])
		}
	}
	if err := b.WriteHostWindows(refs[:2], [][]byte{{9, 9, 9, 9}, {1}}); err == nil {
		t.Error("a 1-byte payload for an 8-byte window was accepted")
	}
	got := make([]byte, 4)
	if err := b.ReadHostWindow(refs[0], got); err != nil {
		t.Fatal(err)
	}
	if string(got) != string(data[0]) {
		t.Errorf("the refused batch wrote its first window: %v", got)
	}
}
