//go:build !nogui

package ui

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/test"
	"fyne.io/fyne/v2/widget"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/coretest"
	"github.com/minfer/minfer/internal/ggtest"
	"github.com/minfer/minfer/ui/app"
)

const bigGPU = "reported:free=8192,total=16384"

func TestDropFillsCardAndPlan(t *testing.T) {
	h := newHarness(t, bigGPU)
	v := h.v
	if v.modelChat.Visible() || !v.emptyState.Visible() {
		t.Fatalf("before a drop the empty state should show")
	}
	h.drop(stories(t))
	if v.dlg != nil {
		t.Fatalf("unexpected dialog: %s", v.dlg.text.Text)
	}
	info := v.c.Info()
	if info == nil {
		t.Fatal("drop did not open the model")
	}
	if v.emptyState.Visible() || !v.modelChat.Visible() {
		t.Errorf("after a drop the model panel should replace the empty state")
	}
	if v.cardTitle.Text != info.Name {
		t.Errorf("card title %q, want %q", v.cardTitle.Text, info.Name)
	}
	mustContain(t, "card", v.cardFacts.Text, "llama", "F32", "5 blocks", "params", "trained ctx 2048", "no chat template")
	mustContain(t, "device line", v.deviceLine.Text, "MINFER_FAKE_DEVICE", "free 8.00\u00a0GiB of 16.00\u00a0GiB")
	mustContain(t, "budget line", v.budgetLine.Text, "budget 6\u00a0144\u00a0MiB", "¾ of")
	if got, want := v.slider.Max, float64(info.NLayers+1); got != want {
		t.Errorf("slider max %v, want %v (all blocks + output)", got, want)
	}
	if got := int(v.slider.Value); got != v.c.PlanView().Fit || got != info.NLayers+1 {
		t.Errorf("slider at %d, want the auto-fit %d (everything)", got, v.c.PlanView().Fit)
	}
	mustContain(t, "readout", v.readout.Text, "blocks 0–4 on GPU (5/5) + output", "of 6\u00a0144\u00a0MiB budget", "KV cache "+app.MiB(v.c.PlanView().DeviceKV), "headroom")
	if v.readout.Importance != widget.MediumImportance {
		t.Errorf("a plan that fits should not colour the readout (importance %v)", v.readout.Importance)
	}
	// One bar segment per block, the unblocked tensors, KV and activations.
	segs := v.bar.Model().Segs
	if len(segs) != info.NLayers+3 {
		t.Fatalf("bar has %d segments, want %d", len(segs), info.NLayers+3)
	}
	if v.ctxSelect.Selected != "2048" {
		t.Errorf("context %q, want 2048 (the trained length, below the 4096 default)", v.ctxSelect.Selected)
	}
	mustContain(t, "FIRST note", v.firstNote.Text, "FIRST blocks")
	if got := v.c.Recent(); len(got) != 1 || got[0].Path != stories(t) {
		t.Errorf("recent = %+v, want the dropped file", got)
	}
}

