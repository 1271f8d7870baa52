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
// memory is visible. What it does before the wait overlaps the kernel
// before: a mat-vec's weights stream in while the norm or attention kernel
// ahead of it still runs.
//
// The committed PTX targets sm_80, which has no griddepcontrol. pdlPTX
// derives the sm_90 form of one module: the target raised, and in each
// kernel the wait placed — where the source marks it (common.cuh's
// PDL_WAIT, a comment in the sm_80 PTX), else before the kernel's first
// instruction, so nothing it does can meet the kernel before. Each kernel
// also starts with griddepcontrol.launch_dependents, which lets the next
// kernel be scheduled as soon as every block of this one has begun (that
// one's own wait still holds it until this one completes). The kernel
// bodies are otherwise untouched; numerics are the sm_80 PTX's.
func pdlPTX(src string) (string, error) {
	const from, to = "\n.target sm_80\n", "\n.target sm_90\n"
	if strings.Count(src, from) != 1 {
		return "", fmt.Errorf("cuda: PTX without one %q line", strings.TrimSpace(from))
	}
	src = strings.Replace(src, from, to, 1)
	lines := strings.SplitAfter(src, "\n")
	var b strings.Builder
	b.Grow(len(src) + 8192)
	entries, entered := 0, 0
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		b.WriteString(line)
		if strings.Contains(line, pdlMark) {
			return "", fmt.Errorf("cuda: PTX line %d: %s outside a kernel body", i+1, pdlMark)
		}
		if !strings.Contains(line, ".entry ") {
			continue
		}
		entries++
		// The body: from its "{" line to the "}" that closes it (both
		// in the first column, as nvcc writes them).
		open := i + 1
		for open < len(lines) && strings.TrimSpace(lines[open]) != "{" {
			open++
		}
		end := open + 1
		for end < len(lines) && strings.TrimRight(lines[end], "\r\n") != "}" {
			end++
		}
		if open >= len(lines) || end >= len(lines) {
			break
		}
		marked := false
		for _, l := range lines[open+1 : end] {
			if strings.Contains(l, pdlMark) {
				marked = true
				break
			}
		}
		for _, l := range lines[i+1 : open+1] {
			b.WriteString(l)
		}
		b.WriteString("\tgriddepcontrol.launch_dependents;\n")
		if !marked {
			b.WriteString("\tgriddepcontrol.wait;\n")
		}
		for _, l := range lines[open+1 : end] {
			if strings.Contains(l, pdlMark) {
				l = "\tgriddepcontrol.wait;\n"
			}
			b.WriteString(l)
		}
		i = end - 1
		entered++
	}
	if entries == 0 || entered != entries {
		return "", fmt.Errorf("cuda: PTX with %d entries, %d bodies found", entries, entered)
	}
	return b.String(), nil
}

// pdlMark is what PDL_WAIT leaves in the sm_80 PTX.
const pdlMark = "// minfer:griddepcontrol.wait"
