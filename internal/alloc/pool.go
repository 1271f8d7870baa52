package alloc

import (
	"errors"
	"fmt"
	"sort"
	"sync"
)

// BufID names a buffer inside one backend.
type BufID int32

// Buffers is what the allocator needs from a backend: create and free raw
// buffers, and say how many weight bytes it holds resident.
type Buffers interface {
	Name() string
	AllocBuffer(size int64) (BufID, error)
	FreeBuffer(id BufID) error
	// WeightsBytes is what the backend actually registered as weights:
	// mmap-backed views and copies alike.
	WeightsBytes() int64
}

// BufRef locates a node's bytes. Len is the logical length: the buffer
// behind it may be a larger class size, and every fill and read is windowed
// to Len.
type BufRef struct {
	Backend int   // index of the backend in the allocator
	ID      BufID // the backend's buffer
	Class   int64 // the pool class (0: an exact-size buffer)
	Off     int64 // byte offset of the window inside the buffer (views)
	Len     int64 // logical length in bytes
}

// Valid reports whether the ref names a buffer.
func (r BufRef) Valid() bool { return r.Len > 0 || r.Class > 0 || r.ID != 0 }

// ErrRefused marks every budget refusal.
var ErrRefused = errors.New("alloc: over budget")

// Refusal is the gate's answer when weights + pooled + request > budget.
type Refusal struct {
	Backend string
	What    string // what was being allocated
	Weights int64
	Pooled  int64
	Request int64
	Budget  int64
}

func (r *Refusal) Error() string {
	return fmt.Sprintf("not enough memory on %s for %s: weights %s + pooled %s + request %s > budget %s",
		r.Backend, r.What, MiB(r.Weights), MiB(r.Pooled), MiB(r.Request), MiB(r.Budget))
}

func (r *Refusal) Unwrap() error { return ErrRefused }

// Over is by how many bytes the request misses the budget.
func (r *Refusal) Over() int64 { return r.Weights + r.Pooled + r.Request - r.Budget }

// MemoryReport is the accounting surface of one backend.
type MemoryReport struct {
	Backend         string
	PoolBytes       int64 // what the pools hold: grows only when a buffer is created
	LiveBytes       int64 // pool bytes in use by the current graph
	PeakLiveBytes   int64
	PersistentBytes int64 // KV regions (part of PoolBytes)
	FixedBytes      int64 // charged outside buffers: a device's context, modules, workspace (part of PoolBytes)
	WeightsBytes    int64
	Budget          Budget
	IdleSlots       int   // reserved class buffers not in use now
	ReservedClasses int   // distinct classes in the reservation table
	AllocCount      int64 // AllocBuffer calls so far (CPU's twin of CUDA's PoolGen)
}

// HeadroomBytes is what the gate would still admit; -1 when unlimited.
func (m MemoryReport) HeadroomBytes() int64 {
	if !m.Budget.Limited {
		return -1
	}
	return m.Budget.Bytes - m.WeightsBytes - m.PoolBytes
}

// slot is one class buffer in the reservation table.
type slot struct {
	id   BufID
	busy bool
}

// exactBuf is a staging or persistent buffer, allocated at its exact size.
type exactBuf struct {
	id   BufID
	size int64
	busy bool
}

type pool struct {
	be       Buffers
	budget   Budget
	warned   bool
	slots    map[int64][]slot // reservation table: class → slots, slot index is the id order
	staging  []exactBuf
	persist  map[BufID]int64
	poolB    int64
	liveB    int64
	peakB    int64
	persistB int64
	fixedB   int64
	allocs   int64
}

// GraphAllocator owns the pools of every backend of a loaded model.
// It is used by one goroutine at a time (the model's worker); the mutex only
// keeps reports from other goroutines consistent.
type GraphAllocator struct {
	mu    sync.Mutex
	pools []*pool
	// gen counts the changes to any pool (Gen).
	gen uint64
	// Logf prints the once-only warnings (a failed device query).
	Logf func(format string, args ...any)
}

// NewGraphAllocator returns an allocator with no backends.
func NewGraphAllocator() *GraphAllocator { return &GraphAllocator{} }

// AddBackend registers a backend with its budget and returns its index.
func (a *GraphAllocator) AddBackend(be Buffers, b Budget) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	a.pools = append(a.pools, &pool{be: be, budget: b, slots: map[int64][]slot{}, persist: map[BufID]int64{}})
	return len(a.pools) - 1
}

// SetMemoryBudget replaces backend b's budget (the CPU is unbounded until
// this is called).
func (a *GraphAllocator) SetMemoryBudget(b int, bud Budget) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	a.pools[b].budget = bud
	a.pools[b].warned = false
}

// NumBackends is the number of registered backends.
func (a *GraphAllocator) NumBackends() int { return len(a.pools) }

