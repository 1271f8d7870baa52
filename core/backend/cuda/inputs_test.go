package cuda

import (
	"bytes"
	"testing"
	"unsafe"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/internal/alloc"
)

// copyRec is one host-to-device copy a test's device was asked for.
type copyRec struct {
	dst  uintptr
	data []byte // the source bytes when the copy was issued
}

// fakeInputs is a Backend with no device behind it: host memory stands in
// for the pinned staging and htodHook records the copies. Its buffers 1–4
// are a decode step's inputs: tokens, positions, cache rows (4 bytes
// each) and a 512-row mask.
func fakeInputs(t testing.TB) (*Backend, *[]copyRec) {
	t.Helper()
	pinned := make([]byte, pinnedSize)
	dv := &device{pinnedBuf: pinned, pinned: uintptr(unsafe.Pointer(&pinned[0]))}
	var copies []copyRec
	dv.htodHook = func(dst, src uintptr, n int) error {
		off := int(src - dv.pinned)
		if off < 0 || off+n > pinnedSize {
			t.Fatalf("copy from %#x: outside the staging", src)
		}
		copies = append(copies, copyRec{dst, append([]byte(nil), pinned[off:off+n]...)})
		return nil
	}
	b := &Backend{dv: dv, bufs: map[alloc.BufID]devBuf{}}
	for id, size := range map[alloc.BufID]int64{1: 4, 2: 4, 3: 4, 4: 2048} {
		b.bufs[id] = devBuf{ptr: uintptr(id) << 20, size: size}
	}
	return b, &copies
}

// decodeWrites queues a decode step's four input writes (at position pos).
func decodeWrites(t *testing.T, b *Backend, pos byte) [][]byte {
	t.Helper()
	mask := bytes.Repeat([]byte{pos}, 2048)
	data := [][]byte{{7, 0, 0, 0}, {pos, 0, 0, 0}, {pos, 0, 0, 0}, mask}
	refs := []alloc.BufRef{{ID: 1, Len: 4}, {ID: 2, Len: 4}, {ID: 3, Len: 4}, {ID: 4, Len: 2048}}
	if err := b.WriteHostWindows(refs, data); err != nil {
		t.Fatal(err)
	}
	return data
}

// checkCopies: the copies are the writes, in order, with their bytes.
func checkCopies(t *testing.T, b *Backend, got []copyRec, data [][]byte) {
	t.Helper()
	if len(got) != len(data) {
		t.Fatalf("%d copies, want %d", len(got), len(data))
	}
	for i, c := range got {
		if want := b.bufs[alloc.BufID(i+1)].ptr; c.dst != want || !bytes.Equal(c.data, data[i]) {
			t.Errorf("copy %d: %d bytes to %#x, want %d to %#x (or other bytes)", i, len(c.data), c.dst, len(data[i]), want)
		}
	}
}

// TestInputsDriverCalls: a decode step's four input writes cost four
// cuMemcpyHtoDAsync calls through the ring (any request but a Compute, or
// a Compute that cannot use the block); a Compute gathers them into the
// input block with none, the eager or captured run issues the four from
// there, and a replay none at all (the graph holds them: run).
func TestInputsDriverCalls(t *testing.T) {
	b, copies := fakeInputs(t)
	data := decodeWrites(t, b, 1)
	if err := b.flushPending(); err != nil {
		t.Fatal(err)
	}
	checkCopies(t, b, *copies, data)
	if b.dv.in.busy {
		t.Error("ring uploads marked the input block busy")
	}

	*copies = nil
	data = decodeWrites(t, b, 2)
	ws, err := b.gatherInputs()
	if err != nil {
		t.Fatal(err)
	}
	if len(*copies) != 0 || len(ws) != 4 || len(b.pending) != 0 {
		t.Fatalf("gathered: %d copies, %d writes, %d left pending; want 0, 4, 0", len(*copies), len(ws), len(b.pending))
	}
	if err := b.copyInputs(ws); err != nil {
		t.Fatal(err)
	}
	checkCopies(t, b, *copies, data)
	if !b.dv.in.busy {
		t.Error("copies from the block did not mark it busy")
	}
	if got := b.dv.in.copies; got != 8 {
		t.Errorf("%d copies counted, want 8", got)
	}

	// MINFER_CUDA_INPUTS=ring: the ring's four copies, before the run.
	b.inputsRing, b.dv.in.busy = true, false
	*copies = nil
	data = decodeWrites(t, b, 3)
	if ws, err := b.gatherInputs(); err != nil || ws != nil {
		t.Fatalf("ring only: gathered %d writes (%v)", len(ws), err)
	}
	checkCopies(t, b, *copies, data)
}

// TestInputBlockFence: the block is not written while copies queued from
// it may not have read it: a Compute then uploads through the ring, until
// a polled read queued after those copies has its number on the flag word.
func TestInputBlockFence(t *testing.T) {
	b, copies := fakeInputs(t)
	var flag uint32 = 10
	b.dv.poll = &pollReader{flag: &flag}
	b.dv.in.pollQueued(11) // a read queued before any copy fences nothing
	decodeWrites(t, b, 1)
	ws, _ := b.gatherInputs()
	b.copyInputs(ws)
	block := append([]byte(nil), b.dv.pinnedBuf[ringSize:ringSize+2060]...)

	step := func(pos byte, wantGathered bool) {
		t.Helper()
		*copies = nil
		data := decodeWrites(t, b, pos)
		ws, err := b.gatherInputs()
		if err != nil {
			t.Fatal(err)
		}
		if gathered := ws != nil; gathered != wantGathered {
			t.Fatalf("step %d: gathered %v, want %v", pos, gathered, wantGathered)
		}
		if !wantGathered {
			checkCopies(t, b, *copies, data) // through the ring, now
			if !bytes.Equal(b.dv.pinnedBuf[ringSize:ringSize+2060], block) {
				t.Fatalf("step %d: the busy block was written", pos)
			}
			return
		}
		if len(*copies) != 0 {
			t.Fatalf("step %d: %d copies while gathering", pos, len(*copies))
		}
		b.copyInputs(ws) // as a replay's graph would read it
		block = append(block[:0], b.dv.pinnedBuf[ringSize:ringSize+2060]...)
	}
	step(2, false) // busy, unfenced
	b.dv.in.pollQueued(12)
	b.dv.in.pollQueued(13) // the first read after the copies is the fence
	step(3, false)         // fenced at 12, the flag at 10
	flag = 12
	step(4, true)
	flag = 13
	step(5, false) // step 4's copies: no read queued after them yet
}

