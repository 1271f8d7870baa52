//go:build !nogui

package ui

import (
	"fmt"
	"strings"

	"github.com/minfer/minfer/internal/units"
)

// nbsp keeps a number and its unit (and digit groups) on one line.
const nbsp = "\u00a0"

// mib formats bytes in MiB: whole MiB with grouped digits, or one decimal
// below 10 MiB so tiny test models do not all read "1 MiB".
func mib(b int64) string {
	const m = 1 << 20
	if b != 0 && b < 10*m && b > -10*m {
		return fmt.Sprintf("%.1f%sMiB", float64(b)/m, nbsp)
	}
	// Round up like alloc.MiB so a non-zero amount never reads as less.
	n := b / m
	if b%m > 0 {
		n++
	}
	return groupDigits(n) + nbsp + "MiB"
}

// groupDigits writes n with a no-break space every three digits ("3 412"),
// the way UI.md spells memory sizes.
func groupDigits(n int64) string { return units.Group(n, nbsp) }

// humanBytes is units.Bytes with the unit kept on the number's line.
func humanBytes(b int64) string { return strings.ReplaceAll(units.Bytes(b), " ", nbsp) }

// humanCount is units.Count with the unit kept on the number's line.
func humanCount(n int64) string { return strings.ReplaceAll(units.Count(n), " ", nbsp) }
