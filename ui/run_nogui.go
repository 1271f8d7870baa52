//go:build nogui

// Package ui is Minfer's window. This build (tag nogui) leaves it out so a
// headless binary runs on GPU servers without X or GL libraries.
package ui

import "errors"

// Run reports that this binary has no window.
func Run(args []string) error {
	return errors.New("this build has no window (built with -tags nogui); run 'minfer help' for the commands")
}
