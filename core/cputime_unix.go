//go:build unix

package core

import (
	"syscall"
	"time"
)

// processCPUTime is the user+system CPU time this process has used so far
// (all threads), or 0 where the platform does not say.
func processCPUTime() time.Duration {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
