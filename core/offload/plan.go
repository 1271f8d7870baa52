// Package offload is Minfer's layer-offload policy (E5 in docs/memory-policy.md): one Plan
// that says which transformer blocks run on the device, read in three places
// (the loader, the graph builder, the backend scheduler); the request that
// chooses it (--gpu-layers, MINFER_GPU_LAYERS, or the automatic fit); the
// weight budget the fit uses; and the report of where the blocks landed.
//
// Minfer offloads the FIRST GPULayers blocks (a prefix; docs/memory-policy.md says why).
// llama.cpp and Ollama offload the LAST n_gpu_layers blocks; only the
// "n > n_layer means the output too" convention is shared with them.
//
// Everything here is pure: no device calls, no environment reads except
// through the lookup functions callers pass in.
package offload

// Plan is the layer-offload decision for one loaded model.
//
// Blocks 0..GPULayers-1 run on the device and the rest on the CPU. The
// tensors outside any block (token_embd, output_norm, output) are placed by
// the one extra step of the scale: GPULayers == NLayers+1 means "every block
// and the output" — llama.cpp's n_gpu_layers > n_layer convention — while
// GPULayers == NLayers puts every block on the device and keeps the
// unblocked tensors on the CPU. The UI's slider therefore runs 0..NLayers+1,
// its last step reading "all blocks + output".
//
// GPULayers outside 0..NLayers+1 is read as if clamped (NewPlan clamps it),
// so a hand-built Plan cannot make the three readers disagree.
type Plan struct {
	GPULayers, NLayers int
}

// NewPlan builds a Plan with GPULayers clamped to 0..nLayers+1 (a negative
// nLayers counts as 0).
func NewPlan(gpuLayers, nLayers int) Plan {
	nLayers = max(nLayers, 0)
	return Plan{GPULayers: min(max(gpuLayers, 0), nLayers+1), NLayers: nLayers}
}

// clamped is the Plan every method reads, so methods agree on any input.
func (p Plan) clamped() Plan { return NewPlan(p.GPULayers, p.NLayers) }

// DeviceHoldsUnblocked reports whether the tensors outside any block
// (embeddings, final norm, output) go to the device. This is the single
// place the "GPULayers > NLayers" convention is spelled (see Plan).
func (p Plan) DeviceHoldsUnblocked() bool {
	c := p.clamped()
	return c.GPULayers > c.NLayers
}

// DeviceBlocks is how many blocks run on the device: min(GPULayers, NLayers).
func (p Plan) DeviceBlocks() int {
	c := p.clamped()
	return min(c.GPULayers, c.NLayers)
}

// OnDevice reports whether block runs on the device. Blocks outside
// 0..NLayers-1 do not exist and are never on the device.
func (p Plan) OnDevice(block int) bool {
	return block >= 0 && block < p.DeviceBlocks()
}

// AllowsWeight reports whether the loader may register the tensor called
// name on the device: a block's tensor follows its block, any other tensor
// follows DeviceHoldsUnblocked.
func (p Plan) AllowsWeight(name string) bool {
	if block, ok := BlockOf(name); ok {
		return p.OnDevice(block)
	}
	return p.DeviceHoldsUnblocked()
}

// String reads like "18/22 blocks on device" or "22/22 blocks + output on
// device".
func (p Plan) String() string {
	return placement(p.clamped(), "device")
}
