package quant

// Eight-row decode kernels: eight consecutive weight rows against one
// activation row, the rows' results in the lanes of one vector.

// Dot8RowsT is Dot of eight consecutive weight rows (WeightRowBytes apart
// in w) against one activation row x with its table from PrepareToken1:
// out[r] is row r's dot, bit-identical to Dot. Kernels without an
// eight-row form run Dot4RowsT twice.
func (k *Kernel) Dot8RowsT(w, x, tab []byte, out *[8]float32) {
	if k.rows8T == nil {
		lo, hi := (*[4]float32)(out[:4]), (*[4]float32)(out[4:])
		k.Dot4RowsT(w[:4*k.wrb], x, tab, lo)
		k.Dot4RowsT(w[4*k.wrb:8*k.wrb], x, tab, hi)
		return
	}
	nb := k.n / qk
	k.rows8T(w[:8*k.wrb:8*k.wrb], k.wrb, x[:k.xrb:k.xrb], tab[:nb*token1Q8_0], out)
}

// rows8TGeneric is the Go twin of the eight-row table-taking kernel: the
// one-row generic kernel on each row (the table only saves work).
func rows8TGeneric(one func(w, x []byte) float32) func(w []byte, wstride int, x, tab []byte, out *[8]float32) {
	return func(w []byte, wstride int, x, _ []byte, out *[8]float32) {
		n := len(w) - 7*wstride
		for r := range out {
			out[r] = one(w[r*wstride:r*wstride+n], x)
		}
	}
}
