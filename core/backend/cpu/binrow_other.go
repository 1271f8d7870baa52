//go:build noasm || !amd64

package cpu

// binRow is binRowGo where there is no assembly.
func binRow(out, x, y []float32, add bool) { binRowGo(out, x, y, add) }
