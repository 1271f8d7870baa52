package graph

import (
	"errors"
	"testing"

	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/alloc"
)

type fakeBuffers struct {
	name   string
	next   alloc.BufID
	allocs int
}

func (f *fakeBuffers) Name() string { return f.name }
func (f *fakeBuffers) AllocBuffer(int64) (alloc.BufID, error) {
	f.next++
	f.allocs++
	return f.next, nil
}
func (f *fakeBuffers) FreeBuffer(alloc.BufID) error { return nil }
func (f *fakeBuffers) WeightsBytes() int64          { return 0 }

func noKV(string) (alloc.BufRef, bool) { return alloc.BufRef{}, false }

// chain: in → a → b → c → d, each F32 [256]; a second input read only by d.
func chain(t *testing.T) *Graph {
	b := NewBuilder(Params{Tokens: 1})
	in := b.Input("x", gguf.TypeF32, 256)
	late := b.Input("late", gguf.TypeF32, 256)
	a := b.RMSNorm(in, 1e-5, "a")
	c := b.RMSNorm(a, 1e-5, "b")
	d := b.RMSNorm(c, 1e-5, "c")
	e := b.Add(d, late, "d")
	g, err := b.Finish(e)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func TestInputsArePlacedBeforeTheWalkAndNeverTakeASweptBuffer(t *testing.T) {
	g := chain(t)
	ga := alloc.NewGraphAllocator()
	ga.AddBackend(&fakeBuffers{name: "CPU"}, alloc.Unlimited("test"))
	if err := Allocate(g, ga, noKV); err != nil {
		t.Fatal(err)
	}
	x, _ := g.Input("x")
	late, _ := g.Input("late")
	// "late" is filled from the host before execution, so it must not share
	// a buffer with any node that runs before its reader.
	for _, n := range g.Nodes[:len(g.Nodes)-1] {
		if n != late && n.Buf.ID == late.Buf.ID {
			t.Errorf("input 'late' shares buffer %d with %s", late.Buf.ID, n)
		}
	}
	// A compute node after x's last reader may reuse x's buffer: that is
	// the sweep working, and the walk placed x before that happened.
	if x.Buf.ID == late.Buf.ID {
		t.Error("two live inputs share a buffer")
	}
	Release(g, ga)
	if r := ga.MemoryReport(0); r.LiveBytes != 0 {
		t.Errorf("%d live bytes after Release", r.LiveBytes)
	}
}

func TestAViewExtendsItsBasesDeadline(t *testing.T) {
	b := NewBuilder(Params{Tokens: 2})
	in := b.Input("x", gguf.TypeF32, 256, 2)
	base := b.RMSNorm(in, 1e-5, "base")
	view := b.View(base, "last", 256*4, 256, 1) // the second row
	other := b.RMSNorm(in, 1e-5, "other")       // allocated while the view is alive
	out := b.Add(view, b.View(other, "o1", 0, 256, 1), "out")
	g, err := b.Finish(out)
	if err != nil {
		t.Fatal(err)
	}
	dl := Deadlines(g)
	if dl[base] != out.ID {
		t.Errorf("base deadline %d, want the view's reader %d", dl[base], out.ID)
	}
	ga := alloc.NewGraphAllocator()
	ga.AddBackend(&fakeBuffers{name: "CPU"}, alloc.Unlimited("test"))
	if err := Allocate(g, ga, noKV); err != nil {
		t.Fatal(err)
	}
	if other.Buf.ID == base.Buf.ID {
		t.Error("a node took the buffer of a base still read through a view")
	}
	if view.Buf.ID != base.Buf.ID || view.Buf.Off != 256*4 || view.Buf.Len != 256*4 {
		t.Errorf("view ref %+v over base %+v", view.Buf, base.Buf)
	}
}

func TestRebuildOfTheSameTopologyGetsTheSameSlotsAndAllocatesNothing(t *testing.T) {
	fb := &fakeBuffers{name: "CPU"}
	ga := alloc.NewGraphAllocator()
	ga.AddBackend(fb, alloc.Unlimited("test"))
	g1 := chain(t)
	if err := Allocate(g1, ga, noKV); err != nil {
		t.Fatal(err)
	}
	Release(g1, ga)
	allocs := fb.allocs
	g2 := chain(t) // rebuilt from scratch
	if err := Allocate(g2, ga, noKV); err != nil {
		t.Fatal(err)
	}
	if fb.allocs != allocs {
		t.Errorf("rebuild allocated %d new buffers", fb.allocs-allocs)
	}
	for i := range g1.Nodes {
		if g1.Nodes[i].Buf != g2.Nodes[i].Buf {
			t.Errorf("node %d: %+v then %+v", i, g1.Nodes[i].Buf, g2.Nodes[i].Buf)
		}
	}
}

// TestReallocationTakesItsBuffersBackWithoutAWalk: a graph allocated again
// with the allocator where its Release left it takes back exactly the
// buffers the walk would end holding (every node where it was, the live
// bytes those of the inputs and outputs, nothing allocated); after another
// graph used the allocator in between, the walk runs again and places
// every node as a fresh walk on that allocator does; Release always
// leaves no live bytes.
func TestReallocationTakesItsBuffersBackWithoutAWalk(t *testing.T) {
	fb := &fakeBuffers{name: "CPU"}
	ga := alloc.NewGraphAllocator()
	ga.AddBackend(fb, alloc.Unlimited("test"))
	g := chain(t)
	if err := Allocate(g, ga, noKV); err != nil {
		t.Fatal(err)
	}
	first := make([]alloc.BufRef, len(g.Nodes))
	for i, n := range g.Nodes {
		first[i] = n.Buf
	}
	live := ga.MemoryReport(0).LiveBytes
	Release(g, ga)
	allocs, walks := fb.allocs, g.allocGen
	for round := 0; round < 3; round++ {
		if err := Allocate(g, ga, noKV); err != nil {
			t.Fatal(err)
		}
		if g.allocGen != walks {
			t.Fatalf("round %d walked again with the allocator unchanged", round)
		}
		for i, n := range g.Nodes {
			if n.Buf != first[i] {
				t.Errorf("round %d: node %d at %+v, first at %+v", round, i, n.Buf, first[i])
			}
		}
		if r := ga.MemoryReport(0); r.LiveBytes != live || fb.allocs != allocs {
			t.Errorf("round %d: %d live bytes (the walk left %d), %d new buffers", round, r.LiveBytes, live, fb.allocs-allocs)
		}
		Release(g, ga)
		if r := ga.MemoryReport(0); r.LiveBytes != 0 {
			t.Fatalf("round %d: %d live bytes after Release", round, r.LiveBytes)
		}
	}
	// Another graph takes and gives back buffers: the allocator moved on.
	other := chain(t)
	if err := Allocate(other, ga, noKV); err != nil {
		t.Fatal(err)
	}
	busy := other.Nodes[len(other.Nodes)-1].Buf // held until other's Release
	if err := Allocate(g, ga, noKV); err != nil {
		t.Fatal(err)
	}
	if g.allocGen != walks+1 {
		t.Fatalf("the allocator changed but the walk did not run (%d walks)", g.allocGen)
	}
	for _, n := range g.Nodes {
		if n.Buf.ID == busy.ID && n.Buf.Class == busy.Class && n.Op != OpView {
			t.Errorf("%s took buffer %d, which the other graph still holds", n, busy.ID)
		}
	}
	Release(g, ga)
	Release(other, ga)
	if r := ga.MemoryReport(0); r.LiveBytes != 0 {
		t.Fatalf("%d live bytes after both Releases", r.LiveBytes)
	}
}

func TestGraphCacheOneGraphPerParamsMRU(t *testing.T) {
	var c Cache
	builds := 0
	build := func(p Params) (*Graph, error) { builds++; return &Graph{Params: p}, nil }
	for i := 0; i < MaxCachedGraphs+2; i++ {
		if _, err := c.Get(Params{Tokens: i + 1}, build); err != nil {
			t.Fatal(err)
		}
	}
	if c.Len() != MaxCachedGraphs {
		t.Errorf("%d graphs cached, want at most %d", c.Len(), MaxCachedGraphs)
	}
	// The most recent are kept: switching back to one is a reuse.
	g, _ := c.Get(Params{Tokens: MaxCachedGraphs + 1}, build)
	if builds != MaxCachedGraphs+2 || g.Params.Tokens != MaxCachedGraphs+1 {
		t.Errorf("switch back built again (%d builds)", builds)
	}
	// The oldest was evicted.
	c.Get(Params{Tokens: 1}, build)
	if s := c.Stats(); s.Builds != MaxCachedGraphs+3 || s.Reuses != 1 {
		t.Errorf("stats %+v", s)
	}
	// GPU layers are part of the identity.
	c.Get(Params{Tokens: 1, GPULayers: 3}, build)
	if s := c.Stats(); s.Builds != MaxCachedGraphs+4 {
		t.Errorf("a different plan reused a graph: %+v", s)
	}
}

type capAll struct{ name string }

func (c capAll) Name() string            { return c.name }
func (c capAll) SupportsNode(*Node) bool { return true }

type planN struct{ n, total int }

func (p planN) OnDevice(b int) bool        { return b < p.n }
func (p planN) DeviceHoldsUnblocked() bool { return p.n > p.total }

type where map[string]int

func (w where) WeightBackend(name string) (int, bool) { b, ok := w[name]; return b, ok }

func TestCrossBoundaryStagingIsChargedToThePool(t *testing.T) {
	b := NewBuilder(Params{Tokens: 1})
	in := b.Input("x", gguf.TypeF32, 64)
	b.SetLayer(0)
	w0 := b.Weight("blk.0.w", gguf.TypeF32, []int64{64, 64})
	h := b.MatMul(w0, in, "h0")
	b.SetLayer(1)
	w1 := b.Weight("blk.1.w", gguf.TypeF32, []int64{64, 64})
	out := b.MatMul(w1, h, "h1")
	g, err := b.Finish(out)
	if err != nil {
		t.Fatal(err)
	}
	err = AssignBackends(g, []Capability{capAll{"CPU"}, capAll{"GPU"}}, planN{1, 2}, where{"blk.0.w": 1, "blk.1.w": 0})
	if err != nil {
		t.Fatal(err)
	}
	var copies []*Node
	for _, n := range g.Nodes {
		if n.Op == OpCopy {
			copies = append(copies, n)
		}
	}
	if len(copies) != 1 || copies[0].Backend != 0 || copies[0].Src[0].Name != "h0" {
		t.Fatalf("copies %v", copies)
	}
	if h.Backend != 1 || out.Backend != 0 {
		t.Errorf("h0 on %d, h1 on %d; plan says block 0 on the device only", h.Backend, out.Backend)
	}
	cpu, gpu := &fakeBuffers{name: "CPU"}, &fakeBuffers{name: "GPU"}
	ga := alloc.NewGraphAllocator()
	ga.AddBackend(cpu, alloc.Unlimited("cpu"))
	ga.AddBackend(gpu, alloc.Unlimited("gpu"))
	if err := Allocate(g, ga, noKV); err != nil {
		t.Fatal(err)
	}
	if copies[0].Buf.Class != 0 || copies[0].Buf.Len != 64*4 {
		t.Errorf("staging ref %+v: want exact size, no class", copies[0].Buf)
	}
	if r := ga.MemoryReport(0); r.PoolBytes < 64*4 {
		t.Errorf("CPU pool %d bytes does not include the staging buffer", r.PoolBytes)
	}
	// The input is read on the device, so it lives there.
	if in.Backend != 1 {
		t.Errorf("input on backend %d, its reader on 1", in.Backend)
	}
}

// TestRefusedWalkGivesEverythingBack: a refusal in the middle of a walk
// returns the typed error and leaves no buffer marked live.
func TestRefusedWalkGivesEverythingBack(t *testing.T) {
	g := chain(t)
	ga := alloc.NewGraphAllocator()
	ga.AddBackend(&fakeBuffers{name: "GPU"}, alloc.Limit(2*1024, "test")) // the two inputs fit, the first node does not
	err := Allocate(g, ga, noKV)
	var r *alloc.Refusal
	if !errors.As(err, &r) {
		t.Fatalf("got %v, want a refusal", err)
	}
	if rep := ga.MemoryReport(0); rep.LiveBytes != 0 || rep.IdleSlots != int(rep.PoolBytes/1024) {
		t.Errorf("after the refusal: %+v", rep)
	}
}
