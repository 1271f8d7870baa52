package quant

import (
	"math/rand/v2"
	"sync"
	"testing"

	"github.com/minfer/minfer/gguf"
)

// BenchmarkMatVecDRAM2 is the decode mat-vec from memory on two threads:
// a 256 MiB weight (64 distinct rows of 2048, repeated) split in two
// contiguous halves, each thread walking its half with the kernels the
// backend's oneToken uses (eight rows with the token table where the kernel
// has them, else four). No pool, no barriers: the kernels' ceiling against
// `minfer bench`'s measured read bandwidth. MB/s counts the weight bytes.
func BenchmarkMatVecDRAM2(b *testing.B) {
	const n, size, threads = 2048, 256 << 20, 2
	for _, typ := range []gguf.GGMLType{gguf.TypeQ4_0, gguf.TypeQ8_0, gguf.TypeQ4_K, gguf.TypeQ6_K} {
		r := rand.New(rand.NewPCG(81, 82))
		k0, err := NewKernel(typ, n)
		if err != nil {
			b.Fatal(err)
		}
		wrb := k0.WeightRowBytes()
		rows := size / wrb &^ 63
		w := repeatedRows(b, r, typ, n, wrb, rows)
		x := quantizeRow(b, VecDotType(typ), gaussian(r, n, 1))
		out := make([]float32, rows)
		for _, lvl := range Levels() {
			if lvl == Generic {
				continue // ~1 GB/s: minutes per run
			}
			restore := ForceLevel(lvl)
			k, _ := NewKernel(typ, n)
			restore()
			var tab []byte
			if tb := k.Token1TableBytes(); tb > 0 {
				tab = make([]byte, tb)
				k.PrepareToken1(x, tab)
			}
			b.Run(lvl.String()+"/"+typ.String(), func(b *testing.B) {
				b.SetBytes(int64(len(w)))
				for b.Loop() {
					var wg sync.WaitGroup
					for t := 0; t < threads; t++ {
						wg.Add(1)
						go func(lo, hi int) {
							defer wg.Done()
							var o4 [4]float32
							var o8 [8]float32
							i := lo
							if tab != nil {
								for ; i+8 <= hi; i += 8 {
									k.Dot8RowsT(w[i*wrb:(i+8)*wrb], x, tab, &o8)
									copy(out[i:i+8], o8[:])
								}
							}
							for ; i+4 <= hi; i += 4 {
								k.Dot4Rows(w[i*wrb:(i+4)*wrb], x, &o4)
								copy(out[i:i+4], o4[:])
							}
						}(t*rows/threads, (t+1)*rows/threads)
					}
					wg.Wait()
				}
			})
		}
	}
}
