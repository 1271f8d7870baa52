package graph

import "fmt"

// OpParams are an op's typed parameters: each op that takes parameters has
// its own struct whose Op method names the op it belongs to. The builder
// stores it in Node.Params and backends read it with ParamsOf.
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

// ScaleParams parameterise OpScale.
type ScaleParams struct{ S float32 }

func (ScaleParams) Op() Op { return OpScale }

// SoftCapParams parameterise OpSoftCap: cap·tanh(x·(1/cap)), in float32 as
// ggml's scale, tanh, scale sequence computes it.
type SoftCapParams struct{ Cap float32 }

func (SoftCapParams) Op() Op { return OpSoftCap }

// TopKParams parameterise OpTopK.
type TopKParams struct{ K int }

func (TopKParams) Op() Op { return OpTopK }

// MoEWeightsParams parameterise OpMoEWeights.
type MoEWeightsParams struct {
	// Normalize divides the K picked probabilities by their sum (Mixtral);
	// Qwen-MoE uses them as they are.
	Normalize bool
}

func (MoEWeightsParams) Op() Op { return OpMoEWeights }
