//go:build linux && cgo

package devices

import (
	"os"
	"strings"
	"testing"
)

// TestNVMLWithoutDriver checks the real go-nvml path on a machine without the
// NVIDIA library: NoDevice naming the library, no crash. It skips where the
// library exists.
func TestNVMLWithoutDriver(t *testing.T) {
	for _, dir := range []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib", "/usr/lib/aarch64-linux-gnu"} {
		if _, err := os.Stat(dir + "/" + nvmlLibrary); err == nil {
			t.Skipf("%s/%s exists", dir, nvmlLibrary)
		}
	}
	s := &nvmlSession{open: systemNVML.open, lookupEnv: os.LookupEnv}
	defer s.close()
	_, primary := s.query()
	n, ok := primary.(NoDevice)
	if !ok || !strings.Contains(n.Reason, nvmlLibrary+" not found") {
		t.Errorf("query without the NVIDIA library = %v, want NoDevice naming %s", primary, nvmlLibrary)
	}
}
