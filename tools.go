//go:build tools

package main

import (
	_ "fyne.io/fyne/v2/app"
	_ "fyne.io/fyne/v2/test"
	_ "github.com/NVIDIA/go-nvml/pkg/nvml"
	_ "github.com/NVIDIA/go-nvml/pkg/nvml/mock"
	_ "github.com/ardanlabs/jinja"
	_ "github.com/dlclark/regexp2/v2"
	_ "github.com/ebitengine/purego"
	_ "github.com/klauspost/cpuid/v2"
	_ "github.com/sqweek/dialog"
	_ "golang.org/x/sys/unix"
)
