//go:build !windows

package cuda

import "github.com/ebitengine/purego"

// libNames are tried in order.
var libNames = []string{"libcuda.so.1", "libcuda.so"}

func dlopen(name string) (uintptr, error) {
	return purego.Dlopen(name, purego.RTLD_NOW|purego.RTLD_GLOBAL)
}

func dlsym(lib uintptr, name string) (uintptr, error) { return purego.Dlsym(lib, name) }
