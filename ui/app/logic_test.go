package app

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/internal/ggtest"
)

func TestFormat(t *testing.T) {
	cases := []struct {
		name, got, want string
	}{
		{"grouped MiB", MiB(3412 << 20), "3\u00a0412\u00a0MiB"},
		{"rounded up", MiB(4096<<20 + 1), "4\u00a0097\u00a0MiB"},
		{"small with a decimal", MiB(1310720), "1.2\u00a0MiB"},
		{"zero", MiB(0), "0\u00a0MiB"},
		{"GiB", HumanBytes(2 << 30), "2.00\u00a0GiB"},
		{"KiB", HumanBytes(181760), "177.5\u00a0KiB"},
		{"params B", HumanCount(3_210_000_000), "3.21\u00a0B"},
		{"params K", HumanCount(260_000), "260\u00a0K"},
		{"one block", offload.BlockRange(3, 3), "block 3"},
		{"blocks", offload.BlockRange(0, 17), "blocks 0–17"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			if tc.got != tc.want {
				t.Errorf("got %q, want %q", tc.got, tc.want)
			}
		})
	}
}

func TestContextChoices(t *testing.T) {
	cases := []struct {
		trained int
		want    []int
		def     int
	}{
		{128, []int{128}, 128},
		{512, []int{512}, 512},
		{2048, []int{512, 1024, 2048}, 2048},
		{3000, []int{512, 1024, 2048, 3000}, 3000},
		{131072, []int{512, 1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072}, 4096},
		{0, []int{512, 1024, 2048, 4096}, 4096},
	}
	for _, tc := range cases {
		t.Run(fmt.Sprintf("trained %d", tc.trained), func(t *testing.T) {
			if got := ContextChoices(tc.trained); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("ContextChoices(%d) = %v, want %v", tc.trained, got, tc.want)
			}
			if got := defaultCtx(tc.trained); got != tc.def {
				t.Errorf("defaultCtx(%d) = %d, want %d", tc.trained, got, tc.def)
			}
		})
	}
}

// fitFromView marks a case whose marker follows the view's own auto-fit.
const fitFromView = -2

func TestOffloadBarModel(t *testing.T) {
	info, err := core.Inspect(ggtest.Path(t, "models", "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	plan := func(device string, layers int, auto bool) *core.PlanView {
		req := offload.Request{Layers: layers, Source: "test"}
		if auto {
			req = offload.Request{Auto: true, Source: "test"}
		}
		v, err := core.Plan(info, core.PlanOptions{GPULayers: req, Device: fakeDevice(t, device), Env: noEnv})
		if err != nil {
			t.Fatal(err)
		}
		return v
	}
	kinds := func(m BarModel) string {
		var b strings.Builder
		for _, s := range m.Segs {
			b.WriteByte("DHKA"[s.Kind])
		}
		return b.String()
	}
	cases := []struct {
		name      string
		view      *core.PlanView
		kinds     string
		offScale  bool
		fitAtSeg  int // the segment the auto-fit marker follows (-1: no marker)
		wantRed   bool
		budgetSet bool
	}{
		// Device blocks, then KV and activations, then the CPU's blocks,
		// the unblocked tensors last.
		{"two blocks", plan(bigGPU, 2, false), "DDKAHHHH", true, 7, false, true},
		{"everything", plan(bigGPU, 6, false), "DDDDDDKA", true, 5, false, true},
		{"nothing", plan(bigGPU, 0, false), "HHHHHH", true, 5, false, true},
		// The weights fit 7.5 MiB but their KV cache and activations do not:
		// auto (and its marker) backs off to a plan the gate admits.
		{"tight budget", plan("reported:free=10,total=16", 6, false), "DDDDDDKA", false, fitFromView, true, true},
		{"failed query, explicit", plan("failed:ERROR_UNKNOWN", 3, false), "DDDKAHHH", false, -1, false, false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			m := OffloadBarModel(tc.view)
			if got := kinds(m); got != tc.kinds {
				t.Errorf("segments %s, want %s", got, tc.kinds)
			}
			var pos int64
			for _, s := range m.Segs {
				if s.Start != pos {
					t.Errorf("segment %q starts at %d, want %d", s.Label, s.Start, pos)
				}
				pos += s.Bytes
			}
			if m.Scale < pos && !m.BudgetOffScale {
				t.Errorf("scale %d is less than the %d bytes drawn", m.Scale, pos)
			}
			if m.BudgetOffScale != tc.offScale {
				t.Errorf("budget off scale = %v, want %v", m.BudgetOffScale, tc.offScale)
			}
			if (m.Budget > 0) != tc.budgetSet {
				t.Errorf("budget %d, want set=%v", m.Budget, tc.budgetSet)
			}
			if tc.fitAtSeg == fitFromView {
				if tc.view.Fit >= tc.view.WeightFit || tc.view.Fit < 1 {
					t.Fatalf("fit %d, weight fit %d: the case no longer exercises a lowered auto-fit", tc.view.Fit, tc.view.WeightFit)
				}
				tc.fitAtSeg = tc.view.Fit - 1
			}
			if tc.fitAtSeg >= 0 {
				if s := m.Segs[tc.fitAtSeg]; m.FitAt != s.Start+s.Bytes {
					t.Errorf("auto-fit marker at %d, want after %q (%d)", m.FitAt, s.Label, s.Start+s.Bytes)
				}
			} else if m.FitAt != -1 {
				t.Errorf("auto-fit marker at %d, want none (there is no fit without the device's answer)", m.FitAt)
			}
			var deviceEnd int64
			for _, s := range m.Segs {
				if s.OnDevice() {
					deviceEnd = s.Start + s.Bytes
				}
			}
			if red := m.Budget > 0 && deviceEnd > m.Budget; red != tc.wantRed {
				t.Errorf("overflow = %v, want %v (device part ends at %d, budget %d)", red, tc.wantRed, deviceEnd, m.Budget)
			}
		})
	}
}

