package core

// The device backends core.Load can open, registered by device kind
// (backend.Register in each package's init). CUDA is pure Go (purego): it
// costs nothing on a machine without an NVIDIA driver, where opening it is
// a fallback with the reason.
import (
	"github.com/minfer/minfer/core/backend"
	_ "github.com/minfer/minfer/core/backend/cuda"
)

// ComputeStatus says, for every registered device backend, whether it can
// compute on this machine and why not ("CUDA 13.0 driver, compute 9.0:
// usable"), as `minfer devices` prints it.
func ComputeStatus() []string {
	var out []string
	for _, k := range backend.Kinds() {
		d, _ := backend.Lookup(k)
		if d.Status == nil {
			continue
		}
		_, line := d.Status()
		out = append(out, line)
	}
	return out
}
