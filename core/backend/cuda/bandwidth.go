package cuda

import (
	"time"
	"unsafe"
)

// CopyBandwidth measures device-to-device copy bandwidth (bytes read plus
// bytes written per second), the ceiling decode is reported against. It
// takes two buffers of size bytes for the measurement only (a benchmark
// tool, not part of a model's memory) and frees them.
func (b *Backend) CopyBandwidth(size int64) (float64, error) {
	var gbs float64
	err := b.dv.t.do(func() error {
		d := b.dv.d
		var src, dst uintptr
		if err := check("cuMemAlloc", sys(d.memAlloc, uintptr(unsafe.Pointer(&src)), uintptr(size))); err != nil {
			return err
		}
		defer sys(d.memFree, src)
		if err := check("cuMemAlloc", sys(d.memAlloc, uintptr(unsafe.Pointer(&dst)), uintptr(size))); err != nil {
			return err
		}
		defer sys(d.memFree, dst)
		if err := b.dv.memset(src, size); err != nil {
			return err
		}
		const iters = 10
		for pass := 0; pass < 3; pass++ {
			if err := b.dv.sync(); err != nil {
				return err
			}
			t0 := time.Now()
			for i := 0; i < iters; i++ {
				if err := check("cuMemcpyDtoDAsync", sys(d.memcpyDtoDAsync, dst, src, uintptr(size), b.dv.stream)); err != nil {
					return err
				}
			}
			if err := b.dv.sync(); err != nil {
				return err
			}
			if v := float64(2*size*iters) / time.Since(t0).Seconds() / 1e9; v > gbs {
				gbs = v
			}
		}
		return nil
	})
	return gbs, err
}