// TestPumpCoalesces checks the bridge: tokens arrive in few posts, in
// order, and a non-token event is not overtaken by pending text.
func TestPumpCoalesces(t *testing.T) {
	events := make(chan any)
	var mu sync.Mutex
	var posts int
	var applied []any
	post := func(f func()) {
		mu.Lock()
		posts++
		mu.Unlock()
		f()
	}
	apply := func(ev any) {
		mu.Lock()
		applied = append(applied, ev)
		mu.Unlock()
	}
	done := make(chan struct{})
	go func() { pump(events, post, apply, 40*time.Millisecond); close(done) }()
	for i := 0; i < 200; i++ {
		events <- tokenEvent{id: 1, text: "x"}
	}
	events <- replyEvent{id: 1, text: strings.Repeat("x", 200)}
	close(events)
	<-done
	var text strings.Builder
	for i, ev := range applied {
		switch e := ev.(type) {
		case tokenEvent:
			text.WriteString(e.text)
		case replyEvent:
			if i != len(applied)-1 {
				t.Errorf("the reply event overtook streamed text")
			}
		}
	}
	if text.String() != strings.Repeat("x", 200) {
		t.Errorf("streamed %d bytes, want 200", text.Len())
	}
	if posts > 10 {
		t.Errorf("%d posts for 200 tokens sent at once: not coalesced", posts)
	}
}

// TestWorkerCancelledLoad: a load whose context is already cancelled
// fails with the context's error and loads nothing.
func TestWorkerCancelledLoad(t *testing.T) {
	w := startWorker()
	defer w.close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	w.send(loadRequest{id: 1, ctx: ctx, path: ggtest.Path(t, "models", "stories260K.gguf")})
	ev := <-w.events
	f, ok := ev.(loadFailedEvent)
	if !ok || f.err != context.Canceled {
		t.Fatalf("event %#v, want a cancelled load", ev)
	}
	w.send(generateRequest{id: 2, ctx: context.Background(), complete: true, prompt: "x"})
	if r, ok := (<-w.events).(replyEvent); !ok || r.err != errNotLoaded {
		t.Fatalf("generate without a model: %#v", r)
	}
}