// Backend returns backend b's buffers.
func (a *GraphAllocator) Backend(b int) Buffers { return a.pools[b].be }

// gate checks weights + pooled + request <= budget before anything is
// asked of the backend.
func (a *GraphAllocator) gate(p *pool, request int64, what string) error {
	if !p.budget.Limited {
		if p.budget.Warning != "" && !p.warned {
			p.warned = true
			if a.Logf != nil {
				a.Logf("%s: %s", p.be.Name(), p.budget.Warning)
			}
		}
		return nil
	}
	w := p.be.WeightsBytes()
	if w+p.poolB+request > p.budget.Bytes {
		return &Refusal{Backend: p.be.Name(), What: what, Weights: w, Pooled: p.poolB, Request: request, Budget: p.budget.Bytes}
	}
	return nil
}

// Admits reports whether the gate would admit request more bytes on b now,
// without allocating: the pre-flight check for plans.
func (a *GraphAllocator) Admits(b int, request int64, what string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.gate(a.pools[b], request, what)
}

// Gen counts the changes to the pools: equal values mean no buffer was
// allocated, freed, taken or given back in between.
func (a *GraphAllocator) Gen() uint64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.gen
}

// Reacquire takes back the pool and staging buffers refs name, as
// AllocInPool and AllocStaging gave them: a graph whose placement walk
// would repeat itself exactly (nothing changed since it gave them back,
// Gen) takes the buffers its walk would end holding without walking. It
// changes nothing and returns false when one of them is not idle.
func (a *GraphAllocator) Reacquire(refs []BufRef) bool {
	a.mu.Lock()
	defer a.mu.Unlock()
	find := func(r BufRef) (s *slot, e *exactBuf) {
		p := a.pools[r.Backend]
		if r.Class > 0 {
			for i, sl := range p.slots[r.Class] {
				if sl.id == r.ID {
					return &p.slots[r.Class][i], nil
				}
			}
			return nil, nil
		}
		for i := range p.staging {
			if p.staging[i].id == r.ID {
				return nil, &p.staging[i]
			}
		}
		return nil, nil
	}
	for _, r := range refs {
		if r.Backend < 0 || r.Backend >= len(a.pools) {
			return false
		}
		s, e := find(r)
		if s == nil && e == nil || s != nil && s.busy || e != nil && e.busy {
			return false
		}
	}
	a.gen++
	for _, r := range refs {
		p := a.pools[r.Backend]
		if s, e := find(r); s != nil {
			s.busy = true
			p.use(r.Class)
		} else {
			e.busy = true
			p.use(e.size)
		}
	}
	return true
}

// AllocInPool gives a buffer of at least n bytes from backend b's pool.
// An idle buffer of the same class is reused (the smallest slot first, so a
// rebuilt graph lands on the same slots); only when none is idle is the gate
// checked and the backend asked for a new buffer.
func (a *GraphAllocator) AllocInPool(b int, n int64) (BufRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	p := a.pools[b]
	class := ClassSize(n)
	if class == 0 {
		return BufRef{}, fmt.Errorf("alloc: %s: request of %d bytes", p.be.Name(), n)
	}
	slots := p.slots[class]
	for i := range slots {
		if !slots[i].busy {
			slots[i].busy = true
			p.use(class)
			return BufRef{Backend: b, ID: slots[i].id, Class: class, Len: n}, nil
		}
	}
	if err := a.gate(p, class, fmt.Sprintf("a %s activation buffer", MiB(class))); err != nil {
		return BufRef{}, err
	}
	id, err := p.be.AllocBuffer(class)
	if err != nil {
		return BufRef{}, fmt.Errorf("alloc: %s: allocating %d bytes: %w", p.be.Name(), class, err)
	}
	p.allocs++
	p.poolB += class
	p.slots[class] = append(slots, slot{id: id, busy: true})
	p.use(class)
	return BufRef{Backend: b, ID: id, Class: class, Len: n}, nil
}

func (p *pool) use(n int64) {
	p.liveB += n
	p.peakB = max(p.peakB, p.liveB)
}

// Release returns a pool buffer to the reservation table.
func (a *GraphAllocator) Release(r BufRef) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	p := a.pools[r.Backend]
	if r.Class > 0 {
		slots := p.slots[r.Class]
		for i := range slots {
			if slots[i].id == r.ID && slots[i].busy {
				slots[i].busy = false
				p.liveB -= r.Class
				return
			}
		}
		return
	}
	for i := range p.staging {
		if p.staging[i].id == r.ID && p.staging[i].busy {
			p.staging[i].busy = false
			p.liveB -= p.staging[i].size
			return
		}
	}
}

