package cpu

// Weights are used in place from the file's mapping by default. With
// copying on (SetCopyWeights), RegisterWeight copies each tensor into
// memory of the backend's own: on Linux an anonymous mapping advised for
// transparent huge pages (weightmem_linux.go), elsewhere the Go heap.
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

// ownCopy returns a copy of data in weight memory and a function that
// releases it.
func ownCopy(data []byte) ([]byte, func()) {
	if len(data) == 0 {
		return data, func() {}
	}
	b, free := weightAlloc(len(data))
	copy(b, data)
	return b, free
}
