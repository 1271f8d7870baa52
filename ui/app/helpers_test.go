package app

import (
	"testing"

	"github.com/minfer/minfer/devices"
)

// bigGPU is a device that holds the test model several times over.
const bigGPU = "reported:free=8192,total=16384"

// fakeDevice answers with a MINFER_FAKE_DEVICE spec.
func fakeDevice(t *testing.T, spec string) func() devices.DeviceMemory {
	t.Helper()
	dm, err := devices.ParseFakeDevice(spec)
	if err != nil {
		t.Fatal(err)
	}
	return func() devices.DeviceMemory { return dm }
}

// noEnv is an empty environment (no MINFER_GPU_MEM).
func noEnv(string) (string, bool) { return "", false }
