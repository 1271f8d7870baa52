package cuda

import (
	"fmt"
	"os"
	"strings"
	"unsafe"
)

// Programmatic dependent launch (PDL, compute capability 9.0 and later).
//
// Between two kernels of a stream the GPU normally drains the first before
// it starts the second: every small kernel of a decode step then costs its
// launch, its blocks' start-up and its tail, and a mat-vec after it starts
// fetching weights only when it ends. With PDL a kernel launched with the
// programmatic-serialization attribute may start as soon as every block of
// the kernel before it has executed griddepcontrol.launch_dependents; it
// then runs what does not depend on that kernel (a staged mat-vec issues
// its weight rows' copies into shared memory) and executes
// griddepcontrol.wait, which returns once the kernel before it has
// completed and its writes are visible.
//
// The kernels are compiled once, for compute_80 (kernels/generate.sh), and
// mark these two places with PTX comments (common.cuh's PDL_WAIT and
// PDL_LAUNCH): on an sm_80 target they are nothing. On a device of compute
// 9.0 or later whose driver has cuLaunchKernelEx, the loader turns the
// module into its PDL form (pdlPTX: target sm_90, the comments the two
// instructions) and every launch carries the attribute. The rule that makes
// it safe, checked on the embedded PTX by TestPTXPDLMarkers: every kernel
// executes the wait before it exits and before any global-memory access but
// the weight copies of the staged mat-vecs (which read only weights, never
// written during a step), and the launch after the wait, so at most the
// running kernel and the next one's prologue overlap, and a kernel's
// completion implies that of every kernel before it. So a kernel may also
// read, before its wait, what the kernel just before it never writes: the
// one-token attention with the rope group (attn_x_one_rope_*, whose
// predecessor, the q/k/v mat-vec, writes only q, k and v) reads the step's
// mask and cache row (inputs, copied in before the step) and copies and
// prefetches the cache rows of the other positions (written by earlier
// steps; the current row is written by this kernel, from its own values).
//
// MINFER_CUDA_PDL=0 turns it off (the plain PTX and cuLaunchKernel), for
// comparisons and diagnosis.

const (
	pdlWaitMarker   = "// minfer-pdl-wait"
	pdlLaunchMarker = "// minfer-pdl-launch"
	ptxTarget80     = ".target sm_80"
	ptxTarget90     = ".target sm_90"
)

// pdlOff reports MINFER_CUDA_PDL=0.
func pdlOff() bool { return os.Getenv("MINFER_CUDA_PDL") == "0" }

// pdlUsable: compute 9.0 or later and a driver with cuLaunchKernelEx.
func pdlUsable(ccMajor int, launchKernelEx uintptr) bool { return ccMajor >= 9 && launchKernelEx != 0 }

// pdlPTX is a compute_80 module's PDL form: its target sm_90 and its
// markers the griddepcontrol instructions (PTX ISA 7.8, which the modules
// already declare).
func pdlPTX(ptx string) (string, error) {
	if strings.Count(ptx, ptxTarget80) != 1 {
		return "", fmt.Errorf("cuda: PTX module without exactly one %q line", ptxTarget80)
	}
	r := strings.NewReplacer(ptxTarget80, ptxTarget90,
		pdlWaitMarker, "griddepcontrol.wait;",
		pdlLaunchMarker, "griddepcontrol.launch_dependents;")
	return r.Replace(ptx), nil
}

// cuLaunchAttribute and cuLaunchConfig are the driver's CUlaunchAttribute
// (an id, padding to 8 bytes, a 64-byte value union) and CUlaunchConfig.
type cuLaunchAttribute struct {
	id  uint32
	_   uint32
	val [64]byte
}

type cuLaunchConfig struct {
	gridX, gridY, gridZ    uint32
	blockX, blockY, blockZ uint32
	smem                   uint32
	_                      uint32
	stream                 uintptr
	attrs                  uintptr
	nattrs                 uint32
	_                      uint32
}

// CU_LAUNCH_ATTRIBUTE_PROGRAMMATIC_STREAM_SERIALIZATION.
const launchAttrProgrammaticSerialization = 6

// The layouts cuLaunchKernelEx reads.
var _ = [1]struct{}{}[unsafe.Sizeof(cuLaunchAttribute{})-72]
var _ = [1]struct{}{}[unsafe.Sizeof(cuLaunchConfig{})-56]

// pdlAttr is the one attribute every PDL launch carries.
var pdlAttr = func() *cuLaunchAttribute {
	a := &cuLaunchAttribute{id: launchAttrProgrammaticSerialization}
	*(*int32)(unsafe.Pointer(&a.val[0])) = 1
	return a
}()
