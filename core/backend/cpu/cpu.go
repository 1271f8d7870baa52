// Package cpu is Minfer's CPU backend: every op in pure Go, multi-threaded
// over a fixed worker pool, weights used in place from the mapped file.
package cpu

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/minfer/minfer/core/backend"
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/alloc"
	"github.com/minfer/minfer/internal/memview"
)

var (
	_ backend.Backend      = (*CPU)(nil)
	_ backend.HostWindower = (*CPU)(nil)
)

type weight struct {
	t    gguf.GGMLType
	dims []int64
	data []byte
	// layout: how data lies, the file's or (a copy repacked in groups of
	// eight or sixteen rows, x8.go) quant.LayoutX8 or LayoutCol16, then
	// read only by the mat-muls.
	layout quant.Layout
}

// CPU is the host backend.
type CPU struct {
	name    string
	mu      sync.Mutex
	bufs    map[alloc.BufID][]byte
	nextID  alloc.BufID
	weights map[string]weight
	wbytes  int64
	allocs  int64
	w       *workers
	// copyWeights: RegisterWeight copies (weightmem.go) into arena,
	// released on Close.
	copyWeights bool
	arena       weightArena

	// scratch for quantized activations (backend-internal: not in the
	// memory report).
	scratch []byte
	ws      []scratch // per worker
	tabs    []byte    // group tables of the quantized activations
	tabs1   []byte    // token tables of the left-over tokens
	tiles   []byte    // eight-token tiles of the quantized activations
	// matMulID's (token, slot) pairs grouped by expert: expert e's end at
	// moePairs[moeEnd[e]] and begin where expert e−1's end.
	moeEnd, moePairs []int32
	topIdx           []int32 // topK's index row
	attnUsed         []int32 // attention's unmasked length of each row
	// freeRows: weights known to hold no −128 quant or known to hold one
	// (rowsFree in tile8.go), by their bytes.
	freeRows map[weightKey]bool

	// weightReads counts the weight bytes the mat-muls read (a decode
	// step of a mixture of experts reads only its selected experts).
	weightReads atomic.Int64

	// The ops' task values, reused call after call so that running one
	// allocates nothing.
	mt matTask
	qt quantTask
	nt normTask
	rt ropeTask
	at attnTask
	gt gluTask
	pt tileTask
}

// WeightBytesRead is the weight bytes read by mat-muls since the backend
// was made: dense mat-muls read all their rows, expert mat-muls only the
// experts some token selected.
func (c *CPU) WeightBytesRead() int64 { return c.weightReads.Load() }

// New returns a CPU backend using threads workers (0: GOMAXPROCS).
func New(threads int) *CPU {
	return NewNamed("CPU", threads)
}

// NewNamed is New with a display name (tests run two CPU backends as a
// host and a stand-in device).
func NewNamed(name string, threads int) *CPU {
	w := newWorkers(threads)
	return &CPU{name: name, bufs: map[alloc.BufID][]byte{}, nextID: 1, weights: map[string]weight{}, w: w, ws: make([]scratch, w.n)}
}

func (c *CPU) Name() string { return c.name }

// Threads is the worker count.
func (c *CPU) Threads() int { return c.w.n }

// AllocBuffer allocates size bytes, 8-byte aligned so float32/int32 views
// are valid.
func (c *CPU) AllocBuffer(size int64) (alloc.BufID, error) {
	if size <= 0 {
		return 0, fmt.Errorf("cpu: buffer of %d bytes", size)
	}
	words := make([]uint64, (size+7)/8)
	b := memview.Bytes(words)[:size]
	// Touch every page now: a large buffer comes fresh from the OS, and
	// the KV cache's pages would otherwise fault in one by one during
	// decode, as its rows are first written (~2 µs of each store_kv of
	// the 1B synth model's 256-token decode, ~0.4 % of the step);
	// llama.cpp clears its KV buffer at creation likewise.
	for i := 0; i < len(b); i += 4096 {
		b[i] = 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	id := c.nextID
	c.nextID++
	c.bufs[id] = b
	c.allocs++
	return id, nil
}

// AllocCount is how many buffers the backend has allocated (the CPU twin of
// CUDA's PoolGen: it stays still when a rebuilt graph reuses its slots).
func (c *CPU) AllocCount() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.allocs
}

func (c *CPU) FreeBuffer(id alloc.BufID) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.bufs[id]; !ok {
		return fmt.Errorf("cpu: free of unknown buffer %d", id)
	}
	delete(c.bufs, id)
	return nil
}

// WeightsBytes is the bytes of every registered tensor (mmap views).
func (c *CPU) WeightsBytes() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.wbytes
}

