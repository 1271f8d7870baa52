package cuda

import (
	"fmt"
	"testing"
	"time"
	"unsafe"

	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
)

// BenchmarkMatVec: one token's mat-vec kernel alone, staged (mvs_*, the
// default; for long K-quant rows the split mvk_*, whose other block
// heights split2 and split8 and the pipelined mvp_* piped compare with it)
// and v1 (mvf_*), over the row lengths of the 1.1B (Q4_0 2048 and 5632,
// Q6_K output 2048) and 8B (Q4_K 4096 and 14336, Q6_K output 4096 and
// ffn_down 14336) models and Q8_0. Each weight is about 32 MiB (as many rows as
// that takes) and the launches cycle through eight of them, 256 MiB, more
// than the L2 holds, so the rows come from DRAM. The weights and
// activations are zero bytes: these kernels take the same time whatever
// the values. It reports the weights' GB/s (wall time of b.N queued
// launches and one synchronization).
func BenchmarkMatVec(b *testing.B) {
	if _, err := loadDriver(); err != nil {
		b.Skipf("no CUDA driver: %v", err)
	}
	g, err := Open(Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer g.Close()
	for _, s := range []struct {
		wt   gguf.GGMLType
		cols int64
	}{
		{gguf.TypeQ4_0, 2048}, {gguf.TypeQ4_0, 5632}, {gguf.TypeQ6_K, 2048},
		{gguf.TypeQ4_K, 4096}, {gguf.TypeQ4_K, 14336}, {gguf.TypeQ6_K, 4096},
		{gguf.TypeQ8_0, 4096}, {gguf.TypeQ8_0, 14336}, {gguf.TypeQ6_K, 14336},
	} {
		for _, v := range []struct {
			name      string
			v1, noSpl bool
			rows      int64
		}{
			{"split4", false, false, mvkRows}, {"v1", true, false, mvkRows},
			// long rows: the split kernel's other block heights, and the pipelined kernel (MINFER_CUDA_DECODE=mvsplit)
			{"split2", false, false, 2}, {"split8", false, false, 8}, {"piped", false, true, mvkRows},
		} {
			if v.name != "staged" && v.name != "v1" {
				if _, ok := splitMatVec[s.wt]; !ok || s.cols/256 < pipedMinBlocks {
					continue
				}
			}
			b.Run(fmt.Sprintf("%s/%d/%s", s.wt, s.cols, v.name), func(b *testing.B) {
				defer func(v1, off bool, r int64) { g.mvV1, g.off.mvSplit, g.splitRows = v1, off, r }(g.mvV1, g.off.mvSplit, g.splitRows)
				g.mvV1, g.off.mvSplit, g.splitRows = v.v1, v.noSpl, v.rows
				benchMatVec(b, g, s.wt, s.cols)
			})
		}
	}
}

func benchMatVec(b *testing.B, g *Backend, wt gguf.GGMLType, cols int64) {
	const ring, target = 8, 32 << 20
	wrb, err := wt.RowBytes(cols)
	if err != nil {
		b.Fatal(err)
	}
	xrb, err := quant.VecDotType(wt).RowBytes(cols)
	if err != nil {
		b.Fatal(err)
	}
	rows := (target/wrb + 7) &^ 7
	wbytes := rows * wrb
	dv := g.dv
	var ws [ring]uintptr
	var out uintptr
	var ml mvLaunch
	err = dv.t.do(func() error {
		for i := range ws {
			if err := check("cuMemAlloc", sys(dv.d.memAlloc, uintptr(unsafe.Pointer(&ws[i])), uintptr(wbytes))); err != nil {
				return err
			}
			if err := dv.memset(ws[i], wbytes); err != nil {
				return err
			}
		}
		if err := check("cuMemAlloc", sys(dv.d.memAlloc, uintptr(unsafe.Pointer(&out)), uintptr(rows*4))); err != nil {
			return err
		}
		if err := dv.memset(dv.work, xrb); err != nil {
			return err
		}
		ml = g.matVecKernel(wt, typeKernels[wt], ws[0], wrb, xrb, 1, rows)
		return dv.sync()
	})
	defer dv.t.do(func() error {
		for _, w := range ws {
			if w != 0 {
				sys(dv.d.memFree, w)
			}
		}
		if out != 0 {
			sys(dv.d.memFree, out)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	launch := func(n int) error {
		for i := 0; i < n; i++ {
			if err := dv.launch(&g.l, ml.fn, grid1((rows+ml.rows-1)/ml.rows), block1(ml.threads), ml.smem,
				ws[i%ring], dv.work, out, i32(rows), i32(blocksPerRow(wt, cols)), i64(wrb), i64(xrb), i32(1)); err != nil {
				return err
			}
		}
		return dv.sync()
	}
	if err := dv.t.do(func() error { return launch(2 * ring) }); err != nil { // warm up
		b.Fatal(err)
	}
	b.Logf("%s: %d rows of %d bytes, %s, %d threads, %d bytes of shared memory", wt, rows, wrb, ml.fn, ml.threads, ml.smem)
	b.SetBytes(wbytes)
	b.ResetTimer()
	t0 := time.Now()
	if err := dv.t.do(func() error { return launch(b.N) }); err != nil {
		b.Fatal(err)
	}
	el := time.Since(t0)
	b.ReportMetric(float64(wbytes)*float64(b.N)/el.Seconds()/1e9, "GB/s")
	b.ReportMetric(el.Seconds()/float64(b.N)*1e6, "us/launch")
}
