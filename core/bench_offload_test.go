package core

import (
	"context"
	"os"
	"path/filepath"
	"strconv"
	"testing"
)

// BenchmarkModelFileOffload is BenchmarkModelFile with the first
// $MINFER_BENCH_GPU_LAYERS blocks (default: half) on a stand-in device (a
// second CPU backend), so the split path — placement, staging copies at the
// boundary, two worker pools taking turns — is measured without a GPU:
//
//	MINFER_BENCH_MODEL=/tmp/1b-Q4_0.gguf go test ./core -run '^$' \
//	    -bench ModelFileOffload -benchtime 2x -cpuprofile cpu.prof
func BenchmarkModelFileOffload(b *testing.B) {
	path := os.Getenv("MINFER_BENCH_MODEL")
	if path == "" {
		b.Skip("MINFER_BENCH_MODEL is not set")
	}
	if !filepath.IsAbs(path) {
		path = filepath.Join("..", path) // tests run in core/
	}
	info, err := Inspect(path)
	if err != nil {
		b.Fatal(err)
	}
	gl := info.NLayers / 2
	if v := os.Getenv("MINFER_BENCH_GPU_LAYERS"); v != "" {
		if gl, err = strconv.Atoi(v); err != nil {
			b.Fatal(err)
		}
	}
	dev := newFakeGPU(b, 2, 0)
	opts := withDevice(gl, dev)
	opts.Threads = 2
	s, err := Load(context.Background(), path, opts, nil)
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	if s.Plan().GPULayers != gl {
		b.Fatalf("plan %v, want %d device blocks (%s)", s.Plan(), gl, s.OffloadReport().Fallback)
	}
	benchPrefillDecode(b, s)
}
