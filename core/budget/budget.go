// Package budget holds the one rule E4 (the allocator's gate) and E5 (the
// offload fit) share about a device's memory answer, so the fit and the gate
// always talk about the same number.
package budget

// Usable is the part of a device's reported free memory Minfer may plan to
// fill: the seed's "with a quarter held back" (memory-policy §1 and §2). The
// quarter is kept for what is not known at plan time — KV arenas, the
// activation pool, the driver's own allocations.
//
// It is computed as free − free/4 (not free*3/4) so it cannot overflow and
// so every caller rounds identically: the held-back quarter rounds down, the
// usable part up.
func Usable(free uint64) uint64 {
	return free - free/4
}