// RegisterWeight keeps a view of the mapped tensor (no copy), or a copy of
// it when copying is on (weightmem.go).
func (c *CPU) RegisterWeight(name string, t gguf.GGMLType, dims []int64, data []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, dup := c.weights[name]; dup {
		return fmt.Errorf("cpu: weight %q registered twice", name)
	}
	lay := quant.LayoutFile
	if c.copyWeights {
		if lay = repackLayout(name, t, dims, c.w.n); lay != quant.LayoutFile {
			data = c.arena.copyRepacked(data, t, dims, lay)
		} else {
			data = c.arena.copyOf(data)
		}
	}
	c.weights[name] = weight{t, dims, data, lay}
	c.wbytes += int64(len(data))
	return nil
}

func (c *CPU) buf(ref alloc.BufRef) ([]byte, error) {
	c.mu.Lock()
	b, ok := c.bufs[ref.ID]
	c.mu.Unlock()
	if !ok {
		return nil, fmt.Errorf("cpu: unknown buffer %d", ref.ID)
	}
	if ref.Off < 0 || ref.Off+ref.Len > int64(len(b)) {
		return nil, fmt.Errorf("cpu: window %d..%d outside buffer %d of %d bytes", ref.Off, ref.Off+ref.Len, ref.ID, len(b))
	}
	return b[ref.Off : ref.Off+ref.Len : ref.Off+ref.Len], nil
}

func (c *CPU) WriteHost(id alloc.BufID, data []byte) error {
	c.mu.Lock()
	b, ok := c.bufs[id]
	c.mu.Unlock()
	if !ok {
		return fmt.Errorf("cpu: unknown buffer %d", id)
	}
	if len(data) != len(b) {
		return fmt.Errorf("cpu: write of %d bytes into buffer %d of %d bytes (exact length required)", len(data), id, len(b))
	}
	copy(b, data)
	return nil
}

func (c *CPU) WriteHostWindow(ref alloc.BufRef, data []byte) error {
	if int64(len(data)) != ref.Len {
		return fmt.Errorf("cpu: write of %d bytes into a window of %d", len(data), ref.Len)
	}
	b, err := c.buf(ref)
	if err != nil {
		return err
	}
	copy(b, data)
	return nil
}

func (c *CPU) ReadHostWindow(ref alloc.BufRef, dst []byte) error {
	if int64(len(dst)) != ref.Len {
		return fmt.Errorf("cpu: read of %d bytes from a window of %d", len(dst), ref.Len)
	}
	b, err := c.buf(ref)
	if err != nil {
		return err
	}
	copy(dst, b)
	return nil
}

// HostWindow exposes a window for in-process readers (tests, the engine's
// logits read) without a copy.
func (c *CPU) HostWindow(ref alloc.BufRef) ([]byte, error) { return c.buf(ref) }

// SupportsNode: the CPU runs every op the graph has, on every weight type
// quant supports.
func (c *CPU) SupportsNode(n *graph.Node) bool {
	switch n.Op {
	case graph.OpMatMul, graph.OpGetRows, graph.OpMatMulID:
		return n.Src[0] != nil && quant.Supported(n.Src[0].Type)
	}
	return true
}

func (c *CPU) Close() error {
	c.w.close()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bufs = map[alloc.BufID][]byte{}
	c.weights = map[string]weight{}
	c.arena.release()
	return nil
}

// bytesOf resolves a node's bytes: weights by name, the rest by BufRef.
func (c *CPU) bytesOf(n *graph.Node) ([]byte, error) {
	if n.Op == graph.OpView && n.Base().Op == graph.OpWeight {
		// A part of a weight (a fused tensor's Q rows, say): used in place.
		var off int64
		for v := n; v.Op == graph.OpView; v = v.Src[0] {
			off += v.ViewOff
		}
		w, err := c.bytesOf(n.Base())
		if err != nil {
			return nil, err
		}
		return viewOf(n, w, off)
	}
	if n.Op == graph.OpWeight {
		w, err := c.weightOf(n)
		if err != nil {
			return nil, err
		}
		if w.layout != quant.LayoutFile {
			return nil, fmt.Errorf("cpu: weight %q is repacked for the mat-muls (%s); %s cannot read it", n.Weight, w.layout, n.Op)
		}
		return w.data, nil
	}
	return c.buf(n.Buf)
}

// weightOf is the registered weight of node n (an OpWeight).
func (c *CPU) weightOf(n *graph.Node) (weight, error) {
	c.mu.Lock()
	w, ok := c.weights[n.Weight]
	c.mu.Unlock()
	if !ok {
		return weight{}, fmt.Errorf("cpu: weight %q is not registered here", n.Weight)
	}
	return w, nil
}

