package hugemem

import "golang.org/x/sys/unix"

func alloc(n int) ([]byte, func()) {
	const huge = 2 << 20
	size := (n + huge - 1) / huge * huge
	m, err := unix.Mmap(-1, 0, size, unix.PROT_READ|unix.PROT_WRITE, unix.MAP_PRIVATE|unix.MAP_ANONYMOUS)
	if err != nil {
		return make([]byte, n), func() {}
	}
	_ = unix.Madvise(m, unix.MADV_HUGEPAGE) // advice: without it, 4 KiB pages
	return m[:n:n], func() { _ = unix.Munmap(m) }
}
