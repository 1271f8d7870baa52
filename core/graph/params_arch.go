package graph

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
