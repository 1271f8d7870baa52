package core

import (
	"unsafe"

	"golang.org/x/sys/unix"
)

// meterBuffer maps n bytes of anonymous memory advised for huge pages, as
// the CPU backend maps the weights it copies (weightmem_linux.go): the
// meter reads memory laid out as decode reads it. free unmaps it; a
// failed mapping falls back to the heap.
func meterBuffer(n int) (buf []float32, free func()) {
	const huge = 2 << 20
	size := (n + huge - 1) / huge * huge
	m, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return make([]float32, n/4), func() {}
	}
	_ = unix.Madvise(m, unix.MADV_HUGEPAGE)
	return unsafe.Slice((*float32)(unsafe.Pointer(&m[0])), n/4), func() { _ = unix.Munmap(m) }
}
