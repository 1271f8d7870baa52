//go:build !noasm

package quant

//go:noescape
func prefetchLines(p *byte, n int)

func prefetch(b []byte) { prefetchLines(&b[0], len(b)) }
