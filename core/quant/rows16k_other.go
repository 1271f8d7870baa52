//go:build noasm || !amd64

package quant

// col16Q6KSlow: no col16 decode kernels here (Col16SlowerHere).
var col16Q6KSlow = false
