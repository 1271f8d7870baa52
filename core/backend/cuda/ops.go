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

// typeKernel holds the per-type kernel names, built once from kernelSuffix
// so that launches do not concatenate them.
type typeKernel struct{ getRows, matvec1, matvecB, matvecID string }

var typeKernels = func() map[gguf.GGMLType]typeKernel {
	m := make(map[gguf.GGMLType]typeKernel, len(kernelSuffix))
	for t, s := range kernelSuffix {
		m[t] = typeKernel{"get_rows_" + s, "matvec_" + s + "_1", "matvec_" + s + "_b", "matvec_id_" + s}
	}
	return m
}()

// f16f32Kernel is the F16 mat-vec over F32 activations (tinyBLAS);
// f16MatVecID the mat-vec-id of F16 experts (the CPU's dotF16x512: ggml's
// mul_mat_id has no tinyBLAS path).
var f16f32Kernel = typeKernel{matvec1: "matvec_f16f32_1", matvecB: "matvec_f16f32_b"}

const f16MatVecID = "matvec_id_f16x512"

// blocksPerRow is how many quantization blocks a row of in weights of type
// wt holds (in itself for the float types, whose kernels count elements).
func blocksPerRow(wt gguf.GGMLType, in int64) int64 {
	if wt == gguf.TypeF32 || wt == gguf.TypeF16 || wt == gguf.TypeBF16 {
		return in
	}
	return in / int64(wt.BlockSize())
}

// batchTokens is how many tokens one pass of a batched mat-vec kernel
// (matvec_*_b) takes: bat<T>::NTB in quant.cu (the lanes8 types run eight
// chains per token, Q5_1 nine).
func batchTokens(t gguf.GGMLType) int {
	switch t {
	case gguf.TypeQ5_0, gguf.TypeQ2_K:
		return 4
	case gguf.TypeQ5_1:
		return 2
	}
	return 8
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
	case graph.OpRMSNorm, graph.OpSwiGLU, graph.OpScale, graph.OpSoftCap, graph.OpGELU, graph.OpSigmoid, graph.OpSoftMax:
		return isF32(n.Src[0]) && isF32(n) && n.Shape[0] <= math.MaxInt32
	case graph.OpMul, graph.OpAdd:
		// Broadcast rows of the same length, or (mul) one scalar per row.
		y := n.Src[1]
		rowScalars := n.Op == graph.OpMul && y.Shape[0] == 1 && n.Shape[0] != 1 && y.Elements() == n.Rows()
		return isF32(n.Src[0]) && isF32(y) && (y.Shape[0] == n.Shape[0] || rowScalars)
	case graph.OpTopK:
		return isF32(n.Src[0]) && n.Src[0].Shape[0] <= 256
	case graph.OpMoEWeights:
		return isF32(n.Src[0]) && n.Src[1].Type == gguf.TypeI32
	case graph.OpWeightedSum:
		return isF32(n.Src[0]) && isF32(n.Src[1])
	case graph.OpMatMulID:
		w := n.Src[0]
		return matVecWeight(w) && isF32(n.Src[1]) && n.Src[2].Type == gguf.TypeI32 &&
			w.Shape[1] <= math.MaxInt32 && n.Shape[1]*n.Shape[2] <= 65535
	case graph.OpMatMul:
		w := n.Src[0]
		return matVecWeight(w) && isF32(n.Src[1]) && w.Rows() <= math.MaxInt32
	case graph.OpRope:
		p, err := graph.ParamsOf[graph.RopeParams](n)
		return err == nil && isF32(n.Src[0]) && (n.Src[2] == nil || isF32(n.Src[2])) && p.Dims%2 == 0
	case graph.OpStoreKV:
		t := n.Src[0].Type
		return (t == gguf.TypeF16 || t == gguf.TypeF32) && isF32(n.Src[1])
	case graph.OpAttention:
		p, err := graph.ParamsOf[graph.AttentionParams](n)
		if err != nil || n.Src[1].Type != n.Src[2].Type || (n.Src[1].Type != gguf.TypeF16 && n.Src[1].Type != gguf.TypeF32) {
			return false
		}
		// SoftCap (gemma2) is computed by the kernel as the CPU does.
		return attentionShared(int(n.Src[0].Shape[0]), p.KVLen) <= b.dv.smemOptin-attentionStaticShared
	}
	return false
}

// matVecWeight reports whether the mat-vec kernels take weight w: a type
// they compute, rows of whole blocks, and a row length that fits an int32.
func matVecWeight(w *graph.Node) bool {
	_, ok := kernelSuffix[w.Type]
	bs := w.Type.BlockSize()
	return ok && bs > 0 && w.Shape[0]%int64(bs) == 0 && w.Shape[0] <= math.MaxInt32
}