func TestSliderMovesPlanAndAutoRestores(t *testing.T) {
	h := newHarness(t, bigGPU)
	v := h.v
	h.drop(stories(t))
	fitReadout := v.readout.Text
	fit := v.c.PlanView().Fit
	cases := []struct {
		name    string
		value   int
		blocks  int
		readout string
		slider  string
	}{
		{"two blocks", 2, 2, "blocks 0–1 on GPU (2/5) · ", "2 of 5 blocks"},
		{"one block", 1, 1, "block 0 on GPU (1/5) · ", "1 of 5 blocks"},
		{"none", 0, 0, "no blocks on GPU (0/5) · everything runs on the CPU", "0 of 5 blocks (CPU only)"},
		{"all blocks, not the output", 5, 5, "blocks 0–4 on GPU (5/5) · ", "5 of 5 blocks"},
		{"all and output", 6, 5, "blocks 0–4 on GPU (5/5) + output", "5 of 5 blocks + output"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			before := v.readout.Text
			v.slider.SetValue(float64(tc.value))
			pv := v.c.PlanView()
			if pv.Plan.GPULayers != tc.value || pv.Plan.DeviceBlocks() != tc.blocks {
				t.Errorf("plan %v, want GPULayers %d (%d blocks)", pv.Plan, tc.value, tc.blocks)
			}
			if v.c.Auto() {
				t.Errorf("moving the slider should leave auto")
			}
			if v.readout.Text == before {
				t.Errorf("readout did not change from %q", before)
			}
			mustContain(t, "readout", v.readout.Text, tc.readout)
			mustContain(t, "slider text", v.sliderText.Text, tc.slider)
			// The bar colours exactly the planned blocks.
			for _, s := range v.bar.Model().Segs {
				if s.Block >= 0 && (s.Kind == app.SegDevice) != pv.Plan.OnDevice(s.Block) {
					t.Errorf("bar segment %q kind %v disagrees with the plan", s.Label, s.Kind)
				}
			}
		})
	}
	test.Tap(v.autoBtn)
	if !v.c.Auto() || v.c.PlanView().Plan.GPULayers != fit || int(v.slider.Value) != fit {
		t.Errorf("after Auto: auto=%v plan %v slider %v, want the fit %d", v.c.Auto(), v.c.PlanView().Plan, v.slider.Value, fit)
	}
	if v.readout.Text != fitReadout {
		t.Errorf("after Auto the readout is %q, want the fit's %q", v.readout.Text, fitReadout)
	}
}

func TestContextChoiceChangesKV(t *testing.T) {
	h := newHarness(t, bigGPU)
	v := h.v
	h.drop(stories(t))
	if got := strings.Join(v.ctxSelect.Options, ","); got != "512,1024,2048" {
		t.Fatalf("context options %s, want 512,1024,2048", got)
	}
	kv2048 := v.c.PlanView().DeviceKV
	v.ctxSelect.SetSelected("512")
	if v.c.CtxLen() != 512 || v.c.PlanView().DeviceKV*4 != kv2048 {
		t.Errorf("ctx %d KV %d, want 512 and a quarter of %d", v.c.CtxLen(), v.c.PlanView().DeviceKV, kv2048)
	}
	mustContain(t, "readout", v.readout.Text, "KV cache "+app.MiB(kv2048/4))
}

func TestBarHoverNamesBlock(t *testing.T) {
	h := newHarness(t, bigGPU)
	v := h.v
	h.drop(stories(t))
	v.bar.Resize(fyne.NewSize(600, v.bar.MinSize().Height))
	m := v.bar.Model()
	for _, want := range []int{0, 3} {
		s := m.Segs[want]
		x := float32(float64(s.Start+s.Bytes/2) / float64(m.Scale) * 600)
		v.bar.MouseMoved(&desktop.MouseEvent{PointEvent: fyne.PointEvent{Position: fyne.NewPos(x, 5)}})
		mustContain(t, "hover", v.barInfo.Text, fmt.Sprintf("block %d · %s · on the GPU", want, app.HumanBytes(s.Bytes)))
	}
	v.bar.MouseOut()
	mustContain(t, "legend", v.barInfo.Text, "hover a block")
}

