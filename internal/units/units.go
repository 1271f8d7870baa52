// Package units formats sizes and counts the same way in the CLI, the
// reports and the window.
package units

import (
	"fmt"
	"strconv"
	"strings"
)

// Bytes picks the unit: B, KiB, MiB (one decimal) or GiB (two).
func Bytes(n int64) string {
	const k, m, g = 1 << 10, 1 << 20, 1 << 30
	switch {
	case n >= g:
		return fmt.Sprintf("%.2f GiB", float64(n)/g)
	case n >= m:
		return fmt.Sprintf("%.1f MiB", float64(n)/m)
	case n >= k:
		return fmt.Sprintf("%.1f KiB", float64(n)/k)
	}
	return fmt.Sprintf("%d B", n)
}

// Count writes a parameter count: 512, 293 K, 9.4 M, 3.21 B.
func Count(n int64) string {
	switch {
	case n >= 1e9:
		return fmt.Sprintf("%.2f B", float64(n)/1e9)
	case n >= 1e6:
		return fmt.Sprintf("%.1f M", float64(n)/1e6)
	case n >= 1e3:
		return fmt.Sprintf("%.0f K", float64(n)/1e3)
	}
	return strconv.FormatInt(n, 10)
}

// Group writes n with sep between groups of three digits ("3 412").
func Group(n int64, sep string) string {
	s := strconv.FormatInt(n, 10)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	if neg {
		b.WriteByte('-')
	}
	for i, r := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteString(sep)
		}
		b.WriteRune(r)
	}
	return b.String()
}

// MiB writes whole MiB rounded up, so a non-zero amount never reads as 0 and
// the budget, the fit and the refusal all print the same number.
func MiB(b uint64) string {
	return fmt.Sprintf("%d MiB", b/(1<<20)+min(b%(1<<20), 1))
}

// MiBGrouped writes a size for reading at a glance, as the window shows it:
// whole MiB rounded up like MiB, with sep between digit groups and before
// the unit ("3 412 MiB"), except below 10 MiB, where one decimal keeps tiny
// models from all reading "1 MiB" ("1.2 MiB"). It takes a signed amount:
// a headroom can be negative.
func MiBGrouped(b int64, sep string) string {
	const m = 1 << 20
	if b != 0 && b < 10*m && b > -10*m {
		return fmt.Sprintf("%.1f%sMiB", float64(b)/m, sep)
	}
	n := b / m
	if b%m > 0 {
		n++
	}
	return Group(n, sep) + sep + "MiB"
}

// JoinFirst joins the first max items with sep and says how many were left
// out ("a; b; c (and 4 more)"), so a message naming problems stays one
// readable line however many there are.
func JoinFirst(items []string, max int, sep string) string {
	if len(items) <= max {
		return strings.Join(items, sep)
	}
	return fmt.Sprintf("%s (and %d more)", strings.Join(items[:max], sep), len(items)-max)
}
