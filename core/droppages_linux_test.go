//go:build linux

package core

import (
	"bufio"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/minfer/minfer/internal/ggtest"
)

// mappingRss is the resident bytes of this process's mappings of path
// (/proc/self/smaps), and whether there is one.
func mappingRss(t *testing.T, path string) (int64, bool) {
	t.Helper()
	abs, err := filepath.Abs(path)
	if err != nil {
		t.Fatal(err)
	}
	if real, err := filepath.EvalSymlinks(abs); err == nil {
		abs = real
	}
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		t.Skipf("no smaps: %v", err)
	}
	defer f.Close()
	var rss int64
	found, in := false, false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		fields := strings.Fields(line)
		if len(fields) >= 5 && strings.Contains(fields[0], "-") && !strings.HasSuffix(fields[0], ":") {
			in = len(fields) >= 6 && fields[len(fields)-1] == abs
			found = found || in
			continue
		}
		if in && len(fields) == 3 && fields[0] == "Rss:" {
			kb, err := strconv.ParseInt(fields[1], 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			rss += kb << 10
		}
	}
	return rss, found
}

// TestCopiedWeightsLeaveTheMappingsResidentSet: with the weights copied,
// the loader drops the file's pages from the process's resident set once
// each tensor is copied (the mapping's Rss after a load and a step is a
// small part of the weights), while mapped weights stay resident after a
// step reads them (the same measurement seeing them).
func TestCopiedWeightsLeaveTheMappingsResidentSet(t *testing.T) {
	path := ggtest.Path(t, "synth", "synth-llama-Q8_0.gguf")
	for _, mode := range []string{"copy", "map"} {
		t.Run(mode, func(t *testing.T) {
			opts := cpuOnly()
			opts.CPUWeights = mode
			s, err := Load(context.Background(), path, opts, nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if _, err := s.Eval(context.Background(), []int32{1, 2, 3}, false); err != nil {
				t.Fatal(err)
			}
			rss, ok := mappingRss(t, path)
			if !ok {
				t.Fatalf("no mapping of %s in smaps", path)
			}
			weights := s.File().TensorBytes()
			t.Logf("%s: mapping resident %d of %d weight bytes", mode, rss, weights)
			if mode == "copy" && rss > weights/10 {
				t.Errorf("copied weights: the mapping keeps %d resident bytes of %d", rss, weights)
			}
			if mode == "map" && rss < weights/2 {
				t.Errorf("mapped weights after a step: only %d of %d resident (the measurement sees nothing)", rss, weights)
			}
		})
	}
}
