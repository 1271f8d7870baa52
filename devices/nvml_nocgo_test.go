//go:build linux && !cgo

package devices

import "testing"

func TestNoCgoSaysWhy(t *testing.T) {
	t.Setenv(FakeDeviceEnv, "")
	want := NoDevice{Reason: "built without cgo (NVML needs it)"}
	if got := QueryGPU(); got != want {
		t.Errorf("QueryGPU() = %v, want %v", got, want)
	}
}
