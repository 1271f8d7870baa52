package cuda

import (
	"fmt"
	"math"

	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/gguf"
)

// kernelSuffix names the get_rows_* and matvec_* kernels of each weight
// type the backend computes with (every type the CPU supports).
var kernelSuffix = map[gguf.GGMLType]string{
	gguf.TypeF32: "f32", gguf.TypeF16: "f16", gguf.TypeBF16: "bf16",
	gguf.TypeQ4_0: "q4_0", gguf.TypeQ4_1: "q4_1", gguf.TypeQ5_0: "q5_0", gguf.TypeQ5_1: "q5_1", gguf.TypeQ8_0: "q8_0",
	gguf.TypeQ2_K: "q2_k", gguf.TypeQ3_K: "q3_k", gguf.TypeQ4_K: "q4_k", gguf.TypeQ5_K: "q5_k", gguf.TypeQ6_K: "q6_k",
}

// SupportedTypes lists the weight types the backend computes with.
func SupportedTypes() []gguf.GGMLType {
	out := make([]gguf.GGMLType, 0, len(kernelSuffix))
	for t := range kernelSuffix {
		out = append(out, t)
	}
	return out
}

func isF32(n *graph.Node) bool { return n != nil && n.Type == gguf.TypeF32 }

// SupportsNode reports whether the GPU runs n: every op of the llama and
// qwen2 graphs, for every weight type the CPU supports.
func (b *Backend) SupportsNode(n *graph.Node) bool {
	switch n.Op {
	case graph.OpGetRows:
		_, ok := kernelSuffix[n.Src[0].Type]
		return ok && n.Src[1] != nil && n.Src[1].Type == gguf.TypeI32 && n.Src[0].Shape[0] <= math.MaxInt32
	case graph.OpRMSNorm, graph.OpSwiGLU:
		return isF32(n.Src[0])
	case graph.OpMul, graph.OpAdd:
		// Not the per-row scalar form of mul (a row of one element).
		return isF32(n.Src[0]) && isF32(n.Src[1]) && n.Src[1].Shape[0] == n.Shape[0]
	case graph.OpMatMul:
		w := n.Src[0]
		_, ok := kernelSuffix[w.Type]
		bs := w.Type.BlockSize()
		return ok && isF32(n.Src[1]) && bs > 0 && w.Shape[0]%int64(bs) == 0 && w.Shape[0] <= math.MaxInt32 && w.Rows() <= math.MaxInt32
	case graph.OpRope:
		p, err := graph.ParamsOf[graph.RopeParams](n)
		return err == nil && isF32(n.Src[0]) && (n.Src[2] == nil || isF32(n.Src[2])) && p.Dims%2 == 0
	case graph.OpStoreKV:
		t := n.Src[0].Type
		return (t == gguf.TypeF16 || t == gguf.TypeF32) && isF32(n.Src[1])
	case graph.OpAttention:
		p, err := graph.ParamsOf[graph.AttentionParams](n)
		if err != nil || n.Src[1].Type != n.Src[2].Type || (n.Src[1].Type != gguf.TypeF16 && n.Src[1].Type != gguf.TypeF32) || p.SoftCap != 0 {
			return false // no soft-capped scores (Gemma 2) here yet
		}
		return attentionShared(int(n.Src[0].Shape[0]), p.KVLen) <= b.dv.smemOptin-attentionStaticShared
	}
	return false
}

func attentionShared(headDim, kvLen int) int { return 8*headDim*8 + headDim*4 + kvLen*4 }

// ptrOf is the device address of a node's bytes.
func (b *Backend) ptrOf(n *graph.Node) (uintptr, error) {
	if n == nil {
		return 0, nil
	}
	if n.Op == graph.OpView && n.Base().Op == graph.OpWeight {
		// A part of a registered weight (a fused tensor's rows).
		var off int64
		for v := n; v.Op == graph.OpView; v = v.Src[0] {
			off += v.ViewOff
		}
		p, err := b.ptrOf(n.Base())
		return p + uintptr(off), err
	}
	if n.Op == graph.OpWeight {
		b.mu.Lock()
		w, ok := b.weights[n.Weight]
		b.mu.Unlock()
		if !ok {
			return 0, fmt.Errorf("cuda: weight %q is not registered here", n.Weight)
		}
		return w.ptr, nil
	}
	return b.window(n.Buf)
}

