// Package memview reinterprets slices of fixed-size numbers as bytes and
// back, without copying: the one place Minfer writes unsafe.Slice for a
// byte ↔ number view (inputs written to a backend, logits read back, a
// backend's buffers seen as float32 or int32).
//
// A view aliases its source: writes through either are seen by both, and
// the source must outlive the view. Byte order is the machine's own, which
// is what a backend's host buffers hold.
package memview

import "unsafe"

// Number is an element type a view may have: fixed size, no pointers.
type Number interface {
	~int8 | ~uint8 | ~int16 | ~uint16 | ~int32 | ~uint32 | ~int64 | ~uint64 | ~float32 | ~float64
}

// Bytes views s as its bytes: len(s)·size bytes; nil for an empty s.
func Bytes[T Number](s []T) []byte {
	if len(s) == 0 {
		return nil
	}
	var zero T
	return unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(s))), len(s)*int(unsafe.Sizeof(zero)))
}

// As views b as elements of T: len(b)/size of them (trailing bytes that do
// not make a whole element are left out); nil when b holds none. b must be
// aligned for T, as Go's allocations and a backend's buffers are.
func As[T Number](b []byte) []T {
	var zero T
	n := len(b) / int(unsafe.Sizeof(zero))
	if n == 0 {
		return nil
	}
	return unsafe.Slice((*T)(unsafe.Pointer(unsafe.SliceData(b))), n)
}
