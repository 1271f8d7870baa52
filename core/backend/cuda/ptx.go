package cuda

import (
	"embed"
	"fmt"
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

// Programmatic dependent launch (compute capability 9.0 on): a kernel
// launched with CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION may
// be scheduled while the kernel before it on the stream still runs, and
// waits at griddepcontrol.wait until that kernel has completed and its
// memory is visible. Started early, its blocks are resident and waiting
// when the one before ends, instead of being launched then: in a decode
// step of a few hundred small kernels that gap is a good part of the step.
//
// The committed PTX targets sm_80, which has no griddepcontrol. pdlPTX
// derives the sm_90 form of one module: the target raised, and every
// kernel entered by griddepcontrol.wait — before its first instruction,
// so no load or store of it can meet the kernel before — followed by
// griddepcontrol.launch_dependents, which lets the next kernel be
// scheduled as soon as every block of this one is past its wait (the
// next kernel's own wait still holds it until this one completes). The
// kernel bodies are untouched; numerics are the sm_80 PTX's.
func pdlPTX(src string) (string, error) {
	const from, to = "\n.target sm_80\n", "\n.target sm_90\n"
	if strings.Count(src, from) != 1 {
		return "", fmt.Errorf("cuda: PTX without one %q line", strings.TrimSpace(from))
	}
	src = strings.Replace(src, from, to, 1)
	var b strings.Builder
	b.Grow(len(src) + 4096)
	inEntry, entries, entered := false, 0, 0
	for line := range strings.Lines(src) {
		b.WriteString(line)
		t := strings.TrimSpace(line)
		switch {
		case strings.Contains(t, ".entry "):
			inEntry = true
			entries++
		case inEntry && t == "{":
			b.WriteString("\tgriddepcontrol.wait;\n\tgriddepcontrol.launch_dependents;\n")
			inEntry = false
			entered++
		}
	}
	if entries == 0 || entered != entries {
		return "", fmt.Errorf("cuda: PTX with %d entries, %d bodies found", entries, entered)
	}
	return b.String(), nil
}
