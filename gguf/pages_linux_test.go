//go:build linux

package gguf

import (
	"io"
	"os"
	"path/filepath"
	"testing"
	"unsafe"

	"golang.org/x/sys/unix"
)

// residentPages counts the pages of b (part of a file mapping) that are in
// the page cache, using mincore(2).
func residentPages(t *testing.T, b []byte) (resident, total int) {
	t.Helper()
	page := os.Getpagesize()
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	base := start &^ uintptr(page-1)
	length := start + uintptr(len(b)) - base
	vec := make([]byte, (int(length)+page-1)/page)
	_, _, errno := unix.Syscall(unix.SYS_MINCORE, base, length, uintptr(unsafe.Pointer(&vec[0])))
	if errno != 0 {
		t.Skipf("mincore: %v", errno)
	}
	for _, v := range vec {
		resident += int(v & 1)
	}
	return resident, len(vec)
}

// TestOpenLeavesDataPagesAlone: Open parses the index only, so after evicting
// the file from the page cache, opening it must not bring the tensor data
// back. Reading the data afterwards proves the measurement sees pages.
func TestOpenLeavesDataPagesAlone(t *testing.T) {
	if testing.Short() {
		t.Skip("writes a 64 MiB file")
	}
	// Far larger than the kernel's read-around window (read_ahead_kb is
	// 8 MiB on some virtual disks), so a read of the index cannot pull in
	// most of the data.
	const dataBytes = 64 << 20
	path := filepath.Join(t.TempDir(), "big.gguf")
	b := NewBuilder()
	b.SetString("general.architecture", "llama")
	chunk := make([]byte, 1<<20)
	for i := range chunk {
		chunk[i] = byte(i)
	}
	err := b.AddTensorFunc("big", TypeI8, []int64{dataBytes}, func(w io.Writer) error {
		for range dataBytes / len(chunk) {
			if _, err := w.Write(chunk); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := b.WriteFile(path); err != nil { // WriteFile syncs, so the pages are clean
		t.Fatal(err)
	}
	fd, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := unix.Fadvise(int(fd.Fd()), 0, 0, unix.FADV_DONTNEED); err != nil {
		t.Skipf("fadvise: %v", err)
	}
	probe, err := unix.Mmap(int(fd.Fd()), 0, dataBytes+4096, unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		t.Skipf("mmap: %v", err)
	}
	before, total := residentPages(t, probe)
	unix.Munmap(probe)
	fd.Close()
	if before > total/10 {
		t.Skipf("page cache kept %d of %d pages after FADV_DONTNEED; cannot measure here", before, total)
	}

	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	ti, _ := f.Tensor("big")
	data, err := f.TensorData(ti)
	if err != nil {
		t.Fatal(err)
	}
	resident, total := residentPages(t, data)
	// The kernel reads around the index page it faults in; that window is
	// normal, the whole data section is not.
	if limit := total / 2; resident > limit {
		t.Errorf("after Open, %d of %d tensor data pages are resident (limit %d): Open read the data", resident, total, limit)
	}
	var sum byte
	for i := 0; i < len(data); i += os.Getpagesize() {
		sum += data[i]
	}
	if after, _ := residentPages(t, data); after < total*9/10 {
		t.Skipf("mincore reports %d of %d pages resident after reading them all; cannot measure here (%d)", after, total, sum)
	}
	t.Logf("resident after Open: %d of %d data pages", resident, total)
}
