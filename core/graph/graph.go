// Package graph is Minfer's compute graph: nodes that carry op, dtype, shape
// and layer; a builder; liveness; the parameters that key graph reuse; the
// graph cache; and the pass that assigns each node a backend.
package graph

import (
	"fmt"

	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/alloc"
)

// Op is a node's operation.
type Op uint8

const (
	OpInput       Op = iota // host-filled before execution (tokens, positions, mask)
	OpWeight                // a model tensor registered on a backend
	OpKV                    // a persistent region (one layer's K or V cache)
	OpView                  // a window of another node's bytes (reshape, slice)
	OpGetRows               // rows of Src0 (any weight type) picked by Src1 (int32 ids), as F32
	OpRMSNorm               // x / sqrt(mean(x²) + eps) per row (NormParams)
	OpMul                   // Src0 * Src1, Src1 broadcast over rows
	OpAdd                   // Src0 + Src1, Src1 broadcast over rows
	OpMatMul                // Src1 (activations, F32 rows) times Src0ᵀ (weight rows): [Src0 rows, Src1 rows]
	OpRope                  // rotary embedding (RopeParams); Src1 positions, Src2 optional frequency factors
	OpStoreKV               // writes Src1's rows into the cache Src0 at rows given by Src2 (int32); output aliases Src0
	OpAttention             // softmax(QKᵀ·scale + mask)·V over the cache with GQA (AttentionParams); Src0 q, Src1 K, Src2 V, Src3 mask
	OpSwiGLU                // silu(Src0) * Src1
	OpCopy                  // cross-backend staging copy of Src0
	OpScale                 // Src0 · s (ScaleParams)
	OpSoftCap               // cap · tanh(Src0 / cap) (SoftCapParams)
	OpGELU                  // gelu(Src0), tanh form, as ggml's F16 table gives it
	OpSigmoid               // silu(x)/x: the sigmoid as llama.cpp's Qwen-MoE graph computes it
	OpSoftMax               // softmax of each row of Src0
	OpTopK                  // I32 indices of the K largest values of each row of Src0, largest first (TopKParams)
	OpMoEWeights            // Src0 probabilities [experts, T] picked at Src1 (I32 [K, T]), optionally renormalised (MoEWeightsParams)
	OpMatMulID              // per token, Src1 times the Src2-selected experts of the 3-D Src0: [out, K, T]
	OpWeightedSum           // Σ_k Src0[:, k, t] · Src1[k, t], in k order: [n, T]
	numOps
)

var opNames = [...]string{"input", "weight", "kv", "view", "get_rows", "rms_norm", "mul", "add", "mat_mul", "rope", "store_kv", "attention", "swiglu", "copy",
	"scale", "soft_cap", "gelu", "sigmoid", "soft_max", "top_k", "moe_weights", "mat_mul_id", "weighted_sum"}

func (o Op) String() string {
	if int(o) < len(opNames) {
		return opNames[o]
	}
	return fmt.Sprintf("op(%d)", o)
}

// IsLeaf reports whether the node's bytes come from outside the graph walk.
func (o Op) IsLeaf() bool { return o == OpInput || o == OpWeight || o == OpKV }

// Unblocked is the Layer of nodes outside any transformer block.
const Unblocked = -1

// Node is one operation. Shape is in ggml order: Shape[0] is the contiguous
// row length, Shape[1] the number of rows (tokens), and so on.
type Node struct {
	ID    int
	Op    Op
	Type  gguf.GGMLType
	Shape [4]int64
	Src   [4]*Node
	Layer int
	Name  string

	// Params are the op's typed parameters (nil for ops without any);
	// backends read them with ParamsOf.
	Params OpParams

	// Weight names the registered tensor (OpWeight, OpKV).
	Weight string
	// ViewOff is the byte offset of a view inside its source.
	ViewOff int64

	// Set by AssignBackends and the allocator.
	Backend int
	Buf     alloc.BufRef

	firstSet bool // the input's backend was chosen by its first reader
	// relGen is the graph's allocGen of the Allocate walk that released
	// this node's buffer (the walk's "released" mark, with no map).
	relGen uint64
}

// Elements is the number of elements.
func (n *Node) Elements() int64 { return n.Shape[0] * n.Shape[1] * n.Shape[2] * n.Shape[3] }

// Bytes is the node's logical byte length.
func (n *Node) Bytes() int64 {
	b, err := n.Type.RowBytes(n.Elements())
	if err != nil {
		panic(fmt.Sprintf("graph: node %q: %v", n.Name, err)) // builder bug: shapes are checked on creation
	}
	return b
}

// Rows is the number of rows (product of Shape[1:]).
func (n *Node) Rows() int64 { return n.Shape[1] * n.Shape[2] * n.Shape[3] }

// Base follows views to the node that owns the bytes.
func (n *Node) Base() *Node {
	for n.Op == OpView {
		n = n.Src[0]
	}
	return n
}

func (n *Node) String() string {
	return fmt.Sprintf("#%d %s %q %s%v layer %d", n.ID, n.Op, n.Name, n.Type, n.Shape, n.Layer)
}

// Graph is an ordered list of nodes: every node comes after its sources.
type Graph struct {
	Nodes  []*Node
	Params Params
	// Outputs are read back by the caller after execution.
	Outputs []*Node
	// Inputs are filled by the caller before execution, by name.
	Inputs map[string]*Node

	held    []*Node   // buffers placed by Allocate and not yet released
	release [][]*Node // releaseSchedule's cache (topology only)
	// walk is Allocate's list of the buffers it placed, kept for the next
	// walk; allocGen numbers the walks (Node.relGen).
	walk     []*Node
	allocGen uint64
	// last: the nodes the last walk held, given back by Release at the
	// allocator's generation lastGen (of lastGA): while that generation
	// stands, a walk would give the same placement (Allocate's fast path).
	last    []*Node
	lastGA  *alloc.GraphAllocator
	lastGen uint64
	// refs is Allocate's scratch for the fast path's buffers.
	refs []alloc.BufRef
}

// Input returns the named input node.
func (g *Graph) Input(name string) (*Node, bool) { n, ok := g.Inputs[name]; return n, ok }

// Params are everything that changes a graph's topology. Two steps with
// equal Params run the same graph: it is reused, not rebuilt.
type Params struct {
	Tokens     int  // batch size (tokens in this step)
	KVLen      int  // attention span class: cache rows the attention reads
	GPULayers  int  // the offload plan, because the assignment is topology
	AllLogits  bool // logits for every token, not only the last
	Arch       string
	OutputRows int
}

func (p Params) String() string {
	return fmt.Sprintf("tokens=%d kv=%d gpu_layers=%d all_logits=%v", p.Tokens, p.KVLen, p.GPULayers, p.AllLogits)
}