// attentionShared is the attention kernel's dynamic shared memory: q, the
// scores over the padded n_kv, their 16-block sums, and (F16 cache) the 64
// lanes of every output element's dot product.
func attentionShared(headDim, kvLen int) int {
	nkv := max(32, (kvLen+31)/32*32)
	return 4 * (headDim + nkv + nkv/16 + 64*headDim)
}

// ptrOf is the device address of a node's bytes: a weight, or a part of
// one (a fused tensor's Q rows, say) used in place, or a buffer window.
func (b *Backend) ptrOf(n *graph.Node) (uintptr, error) {
	if n == nil {
		return 0, nil
	}
	var off int64
	base := n
	for ; base.Op == graph.OpView; base = base.Src[0] {
		off += base.ViewOff
	}
	if base.Op != graph.OpWeight {
		return b.window(n.Buf)
	}
	b.mu.Lock()
	w, ok := b.weights[base.Weight]
	b.mu.Unlock()
	if !ok {
		return 0, fmt.Errorf("cuda: weight %q is not registered here", base.Weight)
	}
	if n != base && (off < 0 || off+n.Bytes() > w.size) {
		return 0, fmt.Errorf("cuda: view %q of %d bytes at %d outside weight %q", n.Name, n.Bytes(), off, base.Weight)
	}
	return w.ptr + uintptr(off), nil
}

func grid1(x int64) [3]uint32 { return [3]uint32{uint32(x), 1, 1} }
func block1(x int) [3]uint32  { return [3]uint32{uint32(x), 1, 1} }
func elementwiseGrid(total int64) [3]uint32 {
	return grid1(min((total+255)/256, 65535))
}

// encode queues the kernels of nodes on the stream (no host waits: this
// runs under graph capture too). Neighbouring nodes fuse where decode.go
// says so (a residual add with the rms_norm, weight mul and activation
// quantization after it; swiglu with its quantization; the q/k ropes; the
// k/v stores).
func (b *Backend) encode(nodes []*graph.Node) error {
	b.lastQuant = nil
	b.usedFor = usedMask{} // the step's uploads came before: every mask may be new
	b.encodeStart = b.l.launched
	for i := 0; i < len(nodes); {
		n := nodes[i]
		if n.Op != graph.OpMatMul {
			// Only back-to-back mat-muls (or a fused quantizing kernel and
			// the mat-mul after it) share quantized activations: any other
			// kernel may write the workspace or the input's bytes.
			b.lastQuant = nil
		}
		used, err := b.encodeAt(nodes, i)
		if err != nil {
			return fmt.Errorf("cuda: %s: %w", n, err)
		}
		i += used
	}
	return nil
}

// encodeAt queues nodes[i] (and the nodes fused with it), reporting how
// many nodes it took.
func (b *Backend) encodeAt(nodes []*graph.Node, i int) (int, error) {
	n := nodes[i]
	switch n.Op {
	case graph.OpRMSNorm:
		return b.normChain(nodes, i)
	case graph.OpAdd:
		if b.addFeedsNorm(nodes, i) {
			return b.normChain(nodes, i)
		}
	case graph.OpRope:
		if used, err := b.ropeAttention(nodes, i); err != nil || used > 0 {
			return used, err
		}
		if used, err := b.ropeStoreOne(nodes, i); err != nil || used > 0 {
			return used, err
		}
		if used, err := b.ropeStoreBatch(nodes, i); err != nil || used > 0 {
			return used, err
		}
		if used, err := b.ropeFast(nodes, i); err != nil || used > 0 {
			return used, err
		}
	case graph.OpStoreKV:
		if ok, err := b.storePair(nodes, i); err != nil || ok {
			return 2, err
		}
	case graph.OpMatMul:
		// Mat-muls of one input on the tensor cores: one launch.
		if used, err := b.mmqGroup(nodes[i:]); err != nil || used > 0 {
			return used, err
		}
		// One token's mat-vec(s) with the norm chain or rope/store after it.
		if used, err := b.matVecTail(nodes, i); err != nil || used > 0 {
			return used, err
		}
		// Gate and up with the swiglu after them: one launch.
		if used, err := b.swigluMatVec(nodes, i); err != nil || used > 0 {
			return used, err
		}
		if used, err := b.multiMatVec(nodes, i); err != nil || used > 0 {
			return used, err
		}
	}
	return 1, b.encodeNode(nodes, i)
}

