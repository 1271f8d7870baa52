// Package alloc is Minfer's memory accounting (E4 in docs/memory-policy.md): the size-class
// ladder, the budget decision, the fallible pool allocator with its
// reservation table, and the MemoryReport.
//
// Memory is accounted before it is allocated: every buffer a pool would
// create is checked as weights + pooled + request <= budget first, and a
// refusal is a typed error naming the four numbers.
package alloc

// classStep is where the ladder switches from powers of two to fixed steps.
const classStep = 16 << 10

// ClassSize rounds n up to its size class: powers of two up to 16 KiB, then
// 16 KiB steps. Two shapes in one class share a pool buffer across rebuilds.
func ClassSize(n int64) int64 {
	if n <= 0 {
		return 0
	}
	if n <= classStep {
		c := int64(1)
		for c < n {
			c <<= 1
		}
		return c
	}
	return (n + classStep - 1) / classStep * classStep
}