// matWeight is bytesOf for a mat-mul's weight operand, which may be a
// repacked weight (or a view of one that starts and ends on its groups of
// rows); lay is its layout.
func (c *CPU) matWeight(n *graph.Node) (w []byte, lay quant.Layout, err error) {
	base, off := n, int64(0)
	for ; base.Op == graph.OpView; base = base.Src[0] {
		off += base.ViewOff
	}
	if base.Op != graph.OpWeight {
		w, err := c.bytesOf(n)
		return w, quant.LayoutFile, err
	}
	bw, err := c.weightOf(base)
	if err != nil {
		return nil, quant.LayoutFile, err
	}
	if bw.layout == quant.LayoutFile {
		w, err := c.bytesOf(n)
		return w, quant.LayoutFile, err
	}
	if base != n {
		if w, err = viewOf(n, bw.data, off); err != nil {
			return nil, quant.LayoutFile, err
		}
		if !groupView(bw, off, int64(len(w))) {
			return nil, quant.LayoutFile, fmt.Errorf("cpu: view %q of %d bytes at %d splits a group of %d rows of the %s weight %q", n.Name, len(w), off, bw.layout.GroupRows(), bw.layout, base.Weight)
		}
		return w, bw.layout, nil
	}
	return bw.data, bw.layout, nil
}

// viewOf is view n's bytes, off bytes into the weight w.
func viewOf(n *graph.Node, w []byte, off int64) ([]byte, error) {
	if off < 0 || off+n.Bytes() > int64(len(w)) {
		return nil, fmt.Errorf("cpu: view %q of %d bytes at %d outside weight %q", n.Name, n.Bytes(), off, n.Base().Name)
	}
	return w[off : off+n.Bytes()], nil
}

func f32s(b []byte) []float32 { return memview.As[float32](b) }

func i32s(b []byte) []int32 { return memview.As[int32](b) }

func u16s(b []byte) []uint16 { return memview.As[uint16](b) }

// Compute runs each node on the calling goroutine (synchronously),
// checking ctx whenever the block changes.
func (c *CPU) Compute(ctx context.Context, nodes []*graph.Node) error {
	layer := graph.Unblocked
	for i := 0; i < len(nodes); i++ {
		n := nodes[i]
		if i > 0 && n.Layer != layer {
			if err := ctx.Err(); err != nil {
				return err
			}
		}
		layer = n.Layer
		if i+1 < len(nodes) {
			// The next node's norm weight or bias, loaded while this
			// one runs.
			c.prefetchSmallWeights(nodes[i+1])
		}
		if k := sharedRun(nodes[i:]); k > 1 {
			// One-token mat-muls of one input in one pool call (shared.go).
			if err := c.matMulShared(nodes[i : i+k]); err != nil {
				return fmt.Errorf("cpu: %s: %w", n, err)
			}
			i += k - 1
			continue
		}
		if err := c.compute(n); err != nil {
			return fmt.Errorf("cpu: %s: %w", n, err)
		}
	}
	return nil
}

// maxPrefetchWeight is the largest weight prefetchSmallWeights loads.
const maxPrefetchWeight = 64 << 10

// prefetchSmallWeights starts loading the small weight operands of an
// element-wise node n (norm weights, biases: at most maxPrefetchWeight
// bytes) into the cache; Compute issues it while the node before n runs.
// A decode step's mat-vecs stream the whole model through the caches, so
// these weights come from memory at every step: the Mul by a norm weight
// (8 KiB on the 1B synth model) took ~1.5 µs a call in a decode step and
// 0.25 µs with its weight in cache. Prefetched during the RMSNorm before
// it, the Muls of a 1B Q4_0 step took 0.026 ms of it instead of 0.051
// (0.039 instead of 0.079 in the VM's fast memory state; in-process op
// timers, bench/results/2026-12-07-s22-cpu). Prefetching every small
// operand and the output of the next node as well cost more in look-ups
// than it saved.
func (c *CPU) prefetchSmallWeights(n *graph.Node) {
	if n.Op != graph.OpMul && n.Op != graph.OpAdd {
		return
	}
	for _, s := range n.Src[:2] {
		if s == nil || s.Op != graph.OpWeight {
			continue
		}
		if w, err := c.weightOf(s); err == nil && w.layout == quant.LayoutFile && len(w.data) <= maxPrefetchWeight {
			quant.Prefetch(w.data)
		}
	}
}