// encodeNode queues nodes[i] alone.
func (b *Backend) encodeNode(nodes []*graph.Node, i int) error {
	n := nodes[i]
	var src [4]uintptr
	for i, s := range n.Src {
		p, err := b.ptrOf(s)
		if err != nil {
			return err
		}
		src[i] = p
	}
	out, err := b.ptrOf(n)
	if err != nil {
		return err
	}
	dv, l := b.dv, &b.l
	switch n.Op {
	case graph.OpGetRows:
		t := n.Src[0].Type
		rb, err := t.RowBytes(n.Src[0].Shape[0])
		if err != nil {
			return err
		}
		return dv.launch(l, typeKernels[t].getRows, grid1(n.Src[1].Elements()), block1(1024), 0,
			src[0], src[1], out, i32(n.Src[0].Shape[0]), i64(rb), i32(n.Src[0].Rows()))
	case graph.OpMul, graph.OpAdd:
		if y := n.Src[1]; n.Op == graph.OpMul && y.Shape[0] == 1 && n.Shape[0] != 1 {
			total := n.Elements()
			return dv.launch(l, "mul_rows", elementwiseGrid(total), block1(256), 0, src[0], src[1], out, i32(n.Shape[0]), i64(total))
		}
		fn := "mul_f32"
		if n.Op == graph.OpAdd {
			fn = "add_f32"
		}
		total := n.Elements()
		return dv.launch(l, fn, elementwiseGrid(total), block1(256), 0, src[0], src[1], out, i32(n.Shape[0]), i32(n.Src[1].Rows()), i64(total))
	case graph.OpSwiGLU:
		return b.swiglu(nodes, i, src, out)
	case graph.OpScale:
		p, err := graph.ParamsOf[graph.ScaleParams](n)
		if err != nil {
			return err
		}
		total := n.Elements()
		return dv.launch(l, "scale_f32", elementwiseGrid(total), block1(256), 0, src[0], out, p.S, i64(total))
	case graph.OpSoftCap:
		p, err := graph.ParamsOf[graph.SoftCapParams](n)
		if err != nil {
			return err
		}
		total := n.Elements()
		return dv.launch(l, "softcap_f32", elementwiseGrid(total), block1(256), 0, src[0], out, 1/p.Cap, p.Cap, i64(total))
	case graph.OpGELU:
		total := n.Elements()
		return dv.launch(l, "gelu_f32k", elementwiseGrid(total), block1(256), 0, src[0], out, i64(total))
	case graph.OpSigmoid:
		total := n.Elements()
		return dv.launch(l, "sigmoid_f32", elementwiseGrid(total), block1(256), 0, src[0], out, i32(n.Shape[0]), i64(total))
	case graph.OpSoftMax:
		rows := n.Rows()
		return dv.launch(l, "softmax_rows", grid1((rows+127)/128), block1(128), 0, src[0], out, i32(n.Shape[0]), i32(rows))
	case graph.OpMatMul:
		return b.matMul(n, src[0], src[1], out)
	case graph.OpMatMulID:
		return b.matMulID(n, src[0], src[1], src[2], out)
	case graph.OpTopK:
		p, err := graph.ParamsOf[graph.TopKParams](n)
		if err != nil {
			return err
		}
		rows := n.Src[0].Rows()
		return dv.launch(l, "top_k", grid1((rows+63)/64), block1(64), 0, src[0], out, i32(n.Src[0].Shape[0]), i32(p.K), i32(rows))
	case graph.OpMoEWeights:
		p, err := graph.ParamsOf[graph.MoEWeightsParams](n)
		if err != nil {
			return err
		}
		norm := int32(0)
		if p.Normalize {
			norm = 1
		}
		tokens := n.Shape[1]
		return dv.launch(l, "moe_weights", grid1((tokens+127)/128), block1(128), 0, src[0], src[1], out,
			i32(n.Src[0].Shape[0]), i32(n.Shape[0]), norm, i32(tokens))
	case graph.OpWeightedSum:
		total := n.Elements()
		return dv.launch(l, "weighted_sum", elementwiseGrid(total), block1(256), 0, src[0], src[1], out,
			i32(n.Shape[0]), i32(n.Src[0].Shape[1]), i64(total))
	case graph.OpRope:
		p, err := graph.ParamsOf[graph.RopeParams](n)
		if err != nil {
			return err
		}
		neox := int32(0)
		if p.Mode == graph.RopeNeoX {
			neox = 1
		}
		// The CPU computes theta_scale once, in float64 then rounded.
		thetaScale := float32(math.Pow(float64(p.FreqBase), -2.0/float64(p.Dims)))
		return dv.launch(l, "rope", grid1(n.Shape[2]), block1(128), uint32(p.Dims*4),
			src[0], out, src[1], src[2], i32(n.Shape[0]), i32(n.Shape[1]), i32(p.Dims), neox, p.FreqScale, thetaScale)
	case graph.OpStoreKV:
		fn := "store_kv_f32"
		if n.Src[0].Type == gguf.TypeF16 {
			fn = "store_kv_f16"
		}
		return dv.launch(l, fn, grid1(n.Src[2].Elements()), block1(256), 0,
			src[0], src[1], src[2], i32(n.Src[0].Shape[0]), i32(n.Src[0].Shape[1]))
	case graph.OpAttention:
		p, err := graph.ParamsOf[graph.AttentionParams](n)
		if err != nil {
			return err
		}
		if b.useFlash(n) {
			return b.flashAttention(n, p, src, out)
		}
		q := n.Src[0]
		hd := int(q.Shape[0])
		smem := attentionShared(hd, p.KVLen)
		if smem > dv.smemOptin-attentionStaticShared {
			return fmt.Errorf("%w: attention over %d positions needs %d bytes of shared memory, the device has %d", errUnsupported, p.KVLen, smem, dv.smemOptin)
		}
		if ok, err := b.decodeAttention(nodes, i, p, src, out, nil); err != nil || ok {
			return err
		}
		fn := "attention_f32"
		if n.Src[1].Type == gguf.TypeF16 {
			fn = "attention_f16"
		}
		// The cells in use (which fix llama.cpp's padded n_kv) go to the
		// workspace's first word; the matmuls that also use it are ordered
		// on the same stream.
		used := dv.work
		if err := b.attnUsed(src[3], q.Shape[2], p.KVLen, used); err != nil {
			return err
		}
		return dv.launch(l, fn, [3]uint32{uint32(q.Shape[1]), uint32(q.Shape[2]), 1}, block1(256), uint32(smem),
			src[0], src[1], src[2], src[3], used, out, i32(hd), i32(q.Shape[1]), i32(p.KVHeads), i32(p.KVLen), p.Scale, p.SoftCap)
	}
	return fmt.Errorf("%w: op %s", errUnsupported, n.Op)
}

