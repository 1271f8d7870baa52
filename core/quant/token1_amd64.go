//go:build !noasm

package quant

// token1Q8_0AVX2x is token1Q8_0AVX2 over whole rows (kernelSet.token1Q8_0).
func token1Q8_0AVX2x(x, tab []byte) {
	nb := len(tab) / token1Q8_0
	if nb == 0 {
		return
	}
	_ = x[nb*bytesQ80-1]
	token1Q8_0AVX2(&x[0], &tab[0], nb)
}

//go:noescape
func token1Q8_0AVX2(x, tab *byte, nb int)
