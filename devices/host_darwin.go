package devices

import (
	"fmt"
	"os"

	"golang.org/x/sys/unix"
)

// hostMemory counts free, speculative and purgeable pages: memory macOS hands
// out without paging anything. It is a lower bound — macOS also reclaims
// inactive and compressible pages on demand — and Source says so.
func hostMemory() (HostMem, error) {
	total, err := unix.SysctlUint64("hw.memsize")
	if err != nil {
		return HostMem{}, fmt.Errorf("%w: sysctl hw.memsize: %w", ErrHostMemoryUnknown, err)
	}
	var pages uint64
	for _, name := range []string{"vm.page_free_count", "vm.page_speculative_count", "vm.page_purgeable_count"} {
		n, err := unix.SysctlUint32(name)
		if err != nil {
			return HostMem{}, fmt.Errorf("%w: sysctl %s: %w", ErrHostMemoryUnknown, name, err)
		}
		pages += uint64(n)
	}
	return HostMem{
		Total:     total,
		Available: min(pages*uint64(os.Getpagesize()), total),
		Source:    "sysctl free+speculative+purgeable pages (a lower bound: macOS also reclaims inactive pages)",
	}, nil
}
