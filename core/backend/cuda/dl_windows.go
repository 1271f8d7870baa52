//go:build windows

package cuda

import "syscall"

var libNames = []string{"nvcuda.dll"}

func dlopen(name string) (uintptr, error) {
	h, err := syscall.LoadLibrary(name)
	return uintptr(h), err
}

func dlsym(lib uintptr, name string) (uintptr, error) {
	return syscall.GetProcAddress(syscall.Handle(lib), name)
}