func grid1(x int64) [3]uint32 { return [3]uint32{uint32(x), 1, 1} }
func block1(x int) [3]uint32  { return [3]uint32{uint32(x), 1, 1} }
func elementwiseGrid(total int64) [3]uint32 {
	return grid1(min((total+255)/256, 65535))
}

// encode queues the kernels of nodes on the stream (no host waits: this
// runs under graph capture too). rms_norm followed by the mul that reads it
// becomes one kernel.
func (b *Backend) encode(nodes []*graph.Node) error {
	for i := 0; i < len(nodes); i++ {
		n := nodes[i]
		var next *graph.Node
		if i+1 < len(nodes) {
			next = nodes[i+1]
		}
		fused, err := b.encodeNode(n, next)
		if err != nil {
			return fmt.Errorf("cuda: %s: %w", n, err)
		}
		if fused {
			i++
		}
	}
	return nil
}

// encodeNode queues n; it reports whether it also computed next (fusion).
func (b *Backend) encodeNode(n, next *graph.Node) (bool, error) {
	var src [4]uintptr
	for i, s := range n.Src {
		p, err := b.ptrOf(s)
		if err != nil {
			return false, err
		}
		src[i] = p
	}
	out, err := b.ptrOf(n)
	if err != nil {
		return false, err
	}
	dv, l := b.dv, &b.l
	switch n.Op {
	case graph.OpGetRows:
		t := n.Src[0].Type
		rb, err := t.RowBytes(n.Src[0].Shape[0])
		if err != nil {
			return false, err
		}
		return false, dv.launch(l, "get_rows_"+kernelSuffix[t], grid1(n.Src[1].Elements()), block1(256), 0,
			src[0], src[1], out, i32(n.Src[0].Shape[0]), i64(rb), i32(n.Src[0].Rows()))
	case graph.OpRMSNorm:
		p, err := graph.ParamsOf[graph.NormParams](n)
		if err != nil {
			return false, err
		}
		w, out2, fuse := uintptr(0), uintptr(0), false
		wrows := int32(1)
		if next != nil && next.Op == graph.OpMul && next.Src[0] == n && next.Backend == n.Backend && isF32(next.Src[1]) {
			if w, err = b.ptrOf(next.Src[1]); err != nil {
				return false, err
			}
			if out2, err = b.ptrOf(next); err != nil {
				return false, err
			}
			wrows, fuse = i32(next.Src[1].Rows()), true
		}
		return fuse, dv.launch(l, "rms_norm", grid1(n.Rows()), block1(256), 0, src[0], out, w, out2, i32(n.Shape[0]), wrows, p.Eps)
	case graph.OpMul, graph.OpAdd:
		fn := "mul_f32"
		if n.Op == graph.OpAdd {
			fn = "add_f32"
		}
		total := n.Elements()
		return false, dv.launch(l, fn, elementwiseGrid(total), block1(256), 0, src[0], src[1], out, i32(n.Shape[0]), i32(n.Src[1].Rows()), i64(total))
	case graph.OpSwiGLU:
		total := n.Elements()
		return false, dv.launch(l, "swiglu", elementwiseGrid(total), block1(256), 0, src[0], src[1], out, i64(total))
	case graph.OpMatMul:
		return false, b.matMul(n, src[0], src[1], out)
	case graph.OpRope:
		p, err := graph.ParamsOf[graph.RopeParams](n)
		if err != nil {
			return false, err
		}
		neox := int32(0)
		if p.Mode == graph.RopeNeoX {
			neox = 1
		}
		// The CPU computes theta_scale once, in float64 then rounded.
		thetaScale := float32(math.Pow(float64(p.FreqBase), -2.0/float64(p.Dims)))
		return false, dv.launch(l, "rope", grid1(n.Shape[2]), block1(128), uint32(p.Dims*4),
			src[0], out, src[1], src[2], i32(n.Shape[0]), i32(n.Shape[1]), i32(p.Dims), neox, p.FreqScale, thetaScale)
	case graph.OpStoreKV:
		fn := "store_kv_f32"
		if n.Src[0].Type == gguf.TypeF16 {
			fn = "store_kv_f16"
		}
		return false, dv.launch(l, fn, grid1(n.Src[2].Elements()), block1(256), 0,
			src[0], src[1], src[2], i32(n.Src[0].Shape[0]), i32(n.Src[0].Shape[1]))
	case graph.OpAttention:
		p, err := graph.ParamsOf[graph.AttentionParams](n)
		if err != nil {
			return false, err
		}
		q := n.Src[0]
		hd := int(q.Shape[0])
		smem := attentionShared(hd, p.KVLen)
		if smem > dv.smemOptin-attentionStaticShared {
			return false, fmt.Errorf("%w: attention over %d positions needs %d bytes of shared memory, the device has %d", errUnsupported, p.KVLen, smem, dv.smemOptin)
		}
		fn := "attention_f32"
		if n.Src[1].Type == gguf.TypeF16 {
			fn = "attention_f16"
		}
		return false, dv.launch(l, fn, [3]uint32{uint32(q.Shape[1]), uint32(q.Shape[2]), 1}, block1(256), uint32(smem),
			src[0], src[1], src[2], src[3], out, i32(hd), i32(q.Shape[1]), i32(p.KVHeads), i32(p.KVLen), p.Scale)
	}
	return false, fmt.Errorf("%w: op %s", errUnsupported, n.Op)
}

