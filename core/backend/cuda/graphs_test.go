package cuda

import (
	"testing"
	"unsafe"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/model"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/alloc"
)

// TestSignatureSeesEveryWindow: a run's signature is the same for the same
// nodes on the same windows and moves when any node, any node's window
// (buffer, offset, length) or any source's window moves, or when nodes are
// added, dropped or reordered.
func TestSignatureSeesEveryWindow(t *testing.T) {
	mk := func() []*graph.Node {
		a := &graph.Node{Buf: alloc.BufRef{ID: 1, Off: 0, Len: 1024}}
		b := &graph.Node{Buf: alloc.BufRef{ID: 2, Off: 256, Len: 512}}
		c := &graph.Node{Buf: alloc.BufRef{ID: 3, Off: 0, Len: 64}, Src: [4]*graph.Node{a, b}}
		return []*graph.Node{a, b, c}
	}
	nodes := mk()
	base := signature(nodes)
	if signature(nodes) != base {
		t.Fatal("the same run hashed twice differently")
	}
	seen := map[uint64]string{base: "base"}
	try := func(what string, run []*graph.Node, undo func()) {
		t.Helper()
		s := signature(run)
		if prev, ok := seen[s]; ok {
			t.Errorf("%s hashes as %s", what, prev)
		}
		seen[s] = what
		if undo != nil {
			undo()
			if signature(nodes) != base {
				t.Fatalf("%s: undone, the signature did not come back", what)
			}
		}
	}
	for i := range nodes {
		n := nodes[i]
		try("buffer of node", nodes, func() func() { n.Buf.ID += 10; return func() { n.Buf.ID -= 10 } }())
		try("offset of node", nodes, func() func() { n.Buf.Off += 4; return func() { n.Buf.Off -= 4 } }())
		try("length of node", nodes, func() func() { n.Buf.Len += 4; return func() { n.Buf.Len -= 4 } }())
	}
	// A source outside the run (a weight, a view, a cache): only the
	// reader's source slot sees its window.
	c := nodes[2]
	w := &graph.Node{Buf: alloc.BufRef{ID: 4, Off: 128, Len: 4096}}
	c.Src[3] = w
	base = signature(nodes)
	seen[base] = "base with a leaf source"
	try("buffer of a source", nodes, func() func() { w.Buf.ID += 10; return func() { w.Buf.ID -= 10 } }())
	try("offset of a source", nodes, func() func() { w.Buf.Off += 4; return func() { w.Buf.Off -= 4 } }())
	c.Src[2], c.Src[3] = w, nil
	try("a source in another slot", nodes, nil)
	c.Src[2] = nil
	base = signature(nodes)
	try("a source dropped", nodes, func() func() { s := c.Src[1]; c.Src[1] = nil; return func() { c.Src[1] = s } }())
	a2 := *c.Src[0]
	a2.Buf.Off = 512
	c.Src[0] = &a2
	try("a source's window", nodes, nil)
	c.Src[0] = nodes[0]
	try("other node identities", mk(), nil)
	try("a node dropped", nodes[:2], nil)
	try("reordered", []*graph.Node{nodes[1], nodes[0], nodes[2]}, nil)
	try("a node added", append(append([]*graph.Node(nil), nodes...), &graph.Node{}), nil)
}

// sigBuffers is an alloc.Buffers that hands out ids only (no memory): the
// signature benchmark's graph is placed, never run.
type sigBuffers struct{ next alloc.BufID }

func (f *sigBuffers) Name() string                           { return "sig" }
func (f *sigBuffers) AllocBuffer(int64) (alloc.BufID, error) { f.next++; return f.next, nil }
func (f *sigBuffers) FreeBuffer(alloc.BufID) error           { return nil }
func (f *sigBuffers) WeightsBytes() int64                    { return 0 }

