package core

import (
	"context"
	"testing"

	"github.com/minfer/minfer/core/backend/cuda"
	"github.com/minfer/minfer/internal/ggtest"
)

// TestGPUPrelaunchSameLogits: with the next decode step queued behind its
// gate (prelaunch.go) a session gives the same logits, bit for bit, as
// without (MINFER_PRELAUNCH=0) through decode steps, a request that opens
// the gate first (the queued step then runs anew), a prompt chunk and a
// rewind after queued steps (which let them go); and the queued steps were
// taken.
func TestGPUPrelaunchSameLogits(t *testing.T) {
	dm := gpuDevice(t)
	for _, name := range []string{"synth-llama-small-Q4_0.gguf", "synth-llama-small-Q4_K_M.gguf"} {
		path := ggtest.Path(t, "small", name)
		info, err := Inspect(path)
		if err != nil {
			t.Fatal(err)
		}
		run := func(off string) (used, anew int, all [][]float32) {
			t.Setenv("MINFER_PRELAUNCH", off)
			s, err := Load(context.Background(), path, onGPU(dm, info.HParams.NLayer+1, nil), nil)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			all = prelaunchScenario(t, s, func() {
				// A request of the device: it opens the queued step's
				// gate with token 0.
				if _, _, err := s.bes[1].(*cuda.Backend).MemInfo(); err != nil {
					t.Fatal(err)
				}
			}, false)
			return s.pl.used, s.pl.anew, all
		}
		used, anew, with := run("")
		_, _, without := run("0")
		if used == 0 || anew == 0 {
			t.Errorf("%s: %d queued steps taken, %d run anew; want some of both", name, used, anew)
		}
		sameLogits(t, name, with, without)
		t.Logf("%s: %d steps identical; %d queued steps taken, %d run anew", name, len(with), used, anew)
	}
}