func TestRefusalDialogShowsNumbersAndOffersFit(t *testing.T) {
	// 10 MiB free: a budget of 7.5 MiB, which the activations of a full
	// prefill plus every block do not fit.
	h := newHarness(t, "reported:free=10,total=16")
	v := h.v
	h.drop(stories(t))
	v.slider.SetValue(v.slider.Max)
	pv := v.c.PlanView()
	r := pv.Refusal
	if r == nil {
		t.Fatalf("plan at the slider's max was not refused: %s", v.readout.Text)
	}
	if v.readout.Importance != widget.DangerImportance {
		t.Errorf("an over-budget readout should be red (importance %v)", v.readout.Importance)
	}
	mustContain(t, "readout", v.readout.Text, "over budget by "+app.MiB(r.Over()))
	test.Tap(v.loadBtn)
	d := h.dialog("refusal")
	mustContain(t, "refusal text", d.text.Text,
		"weights "+app.MiB(r.Weights), "pooled "+app.MiB(r.Pooled), "request "+app.MiB(r.Request), "budget "+app.MiB(r.Budget))
	fit := pv.LargestFitting()
	if fit == 0 {
		t.Fatalf("test setup: want a budget where some blocks fit")
	}
	use := d.button(fmt.Sprintf("Use %d blocks", fit))
	if use == nil || d.button("Cancel") == nil {
		t.Fatalf("refusal dialog buttons %v, want Use %d blocks and Cancel", labels(d), fit)
	}
	test.Tap(use)
	h.waitFor("the load with the fitting count", func() bool { return v.c.Phase() == app.PhaseReady || v.dlg != nil })
	if v.c.Phase() != app.PhaseReady {
		t.Fatalf("Use %d blocks did not load: %s", fit, v.dlg.text.Text)
	}
	if got := v.c.Loaded().Planned.GPULayers; got != fit {
		t.Errorf("loaded with %d blocks, want %d", got, fit)
	}
}

func labels(d *shownDialog) []string {
	var out []string
	for _, b := range d.buttons {
		out = append(out, b.Text)
	}
	return out
}

func TestDeviceQueryFailedDialog(t *testing.T) {
	t.Run("run on CPU", func(t *testing.T) {
		h := newHarness(t, "failed:ERROR_NO_PERMISSION")
		h.drop(stories(t))
		d := h.dialog("device")
		mustContain(t, "device dialog", d.text.Text, "Could not read GPU memory", "ERROR_NO_PERMISSION", "Auto-fit needs the device's answer")
		mustContain(t, "device line", h.v.deviceLine.Text, "ERROR_NO_PERMISSION")
		test.Tap(d.button("Run on CPU"))
		pv := h.v.c.PlanView()
		if pv == nil || pv.Plan.GPULayers != 0 {
			t.Fatalf("Run on CPU: plan %v, want 0 blocks", pv)
		}
		mustContain(t, "readout", h.v.readout.Text, "no blocks on GPU (0/5)")
		h.load()
	})
	t.Run("set a budget", func(t *testing.T) {
		h := newHarness(t, "failed:ERROR_NO_PERMISSION")
		h.drop(stories(t))
		test.Tap(h.dialog("device").button("Set a budget…"))
		b := h.dialog("budget")
		test.Type(b.entries["budget"], "lots")
		test.Tap(b.button("Use budget"))
		if h.v.c.BudgetMiB() != 0 || !b.errText.Visible() {
			t.Fatalf("a non-number budget was accepted (budget %d)", h.v.c.BudgetMiB())
		}
		b.entries["budget"].SetText("4096")
		test.Tap(b.button("Use budget"))
		if h.v.c.BudgetMiB() != 4096 || !h.v.c.Auto() {
			t.Fatalf("budget %d auto %v, want 4096 and auto", h.v.c.BudgetMiB(), h.v.c.Auto())
		}
		pv := h.v.c.PlanView()
		if pv == nil || pv.Plan.GPULayers != pv.Info.NLayers+1 {
			t.Fatalf("with a 4096 MiB budget the plan is %v, want everything", pv)
		}
		mustContain(t, "budget line", h.v.budgetLine.Text, "MINFER_GPU_MEM=4096")
		mustContain(t, "readout", h.v.readout.Text, "of 4\u00a0096\u00a0MiB budget")
	})
	t.Run("slider still plans", func(t *testing.T) {
		h := newHarness(t, "failed:ERROR_NO_PERMISSION")
		h.drop(stories(t))
		test.Tap(h.dialog("device").button("Close"))
		h.v.slider.SetValue(3)
		if pv := h.v.c.PlanView(); pv == nil || pv.Plan.GPULayers != 3 {
			t.Fatalf("an explicit count should plan without the device's answer, got %v (%v)", pv, h.v.c.PlanErr())
		}
		mustContain(t, "readout", h.v.readout.Text, "no budget enforced")
	})
}

