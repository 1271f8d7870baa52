//go:build !nogui

package ui

import (
	"fmt"
	"strconv"
	"strings"
)

// nbsp keeps a number and its unit (and digit groups) on one line.
const nbsp = "\u00a0"

// groupDigits writes n with a no-break space every three digits
// ("3 412"), the way UI.md spells memory sizes.
func groupDigits(n int64) string {
	neg := n < 0
	if neg {
		n = -n
	}
	s := strconv.FormatInt(n, 10)
	var b strings.Builder
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(nbsp)
		}
		b.WriteRune(r)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}

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

// humanBytes picks the unit: KiB, MiB or GiB with two significant decimals.
func humanBytes(b int64) string {
	const (
		k = 1 << 10
		m = 1 << 20
		g = 1 << 30
	)
	switch {
	case b >= g:
		return fmt.Sprintf("%.2f%sGiB", float64(b)/g, nbsp)
	case b >= m:
		return fmt.Sprintf("%.1f%sMiB", float64(b)/m, nbsp)
	case b >= k:
		return fmt.Sprintf("%.1f%sKiB", float64(b)/k, nbsp)
	default:
		return fmt.Sprintf("%d%sB", b, nbsp)
	}
}

// humanCount writes a parameter count as 260 K, 3.21 B, …
func humanCount(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f%sB", float64(n)/1e9, nbsp)
	case n >= 1e6:
		return fmt.Sprintf("%.1f%sM", float64(n)/1e6, nbsp)
	case n >= 1e3:
		return fmt.Sprintf("%.0f%sK", float64(n)/1e3, nbsp)
	default:
		return strconv.FormatInt(n, 10)
	}
}

// blockRange names blocks first..last ("block 3", "blocks 0–17").
func blockRange(first, last int) string {
	if first == last {
		return fmt.Sprintf("block %d", first)
	}
	return fmt.Sprintf("blocks %d–%d", first, last)
}
