// Package hugemem maps memory for large, long-read buffers (the CPU
// backend's copied weights, the bench command's bandwidth meter) in
// transparent huge pages where the system has them.
package hugemem

// Alloc returns n bytes and the function that gives them back: on Linux an
// anonymous mapping advised for huge pages (with transparent huge pages in
// "madvise" mode, 2 MiB pages: the hardware prefetchers stream across them
// and the TLB covers a row block with one entry), elsewhere, or when the
// mapping fails, the Go heap (free then does nothing).
func Alloc(n int) (buf []byte, free func()) { return alloc(n) }
