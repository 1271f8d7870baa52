//go:build noasm || !(amd64 || arm64)

package cpu

// sumSquaresLanes and scaleRow are the Go bodies where there is no
// assembly.
func sumSquaresLanes(x []float32) float64  { return sumSquaresLanesGo(x) }
func scaleRow(out, x []float32, s float32) { scaleRowGo(out, x, s) }
