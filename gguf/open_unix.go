//go:build unix

package gguf

import (
	"fmt"
	"io"
	"os"

	"golang.org/x/sys/unix"
)

// pageSize is the mapping's page size (DropPages gives back whole pages).
var pageSize = unix.Getpagesize()

// Open maps path read-only and parses its index.
func Open(path string) (*File, error) {
	fd, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	defer fd.Close()
	st, err := fd.Stat()
	if err != nil {
		return nil, fmt.Errorf("gguf: %w", err)
	}
	if !st.Mode().IsRegular() {
		return nil, fmt.Errorf("gguf: %s is not a regular file", path)
	}
	size := st.Size()
	if size < headerSize {
		// Too short to be valid, and an empty file cannot be mapped: read
		// it so that Parse names the exact problem (bad magic, truncation).
		data := make([]byte, size)
		if _, err := io.ReadFull(fd, data); err != nil {
			return nil, fmt.Errorf("gguf: %w", err)
		}
		if _, err := Parse(data); err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return nil, fmt.Errorf("%s: %w", path, &FormatError{Offset: size, Msg: fmt.Sprintf("truncated: file has %d bytes, a GGUF header needs %d", size, headerSize)})
	}
	if int64(int(size)) != size {
		return nil, fmt.Errorf("gguf: %s: %d bytes cannot be mapped on this platform", path, size)
	}
	data, err := unix.Mmap(int(fd.Fd()), 0, int(size), unix.PROT_READ, unix.MAP_SHARED)
	if err != nil {
		return nil, fmt.Errorf("gguf: mmap %s: %w", path, err)
	}
	f, err := Parse(data)
	if err != nil {
		unix.Munmap(data)
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	f.Path = path
	f.closer = func() error { return unix.Munmap(data) }
	f.drop = func(b []byte) error { return unix.Madvise(b, unix.MADV_DONTNEED) }
	return f, nil
}