// AllocStaging gives an exact-size buffer for a copy across a backend
// boundary. It is charged to PoolBytes like the pool, reused when an idle
// one of the same size exists.
func (a *GraphAllocator) AllocStaging(b int, n int64) (BufRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	p := a.pools[b]
	for i := range p.staging {
		if !p.staging[i].busy && p.staging[i].size == n {
			p.staging[i].busy = true
			p.use(n)
			return BufRef{Backend: b, ID: p.staging[i].id, Len: n}, nil
		}
	}
	if err := a.gate(p, n, fmt.Sprintf("a %s staging buffer", MiB(n))); err != nil {
		return BufRef{}, err
	}
	id, err := p.be.AllocBuffer(n)
	if err != nil {
		return BufRef{}, fmt.Errorf("alloc: %s: allocating %d staging bytes: %w", p.be.Name(), n, err)
	}
	p.allocs++
	p.poolB += n
	p.staging = append(p.staging, exactBuf{id: id, size: n, busy: true})
	p.use(n)
	return BufRef{Backend: b, ID: id, Len: n}, nil
}

// AllocPersistent gives an exact-size buffer that lives until
// FreePersistent (the KV cache regions). It is gated and charged like the
// pool, since it takes the same device memory.
func (a *GraphAllocator) AllocPersistent(b int, n int64, what string) (BufRef, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	p := a.pools[b]
	if err := a.gate(p, n, what); err != nil {
		return BufRef{}, err
	}
	id, err := p.be.AllocBuffer(n)
	if err != nil {
		return BufRef{}, fmt.Errorf("alloc: %s: allocating %d bytes for %s: %w", p.be.Name(), n, what, err)
	}
	p.allocs++
	p.poolB += n
	p.persistB += n
	p.persist[id] = n
	return BufRef{Backend: b, ID: id, Len: n}, nil
}

// ChargeFixed charges n bytes the backend took outside any buffer (a
// device context, loaded modules, a workspace) to backend b's pool, through
// the gate. They stay charged until Close.
func (a *GraphAllocator) ChargeFixed(b int, n int64, what string) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	p := a.pools[b]
	if err := a.gate(p, n, what); err != nil {
		return err
	}
	p.poolB += n
	p.fixedB += n
	return nil
}

// FreePersistent releases a persistent buffer.
func (a *GraphAllocator) FreePersistent(r BufRef) error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	p := a.pools[r.Backend]
	n, ok := p.persist[r.ID]
	if !ok {
		return fmt.Errorf("alloc: %s: buffer %d is not persistent", p.be.Name(), r.ID)
	}
	delete(p.persist, r.ID)
	p.poolB -= n
	p.persistB -= n
	return p.be.FreeBuffer(r.ID)
}

// Close frees every pool, staging and persistent buffer.
func (a *GraphAllocator) Close() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.gen++
	var first error
	keep := func(err error) {
		if err != nil && first == nil {
			first = err
		}
	}
	for _, p := range a.pools {
		for _, ss := range p.slots {
			for _, s := range ss {
				keep(p.be.FreeBuffer(s.id))
			}
		}
		for _, s := range p.staging {
			keep(p.be.FreeBuffer(s.id))
		}
		for id := range p.persist {
			keep(p.be.FreeBuffer(id))
		}
		p.slots, p.staging, p.persist = map[int64][]slot{}, nil, map[BufID]int64{}
		p.poolB, p.liveB, p.persistB, p.fixedB = 0, 0, 0, 0
	}
	return first
}

// MemoryReport is the accounting of backend b now.
func (a *GraphAllocator) MemoryReport(b int) MemoryReport {
	a.mu.Lock()
	defer a.mu.Unlock()
	p := a.pools[b]
	r := MemoryReport{
		Backend: p.be.Name(), PoolBytes: p.poolB, LiveBytes: p.liveB, PeakLiveBytes: p.peakB,
		PersistentBytes: p.persistB, FixedBytes: p.fixedB, WeightsBytes: p.be.WeightsBytes(), Budget: p.budget, AllocCount: p.allocs,
	}
	for _, ss := range p.slots {
		if len(ss) > 0 {
			r.ReservedClasses++
		}
		for _, s := range ss {
			if !s.busy {
				r.IdleSlots++
			}
		}
	}
	return r
}

// PoolLen is the number of buffers the pool of backend b has created for
// class (the probe that shows a recycled buffer is not charged twice).
func (a *GraphAllocator) PoolLen(b int, class int64) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return len(a.pools[b].slots[class])
}

// Classes lists backend b's reserved classes, ascending.
func (a *GraphAllocator) Classes(b int) []int64 {
	a.mu.Lock()
	defer a.mu.Unlock()
	var out []int64
	for c := range a.pools[b].slots {
		out = append(out, c)
	}
	sort.Slice(out, func(i, j int) bool { return out[i] < out[j] })
	return out
}