// matMul quantizes the activations once into the workspace in the weight's
// vec-dot format (as the CPU does), then runs the mat-vec kernel: one warp
// per weight row, one token per pass for decode, eight for a batch.
func (b *Backend) matMul(n *graph.Node, w, x, out uintptr) error {
	if useMMQ(n) {
		return b.mmqMatMul([]*graph.Node{n}, []uintptr{w}, x, []uintptr{out})
	}
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
	// F16 weights over rows of a multiple of 16 keep F32 activations
	// (tinyBLAS, as the CPU's DotF16F32).
	f16f32 := wt == gguf.TypeF16 && in%quant.F16F32Lanes == 0
	if f16f32 {
		vt, xrb = gguf.TypeF32, in*4
	}
	chunk := T
	if vt != gguf.TypeF32 {
		chunk = min(T, dv.workSize/xrb)
		if chunk < 1 {
			return fmt.Errorf("%w: a row of %d activations outgrows the workspace", errUnsupported, in)
		}
	}
	nblk := blocksPerRow(wt, in)
	kn := typeKernels[wt]
	if f16f32 {
		kn = f16f32Kernel
	}
	for t0 := int64(0); t0 < T; t0 += chunk {
		nt := min(chunk, T-t0)
		xin := x + uintptr(t0*in*4)
		var xq uintptr
		if vt != gguf.TypeF32 && chunk == T && b.lastQuant == n.Src[1] && b.lastVT == vt {
			xq = dv.work + b.lastQuantOff // quantized by the kernel just before, from the same input
		} else {
			if xq, err = b.quantizeActs(vt, xin, in, nt, xrb); err != nil {
				return err
			}
			b.lastQuant = nil
			if vt != gguf.TypeF32 && chunk == T {
				b.noteQuant(n.Src[1], vt, 0)
			}
		}
		ml := b.matVecKernel(wt, kn, w, wrb, xrb, nt, rows)
		gy := uint32(nt)
		if nt > 1 {
			nb := int64(batchTokens(wt))
			gy = uint32((nt + nb - 1) / nb)
		}
		o := out + uintptr(t0*rows*4)
		if err := dv.launch(l, ml.fn, [3]uint32{uint32((rows + ml.rows - 1) / ml.rows), gy, 1}, block1(ml.threads), ml.smem,
			w, xq, o, i32(rows), i32(nblk), i64(wrb), i64(xrb), i32(nt)); err != nil {
			return err
		}
	}
	return nil
}

