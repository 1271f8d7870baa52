//go:build noasm

package quant

import "testing"

// TestNoasmIsGenericOnly: -tags noasm builds carry no assembly level.
func TestNoasmIsGenericOnly(t *testing.T) {
	if ls := Levels(); len(ls) != 1 || ls[0] != Generic || CurrentLevel() != Generic {
		t.Fatalf("noasm build offers %v (current %s)", ls, CurrentLevel())
	}
}
