package cuda

import (
	"context"
	"errors"
	"testing"

	"github.com/minfer/minfer/core/backend"
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/alloc"
	"github.com/minfer/minfer/internal/memview"
)

// TestGatedRuns (GPU): a gated run waits for its gate and takes the bytes
// OpenGate writes; a request that comes first opens the gate with zeros
// (OpenGate then reports ErrGateOpened); a read queued before a gated run,
// whose poll gives up at once, waits for the event before the gate and not
// for the stream (it would never end); Close opens a closed gate.
func TestGatedRuns(t *testing.T) {
	b := gpu(t)
	if !b.Gating() {
		if b.dv.drvVersion >= 12000 && !gateOff() {
			t.Fatalf("CUDA %s driver: no gated runs (cuStreamWaitValue32_v2 missing or the probe failed)", versionString(b.dv.drvVersion))
		}
		t.Skipf("no gated runs (CUDA %s driver)", versionString(b.dv.drvVersion))
	}
	const n = 64
	id, err := b.AllocBuffer(4 * n * 4)
	if err != nil {
		t.Fatal(err)
	}
	defer b.FreeBuffer(id)
	win := func(k int64) alloc.BufRef { return alloc.BufRef{ID: id, Off: k * 4 * n, Len: 4 * n} }
	node := func(op graph.Op, k int64, src ...*graph.Node) *graph.Node {
		nd := &graph.Node{Op: op, Type: gguf.TypeF32, Shape: [4]int64{n, 1, 1, 1}, Buf: win(k)}
		copy(nd.Src[:], src)
		return nd
	}
	x, y := node(graph.OpInput, 0), node(graph.OpInput, 1)
	sum := node(graph.OpAdd, 2, x, y)
	twice := node(graph.OpAdd, 3, y, y)
	xs, ys := make([]float32, n), make([]float32, n)
	for i := range xs {
		xs[i], ys[i] = float32(i+1), float32(1000*i)
	}
	if err := b.WriteHostWindow(win(1), memview.Bytes(ys)); err != nil {
		t.Fatal(err)
	}
	read := func(k int64) []float32 {
		t.Helper()
		out := make([]float32, n)
		if err := b.ReadHostWindow(win(k), memview.Bytes(out)); err != nil {
			t.Fatal(err)
		}
		return out
	}
	want := func(what string, got []float32, f func(i int) float32) {
		t.Helper()
		for i, v := range got {
			if v != f(i) {
				t.Fatalf("%s: value %d is %v, want %v", what, i, v, f(i))
			}
		}
	}
	ctx := context.Background()

	// Opened with x: sum = x + y.
	if err := b.ComputeGated(ctx, []*graph.Node{sum}, win(0)); err != nil {
		t.Fatal(err)
	}
	if err := b.OpenGate(memview.Bytes(xs)); err != nil {
		t.Fatal(err)
	}
	want("opened with x", read(2), func(i int) float32 { return xs[i] + ys[i] })

	// A request first: the run takes zeros, OpenGate says so.
	if err := b.ComputeGated(ctx, []*graph.Node{sum}, win(0)); err != nil {
		t.Fatal(err)
	}
	if _, _, err := b.MemInfo(); err != nil {
		t.Fatal(err)
	}
	if err := b.OpenGate(memview.Bytes(xs)); !errors.Is(err, backend.ErrGateOpened) {
		t.Fatalf("OpenGate after a request: %v, want ErrGateOpened", err)
	}
	want("opened by a request", read(2), func(i int) float32 { return ys[i] })

	// The read of a run queued before a gated one, its poll giving up at
	// once: it returns (the event before the gate), the gated run then
	// takes its bytes.
	for _, limit := range []bool{false, true} {
		if limit {
			if b.dv.poll == nil {
				continue
			}
			b.dv.poll.limit = 0
		}
		if err := b.Compute(ctx, []*graph.Node{twice}); err != nil {
			t.Fatal(err)
		}
		out := make([]float32, n)
		err := b.ReadHostWindowThen(win(3), memview.Bytes(out), func() {
			if err := b.ComputeGated(ctx, []*graph.Node{sum}, win(0)); err != nil {
				t.Error(err)
			}
		})
		if err != nil {
			t.Fatal(err)
		}
		want("the read before a gate", out, func(i int) float32 { return 2 * ys[i] })
		if err := b.OpenGate(memview.Bytes(xs)); err != nil {
			t.Fatalf("poll limit 0 %v: %v", limit, err)
		}
		want("opened after the read", read(2), func(i int) float32 { return xs[i] + ys[i] })
		if b.dv.poll != nil {
			b.dv.poll.limit = pollLimit
		}
	}

	// A token window past the slot is refused; a closed gate does not
	// keep Close waiting.
	if err := b.ComputeGated(ctx, []*graph.Node{sum}, alloc.BufRef{ID: id, Len: gateSlotSize + 4}); err == nil {
		t.Error("a gated token window past the slot was taken")
	}
	c := gpu(t)
	cid, err := c.AllocBuffer(4 * n * 4)
	if err != nil {
		t.Fatal(err)
	}
	cx := &graph.Node{Op: graph.OpInput, Type: gguf.TypeF32, Shape: [4]int64{n, 1, 1, 1}, Buf: alloc.BufRef{ID: cid, Len: 4 * n}}
	cs := &graph.Node{Op: graph.OpAdd, Type: gguf.TypeF32, Shape: [4]int64{n, 1, 1, 1}, Src: [4]*graph.Node{cx, cx}, Buf: alloc.BufRef{ID: cid, Off: 4 * n, Len: 4 * n}}
	if err := c.ComputeGated(ctx, []*graph.Node{cs}, cx.Buf); err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestGateWords: the gate's host side without a device — OpenGate writes
// the token before the number, and only for a pending gate of its size;
// open (any request's) writes zeros and the number; a gate opened either
// way reports ErrGateOpened to a later OpenGate; gateEvent is the event
// only while a gate is pending.
func TestGateWords(t *testing.T) {
	var flag uint32
	slot := make([]byte, gateSlotSize)
	g := &gate{flag: &flag, slot: slot, seq: 7, ev: 99}
	b := &Backend{dv: &device{gate: g}}
	if err := b.OpenGate([]byte{1, 2, 3, 4}); !errors.Is(err, backend.ErrGateOpened) {
		t.Fatalf("OpenGate with no gate pending: %v", err)
	}
	if ev := b.dv.gateEvent(); ev != 0 {
		t.Fatalf("gateEvent with no gate pending: %d", ev)
	}
	pend := func(n int) {
		g.mu.Lock()
		g.seq++
		g.n, g.pending = n, true
		g.mu.Unlock()
	}
	pend(4)
	if ev := b.dv.gateEvent(); ev != 99 {
		t.Fatalf("gateEvent with a gate pending: %d", ev)
	}
	if err := b.OpenGate([]byte{1, 2, 3, 4}); err != nil {
		t.Fatal(err)
	}
	if flag != 8 || slot[0] != 1 || slot[3] != 4 {
		t.Fatalf("opened: flag %d, slot %v", flag, slot[:4])
	}
	if err := b.OpenGate([]byte{1, 2, 3, 4}); !errors.Is(err, backend.ErrGateOpened) {
		t.Fatalf("OpenGate twice: %v", err)
	}
	// A request first: zeros, the number; OpenGate then says so.
	pend(4)
	b.dv.openGate()
	if flag != 9 || slot[0] != 0 || slot[3] != 0 {
		t.Fatalf("opened by a request: flag %d, slot %v", flag, slot[:4])
	}
	if err := b.OpenGate([]byte{5, 6, 7, 8}); !errors.Is(err, backend.ErrGateOpened) || slot[0] != 0 {
		t.Fatalf("OpenGate after a request: %v, slot %v", err, slot[:4])
	}
	// The wrong size: refused, and the gate opened all the same (nothing
	// may stay blocked).
	pend(4)
	if err := b.OpenGate([]byte{1, 2}); err == nil || errors.Is(err, backend.ErrGateOpened) {
		t.Fatalf("OpenGate of 2 bytes for 4: %v", err)
	}
	if flag != 10 || g.pending {
		t.Fatalf("after the wrong size: flag %d, pending %v", flag, g.pending)
	}
	// No gate on the device: nothing to open, never pending.
	nb := &Backend{dv: &device{}}
	nb.dv.openGate()
	if nb.Gating() || nb.dv.gateEvent() != 0 {
		t.Fatal("a device without a gate gates")
	}
	if err := nb.OpenGate([]byte{1}); !errors.Is(err, backend.ErrGateOpened) {
		t.Fatalf("OpenGate without a gate: %v", err)
	}
}
