package core

import (
	"context"
	"errors"
	"testing"
	"unsafe"

	"github.com/minfer/minfer/core/backend"
	"github.com/minfer/minfer/internal/ggtest"
)

// pinGPU is gateGPU that pins host memory (backend.HostPinner) the way
// the CUDA backend's direct reads do, recording the calls; fail makes
// PinHost refuse.
type pinGPU struct {
	gateGPU
	ps *pinState
}

type pinState struct {
	fail          bool
	pins, unpins  int
	pinned, freed []byte
}

func (g pinGPU) PinHost(p []byte) error {
	g.ps.pins++
	if g.ps.fail {
		return errors.New("no direct reads")
	}
	g.ps.pinned = p
	return nil
}

func (g pinGPU) UnpinHost(p []byte) error {
	g.ps.unpins++
	g.ps.freed = p
	return nil
}

var _ backend.HostPinner = pinGPU{}

// TestEvalIntoPinnedLogits: where the logits' backend pins host memory, a
// decode step of EvalInto returns the session's pinned row (the memory
// PinHost registered, asked once) and every step's logits are bit for bit
// those of a session whose PinHost fails (which reads into dst, asking
// once and not again); Close unpins the row, which stays readable.
func TestEvalIntoPinnedLogits(t *testing.T) {
	path := ggtest.Path(t, "small", "synth-llama-small-Q4_0.gguf")
	info, err := Inspect(path)
	if err != nil {
		t.Fatal(err)
	}
	run := func(fail bool) (*pinState, [][]float32) {
		dev := pinGPU{gateGPU{newFakeGPU(t, 1, 0), &gateState{}}, &pinState{fail: fail}}
		s := loadGated(t, path, info, dev.fakeGPU, dev)
		all := prelaunchScenario(t, s, dev.spoil, false)
		ctx := context.Background()
		dst := make([]float32, 3)
		logits, err := s.EvalInto(ctx, []int32{5}, dst)
		if err != nil {
			t.Fatal(err)
		}
		all = append(all, append([]float32(nil), logits...))
		if !fail {
			if len(dev.ps.pinned) != 4*len(logits) || unsafe.SliceData(dev.ps.pinned) != (*byte)(unsafe.Pointer(unsafe.SliceData(logits))) {
				t.Errorf("a decode step's logits (%d values) are not the pinned row (%d bytes)", len(logits), len(dev.ps.pinned))
			}
		} else if unsafe.SliceData(logits) != unsafe.SliceData(dst[:1]) && cap(dst) >= len(logits) {
			t.Error("without pinning, the logits are not in dst")
		}
		keep := logits[0]
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
		if !fail && (dev.ps.unpins != 1 || unsafe.SliceData(dev.ps.freed) != unsafe.SliceData(dev.ps.pinned)) {
			t.Errorf("Close: %d unpins (of the pinned row: %v), want 1", dev.ps.unpins, unsafe.SliceData(dev.ps.freed) == unsafe.SliceData(dev.ps.pinned))
		}
		if logits[0] != keep {
			t.Error("the row changed at Close")
		}
		return dev.ps, all
	}
	ps, with := run(false)
	ps0, without := run(true)
	if ps.pins != 1 || ps0.pins != 1 || ps0.unpins != 0 {
		t.Errorf("PinHost asked %d and %d times (want once each), %d unpins after a failed pin", ps.pins, ps0.pins, ps0.unpins)
	}
	sameSteps(t, "pinned logits", with, without, "pinned", "into dst")
}
