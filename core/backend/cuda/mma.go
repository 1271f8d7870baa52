package cuda

import (
	"fmt"
	"os"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
)

// Prefill mat-muls on the tensor cores (kernels/mma.cu): for batches of at
// least mmqMinTokens tokens, the activations are quantized once in the
// CPU's vec-dot format (q8_0, q8_1 or q8_K) into the tiles' layout and the
// weights are decoded to int8 tiles; the integer block sums are exact, the
// float scaling runs in another order than the CPU's (results within
// rounding, not bit for bit). Smaller batches keep the batched mat-vec.

// mmqMinTokens is the smallest batch that takes the tensor-core kernels.
const mmqMinTokens = 32

// mmqKC is the kernels' k-step (KC in mma.cu): activation rows are padded
// with zeros to a multiple of it.
const mmqKC = 128

// mmqKernels names the mmq_* kernel of each weight type they decode.
var mmqKernels = map[gguf.GGMLType]string{
	gguf.TypeQ4_0: "mmq_q4_0", gguf.TypeQ4_1: "mmq_q4_1", gguf.TypeQ5_0: "mmq_q5_0", gguf.TypeQ5_1: "mmq_q5_1", gguf.TypeQ8_0: "mmq_q8_0",
	gguf.TypeQ2_K: "mmq_q2_k", gguf.TypeQ3_K: "mmq_q3_k", gguf.TypeQ4_K: "mmq_q4_k", gguf.TypeQ5_K: "mmq_q5_k", gguf.TypeQ6_K: "mmq_q6_k",
}

// mmqLayout marks, in Backend.lastVT, activations the workspace holds in
// the mmq layout rather than in vec-dot blocks: no real type carries this
// bit, so the mat-vec path never takes them for its own.
const mmqLayout gguf.GGMLType = 1 << 30

// mmqDisabled turns the tensor-core path off (MINFER_CUDA_MMQ=0), for
// comparisons with the batched mat-vec.
var mmqDisabled = os.Getenv("MINFER_CUDA_MMQ") == "0"

// useMMQ reports whether the mat-mul n runs on the tensor-core kernels.
func useMMQ(n *graph.Node) bool {
	if mmqDisabled || n.Src[1].Rows() < mmqMinTokens {
		return false
	}
	_, ok := mmqKernels[n.Src[0].Type]
	return ok
}

// mmqMatMul runs n = W·x on the tensor cores: the activations go to the
// workspace (int8 rows of kp bytes, then per 16 elements a float scale and
// a float scaled sum), in chunks of tokens when they outgrow it.
func (b *Backend) mmqMatMul(n *graph.Node, w, x, out uintptr) error {
	dv, l := b.dv, &b.l
	wt := n.Src[0].Type
	in := n.Src[0].Shape[0]
	rows := n.Src[0].Rows()
	T := n.Src[1].Rows()
	wrb, err := wt.RowBytes(in)
	if err != nil {
		return err
	}
	vt := quant.VecDotType(wt)
	kp := (in + mmqKC - 1) / mmqKC * mmqKC
	if vt == gguf.TypeQ8_K && kp != in {
		return fmt.Errorf("%w: q8_K activations of %d elements", errUnsupported, in)
	}
	perTok := kp + 2*(kp/16)*4
	chunk := min(T, dv.workSize/perTok)
	if chunk < 1 {
		return fmt.Errorf("%w: a row of %d activations outgrows the workspace", errUnsupported, in)
	}
	fn := mmqKernels[wt]
	for t0 := int64(0); t0 < T; t0 += chunk {
		nt := min(chunk, T-t0)
		qx := dv.work
		xs := qx + uintptr(nt*kp)
		xm := xs + uintptr(nt*(kp/16)*4)
		if !(chunk == T && b.lastQuant == n.Src[1] && b.lastVT == mmqLayout|vt) {
			xin := x + uintptr(t0*in*4)
			switch vt {
			case gguf.TypeQ8_0, gguf.TypeQ8_1:
				sum := i32(0)
				if vt == gguf.TypeQ8_1 {
					sum = 1
				}
				err = dv.launch(l, "mmq_act_q8", [3]uint32{uint32(kp / 32), uint32(nt), 1}, block1(32), 0, xin, qx, xs, xm, i32(in), i32(kp), sum)
			case gguf.TypeQ8_K:
				err = dv.launch(l, "mmq_act_q8k", [3]uint32{uint32(kp / 256), uint32(nt), 1}, block1(256), 0, xin, qx, xs, xm, i32(in), i32(kp))
			default:
				err = fmt.Errorf("%w: mmq activations of type %s", errUnsupported, vt)
			}
			if err != nil {
				return err
			}
			b.lastQuant = nil
			if chunk == T {
				b.lastQuant, b.lastVT = n.Src[1], mmqLayout|vt
			}
		}
		o := out + uintptr(t0*rows*4)
		grid := [3]uint32{uint32((rows + 63) / 64), uint32((nt + 63) / 64), 1}
		if err := dv.launch(l, fn, grid, block1(128), 0, w, qx, xs, xm, o, i32(rows), i32(in), i32(kp), i64(wrb), i32(nt)); err != nil {
			return err
		}
	}
	return nil
}
