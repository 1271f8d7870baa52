package app

import (
	"strings"

	"github.com/minfer/minfer/internal/units"
)

// nbsp keeps a number and its unit (and digit groups) on one line.
const nbsp = "\u00a0"

// MiB is units.MiBGrouped with no-break spaces: the window's memory sizes.
func MiB(b int64) string { return units.MiBGrouped(b, nbsp) }

// HumanBytes is units.Bytes with the unit kept on the number's line.
func HumanBytes(b int64) string { return strings.ReplaceAll(units.Bytes(b), " ", nbsp) }

// HumanCount is units.Count with the unit kept on the number's line.
func HumanCount(n int64) string { return strings.ReplaceAll(units.Count(n), " ", nbsp) }
