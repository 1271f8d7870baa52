package cpu

import (
	"github.com/minfer/minfer/core/quant"
)

// fma32 is a float32 fused multiply-add rounded once, as the hardware
// FMA of ggml's build computes it.
func fma32(a, b, c float32) float32 { return quant.FMA32(a, b, c) }
