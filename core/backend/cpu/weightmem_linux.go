package cpu

import "golang.org/x/sys/unix"

// weightAlloc maps n bytes of anonymous memory advised for huge pages
// (with transparent huge pages in "madvise" mode, 2 MiB pages: the
// hardware prefetchers stream across them and the TLB covers a row block
// with one entry). A failed mapping falls back to the heap.
func weightAlloc(n int) ([]byte, func()) {
	const huge = 2 << 20
	size := (n + huge - 1) / huge * huge
	m, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return make([]byte, n), func() {}
	}
	_ = unix.Madvise(m, unix.MADV_HUGEPAGE) // advice: without it, 4 KiB pages
	return m[:n:n], func() { unix.Munmap(m) }
}
