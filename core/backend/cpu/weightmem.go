package cpu

import "github.com/minfer/minfer/internal/hugemem"

// Weights are used in place from the file's mapping by default. With
// copying on (SetCopyWeights), RegisterWeight copies each tensor into
// memory of the backend's own: on Linux an anonymous mapping advised for
// transparent huge pages (internal/hugemem), elsewhere the Go heap.
// Copied weights are memory the host must have: the caller decides and
// charges them (core.Load, cpuweights.go).

// SetCopyWeights makes the weights registered from now on copies.
func (c *CPU) SetCopyWeights(on bool) {
	c.mu.Lock()
	c.copyWeights = on
	c.mu.Unlock()
}

// CopiesWeights reports whether registered weights are copied.
func (c *CPU) CopiesWeights() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.copyWeights
}

// weightChunk is the size of the regions copies are packed into. One
// region per tensor would round every small tensor (a norm's few KiB) up
// to a huge page of its own, memory the budget never charged; packed, a
// load wastes at most the tail of each region, whose pages are never
// touched.
const weightChunk = 64 << 20

// weightArena packs copies into regions of weightChunk bytes (a tensor
// larger than that gets a region of its own), each copy 64-byte aligned.
type weightArena struct {
	cur   []byte
	off   int
	frees []func()
}

// copyOf returns a copy of data in the arena.
func (a *weightArena) copyOf(data []byte) []byte {
	return a.copyWith(data, func(dst, src []byte) { copy(dst, src) })
}

// copyWith is copyOf with fill writing the copy (dst) from data (src, of
// the same length).
func (a *weightArena) copyWith(data []byte, fill func(dst, src []byte)) []byte {
	if len(data) == 0 {
		return data
	}
	const align = 64
	off := (a.off + align - 1) &^ (align - 1)
	if off+len(data) > len(a.cur) {
		b, free := hugemem.Alloc(max(len(data), weightChunk))
		a.frees = append(a.frees, free)
		a.cur, off = b, 0
	}
	a.off = off + len(data)
	b := a.cur[off : off+len(data) : off+len(data)]
	fill(b, data)
	return b
}

// release unmaps every region.
func (a *weightArena) release() {
	for _, f := range a.frees {
		f()
	}
	*a = weightArena{}
}