// decodeRun1B is the run a 1.1B llama (TinyLlama's shape, Q4_0, every block
// on the device with its fused weights) hands Compute for one decode step:
// the real builder's graph, placed by the real allocator, less its leaves
// and views (backend.Execute's run).
func decodeRun1B(tb testing.TB) []*graph.Node {
	tb.Helper()
	h := model.HParams{Arch: "llama", NVocab: 32000, NCtxTrain: 2048, NEmbd: 2048, NLayer: 22, NFF: 5632,
		NHead: 32, NHeadKV: 4, HeadDim: 64, RMSEps: 1e-5, RopeDims: 64, RopeBase: 10000, RopeScale: 1,
		QScale: 0.125}
	arch, err := model.Lookup("llama")
	if err != nil {
		tb.Fatal(err)
	}
	infos := map[string]*gguf.TensorInfo{}
	for _, s := range arch.Tensors(h) {
		t := gguf.TypeQ4_0
		if len(s.Dims) == 1 {
			t = gguf.TypeF32
		}
		infos[s.Name] = &gguf.TensorInfo{Name: s.Name, Type: t, Dims: s.Dims}
	}
	tensors := func(name string) (*gguf.TensorInfo, bool) { ti, ok := infos[name]; return ti, ok }
	p := graph.Params{Tokens: 1, KVLen: 512, GPULayers: h.NLayer + 1, Arch: h.Arch}
	mb := &model.Builder{Builder: graph.NewBuilder(p), H: h, P: p, NCtx: 2048, KVType: gguf.TypeF16, Tensors: tensors, DeviceFusion: true}
	out, err := arch.Build(mb)
	if err != nil {
		tb.Fatal(err)
	}
	g, err := mb.Finish(out)
	if err != nil {
		tb.Fatal(err)
	}
	ga := alloc.NewGraphAllocator()
	ga.AddBackend(&sigBuffers{}, alloc.Budget{})
	kv := map[string]alloc.BufRef{}
	persistent := func(name string) (alloc.BufRef, bool) {
		r, ok := kv[name]
		if !ok {
			r = alloc.BufRef{ID: alloc.BufID(1000 + len(kv)), Len: 1 << 20}
			kv[name] = r
		}
		return r, true
	}
	if err := graph.Allocate(g, ga, persistent); err != nil {
		tb.Fatal(err)
	}
	var run []*graph.Node
	for _, n := range g.Nodes {
		if !n.Op.IsLeaf() && n.Op != graph.OpView && n.Op != graph.OpCopy {
			run = append(run, n)
		}
	}
	return run
}

// BenchmarkSignature: a 1.1B decode step's lookup, the signature and the
// cache probe, as Backend.run does them before a replay.
func BenchmarkSignature(b *testing.B) {
	run := decodeRun1B(b)
	srcs := 0
	for _, n := range run {
		for _, s := range n.Src {
			if s != nil {
				srcs++
			}
		}
	}
	b.Logf("%d nodes, %d sources", len(run), srcs)
	b.Run("chain", func(b *testing.B) {
		for b.Loop() {
			sink = signatureChain(run)
		}
	})
	b.Run("hash", func(b *testing.B) {
		for b.Loop() {
			sink = signature(run)
		}
	})
	// cold: L1 and L2 hold other data first (a step's host work between
	// two lookups: the logits, sampling, the driver), as on a real decode.
	evict := make([]byte, 4<<20)
	cold := func(name string, sig func([]*graph.Node) uint64) {
		b.Run(name, func(b *testing.B) {
			for b.Loop() {
				b.StopTimer()
				for i := 0; i < len(evict); i += 64 {
					evict[i]++
				}
				b.StartTimer()
				sink = sig(run)
			}
		})
	}
	cold("chain-cold", signatureChain)
	cold("hash-cold", signature)
	b.Run("lookup", func(b *testing.B) {
		var c graphCache
		c.entry(nil, signature(run)).exec = 1
		for b.Loop() {
			if c.entry(nil, signature(run)).exec == 0 {
				b.Fatal("missed")
			}
		}
	})
}

var sink uint64

// signatureChain is signature as it was, one multiply chain over every
// word (BenchmarkSignature's comparison).
func signatureChain(nodes []*graph.Node) uint64 {
	h := sigSeed
	mix := func(v uint64) { h = sigStep(h, v) }
	for _, n := range nodes {
		mix(uint64(uintptr(unsafe.Pointer(n))))
		mix(uint64(n.Buf.ID)<<32 ^ uint64(n.Buf.Off))
		mix(uint64(n.Buf.Len))
		for _, s := range n.Src {
			if s != nil {
				mix(uint64(s.Buf.ID)<<32 ^ uint64(s.Buf.Off))
			}
		}
	}
	return h
}