// noteQuant records that the kernel just encoded left n's activations
// quantized as vt in the workspace, off bytes from its start (lastQuant).
func (b *Backend) noteQuant(n *graph.Node, vt gguf.GGMLType, off uintptr) {
	b.lastQuant, b.lastVT, b.lastQuantOff = n, vt, off
}

// quantAtWork reports whether the workspace's start holds n's activations
// quantized as vt (the paths that read them there, not at lastQuantOff).
func (b *Backend) quantAtWork(n *graph.Node, vt gguf.GGMLType) bool {
	return b.lastQuant == n && b.lastVT == vt && b.lastQuantOff == 0
}

// actsAtWork makes the workspace's start hold one token's activations x
// (in values) quantized as vt (xrb bytes), quantizing them unless it
// already does (lastQuant, at offset 0).
func (b *Backend) actsAtWork(x *graph.Node, vt gguf.GGMLType, in, xrb int64) error {
	if b.quantAtWork(x, vt) {
		return nil
	}
	xp, err := b.ptrOf(x)
	if err != nil {
		return err
	}
	if _, err := b.quantizeActs(vt, xp, in, 1, xrb); err != nil {
		return err
	}
	b.noteQuant(x, vt, 0)
	return nil
}

// quantizeActs puts nt rows of in activations at x into the workspace in
// vec-dot type vt (as the CPU's QuantizeRow), returning their address (x
// itself for F32).
func (b *Backend) quantizeActs(vt gguf.GGMLType, x uintptr, in, nt, xrb int64) (uintptr, error) {
	dv, l := b.dv, &b.l
	switch vt {
	case gguf.TypeF32:
		return x, nil
	case gguf.TypeF16, gguf.TypeBF16:
		fn := "quant_f16"
		if vt == gguf.TypeBF16 {
			fn = "quant_bf16"
		}
		return dv.work, dv.launch(l, fn, elementwiseGrid(nt*in), block1(256), 0, x, dv.work, i64(nt*in))
	case gguf.TypeQ8_0, gguf.TypeQ8_1:
		fn := "quant_q8_0"
		if vt == gguf.TypeQ8_1 {
			fn = "quant_q8_1"
		}
		return dv.work, dv.launch(l, fn, [3]uint32{uint32(in / 32), uint32(nt), 1}, block1(32), 0, x, dv.work, i32(in), i64(xrb))
	case gguf.TypeQ8_K:
		return dv.work, dv.launch(l, "quant_q8_k", [3]uint32{uint32(in / 256), uint32(nt), 1}, block1(256), 0, x, dv.work, i32(in), i64(xrb))
	}
	return 0, fmt.Errorf("%w: activations of type %s", errUnsupported, vt)
}

// matMulID: for every (token, slot) pair, the selected expert's rows times
// the pair's activations (x shared by the slots of a token, or one row per
// pair), with the CPU's vec-dot per output (F16 experts: the AVX-512
// ggml_vec_dot_f16 of the CPU's dotF16x512, activations rounded to F16).
// grid (rows/4, pairs).
func (b *Backend) matMulID(n *graph.Node, w, x, ids, out uintptr) error {
	wn := n.Src[0]
	wt := wn.Type
	in, rows := wn.Shape[0], wn.Shape[1]
	k, T := n.Shape[1], n.Shape[2]
	shared := n.Src[1].Shape[1] != k || n.Src[1].Shape[2] != T
	wrb, err := wt.RowBytes(in)
	if err != nil {
		return err
	}
	vt := quant.VecDotType(wt)
	xrb, err := vt.RowBytes(in)
	if err != nil {
		return err
	}
	nx := T * k
	if shared {
		nx = T
	}
	if vt != gguf.TypeF32 && nx*xrb > b.dv.workSize {
		return fmt.Errorf("%w: %d rows of %d activations outgrow the workspace", errUnsupported, nx, in)
	}
	xq, err := b.quantizeActs(vt, x, in, nx, xrb)
	if err != nil {
		return err
	}
	nblk := blocksPerRow(wt, in)
	sh := int32(0)
	if shared {
		sh = 1
	}
	fn := typeKernels[wt].matvecID
	if wt == gguf.TypeF16 {
		fn = f16MatVecID
	}
	return b.dv.launch(&b.l, fn, [3]uint32{uint32((rows + 3) / 4), uint32(T * k), 1}, block1(128), 0,
		w, xq, out, i32(rows), i32(nblk), i64(wrb), i64(xrb), ids, i32(k), sh, i64(wrb*rows))
}
