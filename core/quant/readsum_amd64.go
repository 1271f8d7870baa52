//go:build !noasm

package quant

//go:noescape
func readSumAVX2(p *byte, n256 int) uint64

//go:noescape
func readSumAVX512(p *byte, n512 int) uint64
