package core

import (
	"context"
	"math"
	"testing"

	"github.com/minfer/minfer/core/backend"
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/internal/alloc"
	"github.com/minfer/minfer/internal/ggtest"
)

// gateGPU is a stand-in device that gates runs the way the CUDA backend
// does, on the CPU: ComputeGated keeps the run, OpenGate writes the token
// and runs it; spoil opens a pending gate with zeros (what any other
// request of the CUDA backend does), after which OpenGate reports
// ErrGateOpened.
type gateGPU struct {
	fakeGPU
	st *gateState
}

type gateState struct {
	nodes   []*graph.Node
	tok     alloc.BufRef
	pending bool
	gated   int
}

func (g gateGPU) Gating() bool { return true }

func (g gateGPU) ComputeGated(ctx context.Context, nodes []*graph.Node, tok alloc.BufRef) error {
	if g.st.pending {
		g.spoil()
	}
	g.st.nodes = append(g.st.nodes[:0], nodes...)
	g.st.tok, g.st.pending = tok, true
	g.st.gated++
	return nil
}

func (g gateGPU) open(tok []byte) error {
	g.st.pending = false
	if err := g.WriteHostWindow(g.st.tok, tok); err != nil {
		return err
	}
	return g.Compute(context.Background(), g.st.nodes)
}

func (g gateGPU) OpenGate(tok []byte) error {
	if !g.st.pending {
		return backend.ErrGateOpened
	}
	return g.open(tok)
}

func (g gateGPU) spoil() {
	if g.st.pending {
		g.open(make([]byte, g.st.tok.Len))
	}
}

func (g gateGPU) ReadHostWindowThen(ref alloc.BufRef, dst []byte, then func()) error {
	g.spoil()
	if err := g.ReadHostWindow(ref, dst); err != nil {
		return err
	}
	then()
	return nil
}

var (
	_ backend.Gater      = gateGPU{}
	_ backend.ThenReader = gateGPU{}
)

// TestPrelaunchSameLogits: with the next decode step queued behind a gate
// (prelaunch.go; a CPU stand-in for the device), a session's logits are
// bit for bit those of a session without (MINFER_PRELAUNCH=0) through
// decode steps, a gate opened by another request first (the step then
// runs anew), a prompt chunk, a rewind and a decode step with every logit
// (all of which let a queued step go), and the context's end (no step
// queued past it); queued steps are taken, and sliding-window models queue
// none.
func TestPrelaunchSameLogits(t *testing.T) {
	for _, m := range []struct {
		dir, file string
		ring      bool
	}{
		{"small", "synth-llama-small-Q4_0.gguf", false},
		{"arch", "synth-qwen3-Q8_0.gguf", false},
		{"arch", "synth-gemma3-Q8_0.gguf", true},
	} {
		path := ggtest.Path(t, m.dir, m.file)
		info, err := Inspect(path)
		if err != nil {
			t.Fatal(err)
		}
		run := func(off string) (st gateState, used, anew int, all [][]float32) {
			t.Setenv("MINFER_PRELAUNCH", off)
			dev := gateGPU{newFakeGPU(t, 1, 0), &gateState{}}
			s := loadGated(t, path, info, dev.fakeGPU, dev)
			defer s.Close()
			all = prelaunchScenario(t, s, dev.spoil, true)
			return *dev.st, s.pl.used, s.pl.anew, all
		}
		st, used, anew, with := run("")
		st0, _, _, without := run("0")
		if st0.gated != 0 {
			t.Errorf("%s: MINFER_PRELAUNCH=0 queued %d steps", m.file, st0.gated)
		}
		if m.ring {
			if st.gated != 0 {
				t.Errorf("%s: %d steps queued for a model with sliding-window blocks", m.file, st.gated)
			}
		} else if used == 0 || anew != 1 || st.pending {
			t.Errorf("%s: %d queued steps taken, %d run anew (want some, and 1), one pending at the end %v", m.file, used, anew, st.pending)
		}
		sameLogits(t, m.file, with, without)
		t.Logf("%s: %d steps identical; %d queued, %d taken, %d run anew", m.file, len(with), st.gated, used, anew)
	}
}

// loadGated loads path with every block and the output on dev, a gating
// stand-in (gateGPU or one built on it) over fake, in a 64-token context.
func loadGated(t *testing.T, path string, info *ModelInfo, fake fakeGPU, dev backend.Backend) *Session {
	t.Helper()
	o := withDevice(info.HParams.NLayer+1, fake)
	o.DeviceBackend = dev
	o.Ctx = 64
	s, err := Load(context.Background(), path, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// prelaunchScenario runs the queued-step tests' steps on s and returns
// every step's logits: a prompt, decode steps, spoil (a request that opens
// a queued step's gate first), more decode steps, a prompt chunk, decode
// steps, a rewind, decode steps, a one-token step with all its logits, and
// (toEnd) decode steps up to the context's last position.
func prelaunchScenario(t *testing.T, s *Session, spoil func(), toEnd bool) (all [][]float32) {
	t.Helper()
	ctx := context.Background()
	var logits []float32
	keep := func(l []float32, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		logits = l
		all = append(all, append([]float32(nil), l...))
	}
	decode := func(k int) {
		for range k {
			keep(s.EvalInto(ctx, []int32{int32(argmax(logits))}, logits))
		}
	}
	keep(s.Eval(ctx, []int32{1, 42, 7, 30, 5, 99, 12, 64}, false))
	decode(5)
	spoil()
	decode(5)
	keep(s.Eval(ctx, []int32{5, 6, 7}, false))
	decode(3)
	if err := s.Rewind(s.NPast() - 3); err != nil {
		t.Fatal(err)
	}
	decode(3)
	keep(s.Eval(ctx, []int32{int32(argmax(logits))}, true))
	if toEnd {
		// The last steps queue nothing past the context.
		decode(s.NCtxLen() - s.NPast())
	}
	return all
}

// sameLogits fails t unless with and without hold the same steps' logits
// bit for bit (the queued steps' test: with and without them).
func sameLogits(t *testing.T, name string, with, without [][]float32) {
	t.Helper()
	sameSteps(t, name, with, without, "with the queued steps", "without")
}

// sameSteps fails t unless a and b hold the same steps' logits bit for
// bit; aIs and bIs say what each is in the message.
func sameSteps(t *testing.T, name string, a, b [][]float32, aIs, bIs string) {
	t.Helper()
	if len(a) != len(b) {
		t.Fatalf("%s: %d steps %s, %d %s", name, len(a), aIs, len(b), bIs)
	}
	for i := range a {
		for j := range a[i] {
			if math.Float32bits(a[i][j]) != math.Float32bits(b[i][j]) {
				t.Fatalf("%s step %d logit %d: %v %s, %v %s", name, i, j, a[i][j], aIs, b[i][j], bIs)
			}
		}
	}
}
