package graph

import "fmt"

// OpParams are an op's typed parameters. Every op that takes parameters has
// its own struct here (NormParams, RopeParams, AttentionParams, …) whose Op
// method names the op it belongs to; the builder stores it in Node.Params and
// each backend reads it with ParamsOf. Adding an op with parameters (a soft
// cap, a sliding window, an expert count) means adding one struct and one
// builder method: no backend decodes positional numbers.
type OpParams interface {
	// Op is the op these parameters belong to.
	Op() Op
}

// ErrParams marks a node whose parameters are missing or of the wrong type
// (a builder bug, reported as an error by the backend that meets it).
var ErrParams = fmt.Errorf("graph: op parameters")

// ParamsOf returns n's parameters as T, or an error naming the node when it
// carries none or another op's.
func ParamsOf[T OpParams](n *Node) (T, error) {
	p, ok := n.Params.(T)
	if !ok {
		var zero T
		return zero, fmt.Errorf("%w: %s carries %T, want %T", ErrParams, n, n.Params, zero)
	}
	if p.Op() != n.Op {
		var zero T
		return zero, fmt.Errorf("%w: %s carries parameters of %s", ErrParams, n, p.Op())
	}
	return p, nil
}

// NormParams parameterise OpRMSNorm.
type NormParams struct {
	Eps float32
}

func (NormParams) Op() Op { return OpRMSNorm }

// RopeMode says which element pairs a rotary embedding rotates.
type RopeMode uint8

const (
	// RopeNormal rotates adjacent pairs (2i, 2i+1) (llama).
	RopeNormal RopeMode = iota
	// RopeNeoX rotates (i, i+dims/2) (GPT-NeoX, Qwen2).
	RopeNeoX
)

func (m RopeMode) String() string {
	switch m {
	case RopeNormal:
		return "normal"
	case RopeNeoX:
		return "neox"
	}
	return fmt.Sprintf("rope_mode(%d)", m)
}

// RopeParams are the rotary embedding settings from the model metadata.
type RopeParams struct {
	Dims      int // rotated dimensions per head (rope.dimension_count)
	Mode      RopeMode
	FreqBase  float32
	FreqScale float32
}

func (RopeParams) Op() Op { return OpRope }

// AttentionParams parameterise OpAttention.
type AttentionParams struct {
	Scale   float32 // applied to q·k before the mask (1/sqrt(head size))
	KVHeads int     // heads of the K/V cache (GQA: a divisor of the q heads)
	KVLen   int     // cache rows the attention reads (the mask's row length)
	// SoftCap, when positive, caps each q·k as SoftCap·tanh(q·k/SoftCap)
	// before the scale and the mask (Gemma 2).
	SoftCap float32
}

func (AttentionParams) Op() Op { return OpAttention }
