package cuda

import (
	"os"
	"strings"
)

// MINFER_CUDA_TWICE is a measurement, not a mode: a comma-separated list
// of kernel-name prefixes whose every launch is issued a second time,
// identically, right after the first (captured graphs then hold both).
// The difference in decode time against a run without it is what those
// launches cost inside a replayed step — PDL overlap, graph scheduling and
// all — where a profiler, which serializes kernels, times each alone.
// Results are not meant to be right with it (a kernel that accumulates
// runs twice); the bench's speed is what it is for.

// twiceFromEnv reads MINFER_CUDA_TWICE (nil when unset or empty).
func twiceFromEnv() []string { return parseTwice(os.Getenv("MINFER_CUDA_TWICE")) }

// parseTwice splits a MINFER_CUDA_TWICE value into its non-empty prefixes.
func parseTwice(v string) []string {
	var out []string
	for _, p := range strings.Split(v, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// launchTwice reports whether kernel fn matches one of the prefixes.
func launchTwice(prefixes []string, fn string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(fn, p) {
			return true
		}
	}
	return false
}