// matMul quantizes the activations once into the workspace in the weight's
// vec-dot format (as the CPU does), then runs the mat-vec kernel: one warp
// per weight row, one token per pass for decode, eight for a batch.
func (b *Backend) matMul(n *graph.Node, w, x, out uintptr) error {
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
	xrb, err := vt.RowBytes(in)
	if err != nil {
		return err
	}
	chunk := T
	if wt != gguf.TypeF32 {
		chunk = min(T, dv.workSize/xrb)
		if chunk < 1 {
			return fmt.Errorf("%w: a row of %d activations outgrows the workspace", errUnsupported, in)
		}
	}
	nblk := in
	if bs := int64(wt.BlockSize()); wt != gguf.TypeF32 && wt != gguf.TypeF16 && wt != gguf.TypeBF16 {
		nblk = in / bs
	}
	for t0 := int64(0); t0 < T; t0 += chunk {
		nt := min(chunk, T-t0)
		xin := x + uintptr(t0*in*4)
		xq := xin
		switch vt {
		case gguf.TypeF32:
		case gguf.TypeF16, gguf.TypeBF16:
			fn := "quant_f16"
			if vt == gguf.TypeBF16 {
				fn = "quant_bf16"
			}
			xq = dv.work
			if err := dv.launch(l, fn, elementwiseGrid(nt*in), block1(256), 0, xin, xq, i64(nt*in)); err != nil {
				return err
			}
		case gguf.TypeQ8_0, gguf.TypeQ8_1:
			fn := "quant_q8_0"
			if vt == gguf.TypeQ8_1 {
				fn = "quant_q8_1"
			}
			xq = dv.work
			if err := dv.launch(l, fn, [3]uint32{uint32(in / 32), uint32(nt), 1}, block1(32), 0, xin, xq, i32(in), i64(xrb)); err != nil {
				return err
			}
		case gguf.TypeQ8_K:
			xq = dv.work
			if err := dv.launch(l, "quant_q8_k", [3]uint32{uint32(in / 256), uint32(nt), 1}, block1(256), 0, xin, xq, i32(in), i64(xrb)); err != nil {
				return err
			}
		default:
			return fmt.Errorf("%w: activations of type %s", errUnsupported, vt)
		}
		fn := "matvec_" + kernelSuffix[wt] + "_1"
		gy := uint32(nt)
		if nt > 1 {
			fn = "matvec_" + kernelSuffix[wt] + "_8"
			gy = uint32((nt + 7) / 8)
		}
		o := out + uintptr(t0*rows*4)
		if err := dv.launch(l, fn, [3]uint32{uint32((rows + 3) / 4), gy, 1}, block1(128), 0,
			w, xq, o, i32(rows), i32(nblk), i64(wrb), i64(xrb), i32(nt)); err != nil {
			return err
		}
	}
	return nil
}