func TestNoGPULocksSliderAtZero(t *testing.T) {
	h := newHarness(t, "none:NVIDIA driver library not present")
	h.drop(stories(t))
	if h.v.dlg != nil {
		t.Fatalf("no GPU is not a dialog, got %s", h.v.dlg.text.Text)
	}
	mustContain(t, "device line", h.v.deviceLine.Text, "No GPU found (NVIDIA driver library not present)")
	if !h.v.slider.Disabled() || h.v.slider.Value != 0 {
		t.Errorf("slider disabled=%v at %v, want disabled at 0", h.v.slider.Disabled(), h.v.slider.Value)
	}
}

func TestBadFilesShowDialogAndKeepState(t *testing.T) {
	notGGUF := filepath.Join(t.TempDir(), "notes.gguf")
	if err := os.WriteFile(notGGUF, []byte("these are not the bytes you are looking for"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name  string
		path  string
		wants []string
	}{
		{"truncated in the header", corruptCopy(t, 20), []string{"truncated.gguf", "at byte ", "truncated"}},
		{"truncated in the tensor data", corruptCopy(t, 600000), []string{"truncated.gguf", `tensor "blk.`, "the file has 600000"}},
		{"not a GGUF", notGGUF, []string{"notes.gguf", "not a GGUF file"}},
		{"missing", filepath.Join(t.TempDir(), "gone.gguf"), []string{"gone.gguf", "no such file"}},
		{"unsupported architecture", ggtest.Path(t, "vocab", "ggml-vocab-baichuan.gguf"), []string{"baichuan", "unsupported architecture"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			for _, before := range []string{"empty", "planned"} {
				h := newHarness(t, bigGPU)
				if before == "planned" {
					h.drop(stories(t))
				}
				info := h.v.c.Info()
				h.drop(tc.path)
				d := h.dialog("file")
				mustContain(t, "file dialog", d.text.Text, tc.wants...)
				if h.v.c.Info() != info {
					t.Errorf("from %s: a bad file changed the open model", before)
				}
				test.Tap(d.button("OK"))
				if h.v.dlg != nil {
					t.Errorf("OK did not close the dialog")
				}
			}
		})
	}
}

// sendAndWait types a message, presses Enter and waits for the reply.
func sendAndWait(h *harness, text string) app.ChatMessage {
	h.t.Helper()
	test.Type(h.v.input, text)
	h.v.input.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if !h.v.c.Generating() {
		h.t.Fatalf("Enter did not start a reply (input %q)", h.v.input.Text)
	}
	h.waitFor("the reply", func() bool { return !h.v.c.Generating() })
	msgs := h.v.c.Chat().Messages
	return msgs[len(msgs)-1]
}

func withSampling(s app.Sampling) func(*app.Config) {
	return func(c *app.Config) {
		b := fmt.Sprintf(`{"sampler":{"Temperature":%g,"TopP":1,"MinP":0,"TopK":%d,"RepeatPenalty":1,"RepeatLastN":64,"Seed":%d},"random_seed":false,"max_tokens":%d}`,
			s.Sampler.Temperature, s.Sampler.TopK, s.Sampler.Seed, s.MaxTokens)
		if err := os.WriteFile(filepath.Join(c.ConfigDir, "sampling.json"), []byte(b), 0o644); err != nil {
			panic(err)
		}
	}
}

func TestChatStreamsStopsAndKeepsGoing(t *testing.T) {
	// hold: the next streamed piece holds its generation until the reply's
	// context ends (the Esc below), so the stop lands mid-reply however
	// slowly this machine runs the UI (a 200-token reply of this model
	// can otherwise end before the Esc is handled).
	var hold atomic.Bool
	holdNext := func(c *app.Config) {
		c.TokenHook = func(ctx context.Context) {
			if hold.CompareAndSwap(true, false) {
				select {
				case <-ctx.Done():
				case <-time.After(10 * time.Second):
				}
			}
		}
	}
	h := newHarness(t, bigGPU, withSampling(app.Sampling{Sampler: chat.SamplerSettings{Temperature: 0.8, TopK: 40, Seed: 7}, MaxTokens: 200}), holdNext)
	v := h.v
	h.drop(stories(t))
	if !v.input.Disabled() {
		t.Errorf("the input should be disabled before a load")
	}
	h.load()
	// The plan put blocks on the GPU; there is no GPU backend, so the
	// report must say it fell back, and the summary must not pretend.
	mustContain(t, "summary", v.c.Summary(), "CPU only", "fell back", "no GPU compute backend")
	mustContain(t, "report", v.reportLabel.Text, "FELL BACK TO CPU ONLY")
	if v.panelHolder.Objects[0] != v.summaryRow {
		t.Errorf("Ready should collapse the offload panel to its summary line")
	}
	test.Tap(v.summaryBtn)
	if v.panelHolder.Objects[0] != v.panel {
		t.Errorf("clicking the summary should expand the panel")
	}

	reply := sendAndWait(h, "Once upon a time")
	if len(h.streamed) == 0 {
		t.Errorf("the reply arrived without streaming")
	}
	if reply.Role != "assistant" || strings.TrimSpace(reply.Content) == "" {
		t.Fatalf("reply %+v, want assistant text", reply)
	}
	if reply.Stats == nil || reply.Stats.Generated == 0 || reply.Stats.GenRate <= 0 {
		t.Errorf("reply stats %+v, want tokens and a rate", reply.Stats)
	}
	if n := len(v.msgViews); n != 2 {
		t.Fatalf("message list has %d entries, want 2", n)
	}
	if got := v.msgViews[1].bodyText(); strings.TrimSpace(got) == "" {
		t.Errorf("the list shows an empty reply")
	}
	mustContain(t, "stats", v.statsLabel.Text, "tokens", "tok/s", "ctx ", "5/5 blocks on CPU (GPU fallback)")
	test.Tap(v.msgViews[1].copyBtn)
	if got := h.app.Clipboard().Content(); got != reply.Content {
		t.Errorf("copy put %q on the clipboard, want the reply", got)
	}
	if !v.msgViews[1].regenBtn.Visible() || !v.msgViews[0].editBtn.Visible() {
		t.Errorf("the last reply should offer regenerate and the last message edit")
	}

	// Stop: press Esc as soon as the second reply streams.
	before := len(h.streamed)
	hold.Store(true)
	test.Type(v.input, "The little dog")
	v.input.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	if !v.stopBtn.Visible() || v.sendBtn.Visible() {
		t.Errorf("while generating Send should become Stop")
	}
	h.waitFor("the first streamed text", func() bool { return len(h.streamed) > before || !v.c.Generating() })
	if hold.Load() {
		t.Fatalf("the reply streamed nothing before it ended")
	}
	v.input.TypedKey(&fyne.KeyEvent{Name: fyne.KeyEscape})
	h.waitFor("the stop", func() bool { return !v.c.Generating() })
	last := v.c.Chat().Messages[len(v.c.Chat().Messages)-1]
	if last.Stats == nil || last.Stats.StopReason != chat.StopCancelled || last.Note != "stopped" {
		t.Fatalf("after Esc the reply is %+v, want it stopped", last)
	}
	if !v.sendBtn.Visible() {
		t.Errorf("after the stop Send should be back")
	}

	// The conversation goes on after a stop.
	again := sendAndWait(h, "Then")
	if strings.TrimSpace(again.Content) == "" || again.Note != "" && again.Note != fmt.Sprintf("stopped at the %d-token limit (sampling settings)", 200) {
		t.Errorf("after a stop the next reply is %+v", again)
	}
}

func TestRegenerateEditAndNewChat(t *testing.T) {
	h := newHarness(t, bigGPU, withSampling(app.Sampling{Sampler: chat.SamplerSettings{Temperature: 0.8, TopK: 40, Seed: 3}, MaxTokens: 24}))
	v := h.v
	h.drop(stories(t))
	h.load()
	sendAndWait(h, "Once upon a time")
	id := v.c.Chat().ID

	test.Tap(v.msgViews[1].regenBtn)
	h.waitFor("the regenerated reply", func() bool { return !v.c.Generating() })
	if n := len(v.c.Chat().Messages); n != 2 {
		t.Fatalf("regenerate left %d messages, want 2", n)
	}

	test.Tap(v.msgViews[0].editBtn)
	if v.input.Text != "Once upon a time" || !v.editBanner.Visible() {
		t.Fatalf("edit should put the message in the input, got %q", v.input.Text)
	}
	v.input.SetText("A cat sat")
	v.input.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	h.waitFor("the edited reply", func() bool { return !v.c.Generating() })
	msgs := v.c.Chat().Messages
	if len(msgs) != 2 || msgs[0].Content != "A cat sat" {
		t.Fatalf("after edit-and-resend: %+v", msgs)
	}

	// Ctrl+N opens a new chat; the old one is in the sidebar and reopens.
	v.input.TypedShortcut(shortcutNew)
	if v.c.Chat().ID == id || len(v.c.Chat().Messages) != 0 {
		t.Fatalf("Ctrl+N did not start a new chat")
	}
	if len(v.chatIDs) != 1 || v.chatIDs[0] != id {
		t.Fatalf("sidebar lists %v, want the first chat %s", v.chatIDs, id)
	}
	v.chatList.Select(0)
	if v.c.Chat().ID != id || len(v.msgViews) != 2 {
		t.Fatalf("clicking the sidebar did not reopen %s", id)
	}
}

func TestShiftEnterIsNewline(t *testing.T) {
	h := newHarness(t, bigGPU)
	v := h.v
	h.drop(stories(t))
	h.load()
	test.Type(v.input, "line one")
	v.input.KeyDown(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	v.input.TypedKey(&fyne.KeyEvent{Name: fyne.KeyReturn})
	v.input.KeyUp(&fyne.KeyEvent{Name: desktop.KeyShiftLeft})
	test.Type(v.input, "line two")
	if v.input.Text != "line one\nline two" || v.c.Generating() || len(v.c.Chat().Messages) != 0 {
		t.Fatalf("Shift+Enter: input %q, generating %v, want a newline and no send", v.input.Text, v.c.Generating())
	}
}

func TestGenerationErrorKeepsConversation(t *testing.T) {
	h := newHarness(t, bigGPU)
	v := h.v
	h.drop(stories(t))
	// A context far shorter than the message makes the engine fail.
	v.c.SetCtx(64)
	h.load()
	last := sendAndWait(h, strings.Repeat("Once upon a time there was a little girl. ", 20))
	mustContain(t, "note", last.Note, "Error: the reply ended early", "does not fit the context")
	if n := len(v.c.Chat().Messages); n != 2 || !strings.HasPrefix(v.c.Chat().Messages[0].Content, "Once upon a time") {
		t.Fatalf("the conversation was not kept: %+v", v.c.Chat().Messages)
	}
	if !v.msgViews[1].note.Visible() {
		t.Errorf("the error note is not shown")
	}
	if !v.c.EditLast("Once upon a time") {
		t.Fatal("the message cannot be edited and resent after the error")
	}
	h.waitFor("the retry", func() bool { return !v.c.Generating() })
	if m := v.c.Chat().Messages[1]; strings.HasPrefix(m.Note, "Error") {
		t.Errorf("retry after the error: %+v", m)
	}
}

func TestSamplingDialog(t *testing.T) {
	h := newHarness(t, bigGPU)
	v := h.v
	test.Tap(v.samplingBtn)
	d := h.dialog("sampling")
	for _, k := range []string{"temperature", "top_k", "top_p", "min_p", "repeat_penalty", "seed", "max_tokens"} {
		if d.entries[k] == nil {
			t.Fatalf("sampling dialog has no %s field", k)
		}
	}
	d.entries["top_p"].SetText("1.5")
	test.Tap(d.button("Save"))
	mustContain(t, "error", d.errText.Text, "top_p")
	d.entries["top_p"].SetText("0.9")
	d.entries["seed"].SetText("42")
	d.entries["max_tokens"].SetText("64")
	test.Tap(d.button("Save"))
	s := v.c.Sampling()
	if s.Sampler.TopP != 0.9 || s.RandomSeed || s.Sampler.Seed != 42 || s.MaxTokens != 64 {
		t.Fatalf("saved settings %+v", s)
	}
	// Kept on disk for the next start.
	b, err := os.ReadFile(filepath.Join(h.configDir, "sampling.json"))
	if err != nil || !strings.Contains(string(b), `"max_tokens": 64`) {
		t.Fatalf("sampling.json: %s (%v)", b, err)
	}
}

func TestRecentMarksMissing(t *testing.T) {
	h := newHarness(t, bigGPU)
	p := filepath.Join(t.TempDir(), "copy.gguf")
	b, _ := os.ReadFile(stories(t))
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	h.drop(p)
	h.drop(stories(t))
	os.Remove(p)
	got := h.v.c.Recent()
	if len(got) != 2 || got[0].Path != stories(t) || got[0].Missing || got[1].Path != p || !got[1].Missing {
		t.Fatalf("recent = %+v", got)
	}
	h.v.refresh(app.ChangeRecent)
	var missing int
	for _, o := range h.v.recentBox.Objects {
		if btn, ok := o.(interface{ Disabled() bool }); ok && btn.Disabled() {
			missing++
		}
	}
	if missing != 1 {
		t.Errorf("%d recent entries disabled, want the missing one", missing)
	}
}

func TestDamagedChatReportedAtStart(t *testing.T) {
	dir := t.TempDir()
	chats := filepath.Join(dir, "chats")
	if err := os.MkdirAll(chats, 0o755); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(chats, "20250101-000000-abcdef.json")
	if err := os.WriteFile(bad, []byte(`{"id": "20250101-000000-abcdef", "messages": [`), 0o644); err != nil {
		t.Fatal(err)
	}
	h := newHarness(t, bigGPU, func(c *app.Config) { c.ConfigDir = dir })
	d := h.dialog("store")
	mustContain(t, "store dialog", d.text.Text, "moved aside", "20250101-000000-abcdef.json.damaged-")
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("the damaged file is still in place")
	}
}

func TestLoadCancel(t *testing.T) {
	h := newHarness(t, bigGPU)
	v := h.v
	h.drop(stories(t))
	test.Tap(v.loadBtn)
	if v.c.Phase() != app.PhaseLoading || !v.progressRow.Visible() || !v.slider.Disabled() {
		t.Fatalf("Load: phase %v, progress shown %v, slider locked %v", v.c.Phase(), v.progressRow.Visible(), v.slider.Disabled())
	}
	test.Tap(v.cancelBtn)
	h.waitFor("the cancel or the load", func() bool { return v.c.Phase() != app.PhaseLoading })
	// stories260K may finish loading before the cancel lands; either way
	// the window must be usable and show no error.
	if v.dlg != nil {
		t.Fatalf("cancel showed a dialog: %s", v.dlg.text.Text)
	}
	if v.c.Phase() == app.PhasePlanned && v.loadBtn.Disabled() {
		t.Errorf("after a cancel Load should be available again")
	}
}

func TestReloadOfferedAfterChange(t *testing.T) {
	h := newHarness(t, bigGPU)
	v := h.v
	h.drop(stories(t))
	h.load()
	if v.c.NeedsReload() || !v.loadBtn.Disabled() {
		t.Fatalf("right after the load nothing should need a reload")
	}
	test.Tap(v.summaryBtn)
	v.slider.SetValue(2)
	if !v.c.NeedsReload() || v.loadBtn.Disabled() || !strings.HasPrefix(v.loadBtn.Text, "Reload") {
		t.Fatalf("after moving the slider: needs reload %v, button %q", v.c.NeedsReload(), v.loadBtn.Text)
	}
	h.load()
	if got := v.c.Loaded().Planned.GPULayers; got != 2 {
		t.Errorf("reloaded with %d, want 2", got)
	}
	if strconv.Itoa(v.c.Loaded().NCtx) != v.ctxSelect.Selected {
		t.Errorf("loaded context %d, select %s", v.c.Loaded().NCtx, v.ctxSelect.Selected)
	}
}

// TestGPULayersEnvSetsTheStartingPlan: MINFER_GPU_LAYERS works in the app
// as in the CLI; a bad spelling is reported and auto is kept.
func TestGPULayersEnvSetsTheStartingPlan(t *testing.T) {
	for _, c := range []struct {
		value  string
		layers int // -1: auto
		dialog bool
	}{
		{"2", 2, false},
		{"auto", -1, false},
		{"lots", -1, true},
	} {
		t.Run(c.value, func(t *testing.T) {
			h := newHarness(t, "reported:free=8192,total=16384", func(cfg *app.Config) {
				cfg.Env = func(k string) (string, bool) {
					if k == "MINFER_GPU_LAYERS" {
						return c.value, true
					}
					return "", false
				}
			})
			h.drop(stories(t))
			if auto := h.v.c.Auto(); auto != (c.layers < 0) || (c.layers >= 0 && h.v.c.GPULayers() != c.layers) {
				t.Errorf("auto %v, layers %d", auto, h.v.c.GPULayers())
			}
			if shown := h.v.dlg != nil; shown != c.dialog {
				t.Fatalf("dialog shown %v, want %v", shown, c.dialog)
			}
			if c.dialog {
				mustContain(t, "dialog", h.v.dlg.text.Text, `"lots"`, "MINFER_GPU_LAYERS")
			}
		})
	}
}

// TestTemplatedChatReusesTheCacheAcrossTurns: with a chat template the app
// sends the conversation (system prompt included) as messages, and the
// second turn evaluates only what the first did not cover.
func TestTemplatedChatReusesTheCacheAcrossTurns(t *testing.T) {
	h := newHarness(t, bigGPU, withSampling(app.Sampling{Sampler: chat.SamplerSettings{Temperature: 0, Seed: 1}, MaxTokens: 12}))
	h.drop(coretest.WithChatML(t, stories(t)))
	h.load()
	h.v.systemEntry.SetText("You tell short stories.")
	first := sendAndWait(h, "Tell me a story.")
	second := sendAndWait(h, "Another one.")
	if first.Stats == nil || second.Stats == nil {
		t.Fatalf("replies without stats: %+v %+v", first, second)
	}
	t.Logf("turn 1: %d prompt tokens, %d reused; turn 2: %d prompt tokens, %d reused",
		first.Stats.PromptTokens, first.Stats.ReusedTokens, second.Stats.PromptTokens, second.Stats.ReusedTokens)
	if first.Stats.ReusedTokens != 0 || second.Stats.ReusedTokens < first.Stats.PromptTokens {
		t.Errorf("turn 2 reused %d tokens; turn 1's prompt had %d", second.Stats.ReusedTokens, first.Stats.PromptTokens)
	}
	if strings.TrimSpace(second.Content) == "" {
		t.Error("empty second reply")
	}
}

// TestPlanReadoutShowsSlidingWindowSaving: a Gemma 3 file's plan readout
// names what its sliding-window blocks' KV rings save, and the card shows
// the window (and, for a mixture of experts, the expert counts).
func TestPlanReadoutShowsSlidingWindowSaving(t *testing.T) {
	h := newHarness(t, bigGPU)
	h.drop(ggtest.Path(t, "arch", "synth-gemma3-Q8_0.gguf"))
	if h.v.dlg != nil {
		t.Fatalf("unexpected dialog: %s", h.v.dlg.text.Text)
	}
	v := h.v.c.PlanView()
	if v.KVSaved <= 0 {
		t.Fatalf("plan saved %d KV bytes, want the rings' saving", v.KVSaved)
	}
	mustContain(t, "readout", h.v.readout.Text, "sliding window (10 of 12 blocks) saves "+app.MiB(v.KVSaved))
	mustContain(t, "card", h.v.cardFacts.Text, "gemma3", "sliding window 8 on 10 blocks")
	h.drop(ggtest.Path(t, "arch", "synth-qwen2moe-Q8_0.gguf"))
	mustContain(t, "card", h.v.cardFacts.Text, "qwen2moe", "4 experts, 2 used")
}
