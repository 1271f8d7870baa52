package cuda

import (
	"embed"
	"io/fs"
	"path"
	"strings"
)

// The kernels are CUDA C++ in kernels/*.cu, compiled to PTX by
// kernels/generate.sh (nvcc -ptx -arch=compute_80 --fmad=false: the driver
// JITs the PTX for Ampere, Ada and Hopper alike; --fmad=false keeps every
// multiply-add rounded twice, as the CPU backend computes). The PTX is
// committed and embedded, so building Minfer needs no CUDA toolkit. Each
// .ptx starts with the sha256 of its sources; TestPTXMatchesSources fails
// when a .cu or .cuh changed without regenerating.
//
//go:generate sh kernels/generate.sh

//go:embed kernels/*.ptx
var ptxFS embed.FS

// ptxFiles maps each module's name (the .cu stem) to its PTX text.
var ptxFiles = func() map[string]string {
	out := map[string]string{}
	entries, _ := fs.Glob(ptxFS, "kernels/*.ptx")
	for _, e := range entries {
		b, err := ptxFS.ReadFile(e)
		if err != nil {
			continue
		}
		out[strings.TrimSuffix(path.Base(e), ".ptx")] = string(b)
	}
	return out
}()

// ptxHashPrefix starts the first line of every generated .ptx.
const ptxHashPrefix = "// minfer-source-sha256: "
