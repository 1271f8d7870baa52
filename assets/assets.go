// Package assets holds Minfer's bundled resources.
package assets

import _ "embed"

//go:generate go run make_icon.go

// Icon is the application icon (PNG, drawn by make_icon.go).
//
//go:embed icon.png
var Icon []byte
