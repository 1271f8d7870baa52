//go:build noasm || !(amd64 || arm64)

package cpu

// siluLanes and swigluLanes are the Go bodies where there is no assembly.
func siluLanes(out, x []float32)      { siluLanesGo(out, x) }
func swigluLanes(out, g, u []float32) { swigluLanesGo(out, g, u) }
