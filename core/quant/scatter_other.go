//go:build !amd64 || noasm

package quant

func scatter4x8(o *[32]float32, dst []float32, stride int) { scatter4x8Go(o, dst, stride) }