func (c *CPU) compute(n *graph.Node) error {
	out, err := c.bytesOf(n)
	if err != nil {
		return err
	}
	var src [4][]byte
	lay := quant.LayoutFile // src[0]'s layout, a mat-mul weight
	for i, s := range n.Src {
		if s == nil {
			continue
		}
		if n.Op == graph.OpMatMul && i == 0 {
			src[i], lay, err = c.matWeight(s)
		} else {
			src[i], err = c.bytesOf(s)
		}
		if err != nil {
			return err
		}
	}
	switch n.Op {
	case graph.OpGetRows:
		return c.getRows(n, out, src[0], i32s(src[1]))
	case graph.OpRMSNorm:
		p, err := graph.ParamsOf[graph.NormParams](n)
		if err != nil {
			return err
		}
		c.rmsNorm(f32s(out), f32s(src[0]), int(n.Shape[0]), p.Eps)
	case graph.OpMul:
		if n.Src[1].Shape[0] == 1 && n.Shape[0] != 1 {
			c.mulRows(f32s(out), f32s(src[0]), f32s(src[1]), int(n.Shape[0]))
			return nil
		}
		c.broadcast(f32s(out), f32s(src[0]), f32s(src[1]), int(n.Shape[0]), false)
	case graph.OpAdd:
		c.broadcast(f32s(out), f32s(src[0]), f32s(src[1]), int(n.Shape[0]), true)
	case graph.OpMatMul:
		return c.matMul(n, f32s(out), src[0], lay, f32s(src[1]))
	case graph.OpRope:
		var freqs []float32
		if n.Src[2] != nil {
			freqs = f32s(src[2])
		}
		p, err := graph.ParamsOf[graph.RopeParams](n)
		if err != nil {
			return err
		}
		c.rope(n, p, f32s(out), f32s(src[0]), i32s(src[1]), freqs)
	case graph.OpStoreKV:
		return c.storeKV(n, out, f32s(src[1]), i32s(src[2]))
	case graph.OpAttention:
		p, err := graph.ParamsOf[graph.AttentionParams](n)
		if err != nil {
			return err
		}
		return c.attention(n, p, f32s(out), f32s(src[0]), src[1], src[2], f32s(src[3]))
	case graph.OpSwiGLU:
		c.swiglu(f32s(out), f32s(src[0]), f32s(src[1]), int(n.Shape[0]))
	default:
		return c.computeArch(n, out, src)
	}
	return nil
}

// computeArch runs the ops added with the architectures beyond llama.
func (c *CPU) computeArch(n *graph.Node, out []byte, src [4][]byte) error {
	switch n.Op {
	case graph.OpScale:
		p, err := graph.ParamsOf[graph.ScaleParams](n)
		if err != nil {
			return err
		}
		c.scale(f32s(out), f32s(src[0]), p.S)
	case graph.OpSoftCap:
		p, err := graph.ParamsOf[graph.SoftCapParams](n)
		if err != nil {
			return err
		}
		c.softCap(f32s(out), f32s(src[0]), p.Cap)
	case graph.OpGELU:
		c.gelu(f32s(out), f32s(src[0]))
	case graph.OpSigmoid:
		c.sigmoid(f32s(out), f32s(src[0]), int(n.Shape[0]))
	case graph.OpSoftMax:
		c.softMax(f32s(out), f32s(src[0]), int(n.Shape[0]))
	case graph.OpTopK:
		p, err := graph.ParamsOf[graph.TopKParams](n)
		if err != nil {
			return err
		}
		c.topK(i32s(out), f32s(src[0]), int(n.Src[0].Shape[0]), p.K)
	case graph.OpMoEWeights:
		p, err := graph.ParamsOf[graph.MoEWeightsParams](n)
		if err != nil {
			return err
		}
		return c.moeWeights(f32s(out), f32s(src[0]), i32s(src[1]), int(n.Src[0].Shape[0]), int(n.Shape[0]), p.Normalize)
	case graph.OpMatMulID:
		return c.matMulID(n, f32s(out), src[0], f32s(src[1]), i32s(src[2]))
	case graph.OpWeightedSum:
		c.weightedSum(f32s(out), f32s(src[0]), f32s(src[1]), int(n.Shape[0]), int(n.Src[0].Shape[1]))
	default:
		return fmt.Errorf("op %s has no CPU kernel", n.Op)
	}
	return nil
}

// rowBytes is the byte length of n elements of t. The graph builder checks
// every node's shape against its type, so an error here is a builder bug
// reaching the backend: it is returned, naming the type.
func rowBytes(t gguf.GGMLType, n int64) (int64, error) {
	b, err := t.RowBytes(n)
	if err != nil {
		return 0, fmt.Errorf("%d elements of %s: %w", n, t, err)
	}
	return b, nil
}
