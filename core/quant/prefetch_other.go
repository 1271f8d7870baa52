//go:build noasm || !amd64

package quant

func prefetch([]byte) {}