// TestInputBlockTooSmall: writes larger than the block go through the ring.
func TestInputBlockTooSmall(t *testing.T) {
	b, copies := fakeInputs(t)
	b.bufs[5] = devBuf{ptr: 5 << 20, size: inputBlockSize + 4}
	big := make([]byte, inputBlockSize+4)
	if err := b.WriteHostWindows([]alloc.BufRef{{ID: 5, Len: int64(len(big))}}, [][]byte{big}); err != nil {
		t.Fatal(err)
	}
	ws, err := b.gatherInputs()
	if err != nil || ws != nil || len(*copies) != 1 {
		t.Fatalf("gathered %d writes, %d copies (%v); want none gathered, one copy", len(ws), len(*copies), err)
	}
}

// TestRunSignatureSeesWrites: a run's signature with gathered writes is
// not the run's without them, and moves with any write's destination,
// length or place in the block, but not with the bytes written (a step's
// new inputs replay the same graph).
func TestRunSignatureSeesWrites(t *testing.T) {
	nodes := []*graph.Node{{Buf: alloc.BufRef{ID: 1, Len: 64}}}
	ws := []pendingWrite{{dst: 1 << 20, off: 0, n: 4}, {dst: 2 << 20, off: 4, n: 2048}}
	base := runSignature(nodes, ws)
	seen := map[uint64]string{base: "base", runSignature(nodes, nil): "no writes"}
	if len(seen) != 2 {
		t.Fatal("the writes do not move the signature")
	}
	for i := range ws {
		for _, f := range []struct {
			name string
			p    *int
		}{{"place", &ws[i].off}, {"length", &ws[i].n}} {
			*f.p += 4
			s := runSignature(nodes, ws)
			if prev, ok := seen[s]; ok {
				t.Errorf("write %d's %s moved: hashes as %s", i, f.name, prev)
			}
			seen[s] = f.name
			*f.p -= 4
		}
		ws[i].dst += 256
		if _, ok := seen[runSignature(nodes, ws)]; ok {
			t.Errorf("write %d's destination moved: the same signature", i)
		}
		ws[i].dst -= 256
	}
	if runSignature(nodes, ws[:1]) == base {
		t.Error("a write dropped: the same signature")
	}
	if runSignature(nodes, ws) != base {
		t.Error("the same writes hashed twice differently")
	}
}

// TestComputeTakesItsWrites: the thread's pre uploads the deferred writes
// before any request but a Compute's (doRun), which gathers them itself.
func TestComputeTakesItsWrites(t *testing.T) {
	b, copies := fakeInputs(t)
	th, err := startThreadSpin(func() error { return nil }, nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer th.stop(func() {})
	b.dv.t = th
	th.pre = b.beforeRequest
	decodeWrites(t, b, 1)
	var left int
	th.doRun(func() error { left = len(b.pending); return nil })
	if left != 4 || len(*copies) != 0 {
		t.Errorf("a Compute's pre: %d writes left, %d copies; want 4, 0", left, len(*copies))
	}
	th.do(func() error { left = len(b.pending); return nil })
	if left != 0 || len(*copies) != 4 {
		t.Errorf("another request's pre: %d writes left, %d copies; want 0, 4", left, len(*copies))
	}
}

// BenchmarkDecodeInputs: a decode step's input writes on the host, the
// driver calls aside (htodHook does nothing): ring, the copies the old
// path issued (each a cuMemcpyHtoDAsync on a device); block, gathered for
// the graph to carry (none).
func BenchmarkDecodeInputs(b *testing.B) {
	for _, ring := range []bool{true, false} {
		name := map[bool]string{true: "ring", false: "block"}[ring]
		b.Run(name, func(b *testing.B) {
			be, _ := fakeInputs(b)
			be.dv.htodHook = func(uintptr, uintptr, int) error { return nil }
			be.inputsRing = ring
			mask := make([]byte, 2048)
			data := [][]byte{{7, 0, 0, 0}, {1, 0, 0, 0}, {1, 0, 0, 0}, mask}
			refs := []alloc.BufRef{{ID: 1, Len: 4}, {ID: 2, Len: 4}, {ID: 3, Len: 4}, {ID: 4, Len: 2048}}
			for b.Loop() {
				if err := be.WriteHostWindows(refs, data); err != nil {
					b.Fatal(err)
				}
				ws, err := be.gatherInputs()
				if err != nil {
					b.Fatal(err)
				}
				be.dv.in.busy = false // the previous step's read fenced it
				_ = ws
				if be.dv.ringOff > ringSize/2 {
					be.dv.ringOff = 0 // as a stream synchronize would
				}
			}
			b.ReportMetric(float64(be.dv.in.copies)/float64(b.N), "copies/op")
		})
	}
}
