//go:build !linux

package hugemem

func alloc(n int) ([]byte, func()) { return make([]byte, n), func() {} }
