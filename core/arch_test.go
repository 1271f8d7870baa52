package core

import (
	"context"
	"errors"
	"math"
	"math/rand"
	"strings"
	"testing"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/core/graph"

	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/coretest"
	"github.com/minfer/minfer/internal/ggtest"
)

func randomTokens(n, vocab int, seed int64) []int32 {
	r := rand.New(rand.NewSource(seed))
	out := make([]int32, n)
	for i := range out {
		out[i] = int32(r.Intn(vocab))
	}
	return out
}

// TestSlidingRingMatchesFullCache: phi3 slides on every block (window 16),
// so past 16+512 positions its KV rings wrap. The logits of every position
// must equal those of a session keeping every position (SWAFull) but for
// the order the attention sums its rows in (the ring's, not the
// positions'): NMSE ≤ 1e-10 (measured: 0). A 700-token prompt runs as a
// 512-token step and a 188-token one, then single-token steps.
func TestSlidingRingMatchesFullCache(t *testing.T) {
	if testing.Short() {
		t.Skip("-short: 1480 positions of two sessions")
	}
	path := ggtest.Path(t, "arch", "synth-phi3-Q8_0.gguf")
	ring, err := Load(context.Background(), path, cpuOnly(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ring.Close()
	o := cpuOnly()
	o.SWAFull = true
	full, err := Load(context.Background(), path, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	if rows := ring.H.CacheRows(0, ring.NCtxLen()); rows != 16+MaxUBatch {
		t.Fatalf("ring of %d rows, want %d", rows, 16+MaxUBatch)
	}
	if r, f := ring.MemoryReport()[0].PersistentBytes, full.MemoryReport()[0].PersistentBytes; r*int64(ring.NCtxLen()) != f*(16+MaxUBatch) {
		t.Errorf("ring KV %d bytes, full %d: want the ratio %d/%d", r, f, 16+MaxUBatch, ring.NCtxLen())
	}
	toks := randomTokens(700, ring.H.NVocab, 1)
	a, err := ring.Eval(context.Background(), toks, true)
	if err != nil {
		t.Fatal(err)
	}
	b, err := full.Eval(context.Background(), toks, true)
	if err != nil {
		t.Fatal(err)
	}
	worst := 0.0
	nv := ring.H.NVocab
	for p := 0; p < len(toks); p++ {
		worst = max(worst, nmse(a[p*nv:(p+1)*nv], b[p*nv:(p+1)*nv]))
	}
	for _, tok := range randomTokens(40, nv, 2) {
		a, err := ring.Eval(context.Background(), []int32{tok}, false)
		if err != nil {
			t.Fatal(err)
		}
		b, err := full.Eval(context.Background(), []int32{tok}, false)
		if err != nil {
			t.Fatal(err)
		}
		worst = max(worst, nmse(a, b))
	}
	t.Logf("worst position NMSE ring vs full cache: %.3g", worst)
	if worst > 1e-10 {
		t.Errorf("ring and full cache differ: worst position NMSE %.3g", worst)
	}
}

// TestSlidingRingRewind: a rewind the ring can serve keeps working; one
// past what the ring still holds is refused with ErrRewindWindow, and
// rewinding to 0 always works.
func TestSlidingRingRewind(t *testing.T) {
	s, err := Load(context.Background(), ggtest.Path(t, "arch", "synth-phi3-Q8_0.gguf"), cpuOnly(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	toks := randomTokens(600, s.H.NVocab, 3)
	want, err := s.Eval(context.Background(), toks[:560], false)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Eval(context.Background(), toks[560:], false); err != nil {
		t.Fatal(err)
	}
	if err := s.Rewind(560); err != nil {
		t.Fatalf("rewind within the ring: %v", err)
	}
	// Re-evaluating the last token of the kept prefix gives its logits again.
	if err := s.Rewind(559); err != nil {
		t.Fatal(err)
	}
	got, err := s.Eval(context.Background(), toks[559:560], false)
	if err != nil {
		t.Fatal(err)
	}
	if e := nmse(got, want); e != 0 {
		t.Errorf("logits after a rewind differ: NMSE %.3g", e)
	}
	if err := s.Rewind(10); !errors.Is(err, ErrRewindWindow) {
		t.Errorf("rewind far behind the ring: %v, want ErrRewindWindow", err)
	}
	if s.NPast() != 560 {
		t.Errorf("a refused rewind moved the cache to %d", s.NPast())
	}
	if err := s.Rewind(0); err != nil {
		t.Error(err)
	}
}

// TestGemma3PlanChargesSlidingWindowOnly: Gemma 3 keeps a ring of
// window + one step in its ten sliding blocks and every position in its two
// global ones; the plan charges exactly that, says what it saved, and the
// session's E4 accounting allocates the same bytes.
func TestGemma3PlanChargesSlidingWindowOnly(t *testing.T) {
	path := ggtest.Path(t, "arch", "synth-gemma3-Q8_0.gguf")
	info, err := Inspect(path)
	if err != nil {
		t.Fatal(err)
	}
	const ctx, window, kvRowBytes = 8192, 8, 32 * 2 // one KV head of 32, F16
	v, err := Plan(info, PlanOptions{Ctx: ctx, Device: cpuOnly().Device, Env: cpuOnly().Env})
	if err != nil {
		t.Fatal(err)
	}
	want := int64(2 * kvRowBytes * (10*(window+MaxUBatch) + 2*ctx))
	full := int64(2 * kvRowBytes * 12 * ctx)
	if v.HostKV != want || v.DeviceKV != 0 {
		t.Errorf("plan charges KV host %d, device %d; want %d on the host", v.HostKV, v.DeviceKV, want)
	}
	if v.KVSaved != full-want {
		t.Errorf("plan says the rings save %d, want %d", v.KVSaved, full-want)
	}
	o := cpuOnly()
	o.Ctx = ctx
	s, err := Load(context.Background(), path, o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if got := s.MemoryReport()[0].PersistentBytes; got != want {
		t.Errorf("session allocated %d KV bytes, the plan charged %d", got, want)
	}
	for il := 0; il < s.H.NLayer; il++ {
		if sliding := il%6 != 5; s.H.Sliding(il) != sliding {
			t.Errorf("block %d sliding = %v, want %v", il, s.H.Sliding(il), sliding)
		}
	}
	if f := v.H; f.KVBytes(ctx, gguf.TypeF16, nil) != want {
		t.Errorf("HParams.KVBytes %d, want %d", f.KVBytes(ctx, gguf.TypeF16, nil), want)
	}
}

// TestMoEDecodeReadsOnlySelectedExperts: one decode step of the llama
// mixture of experts (4 experts, 2 used) reads every dense weight it
// multiplies and, of each block's three expert tensors, exactly the two
// selected experts' rows: half of them.
func TestMoEDecodeReadsOnlySelectedExperts(t *testing.T) {
	s, err := Load(context.Background(), ggtest.Path(t, "arch", "synth-llama-moe-Q8_0.gguf"), cpuOnly(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if _, err := s.Eval(context.Background(), []int32{1, 45, 496, 173}, false); err != nil {
		t.Fatal(err)
	}
	var dense, experts int64
	for _, sp := range s.arch.Tensors(s.H) {
		ti, ok := s.file.Tensor(sp.Name)
		if !ok || len(ti.Dims) == 1 || sp.Name == "token_embd.weight" {
			continue // vectors are multiplied element-wise; the embedding is a row lookup
		}
		if len(ti.Dims) == 3 {
			experts += ti.NBytes()
		} else {
			dense += ti.NBytes()
		}
	}
	want := dense + experts*int64(s.H.NExpertUsed)/int64(s.H.NExpert)
	before := s.cpu.WeightBytesRead()
	if _, err := s.Eval(context.Background(), []int32{170}, false); err != nil {
		t.Fatal(err)
	}
	got := s.cpu.WeightBytesRead() - before
	t.Logf("decode step read %d weight bytes: dense %d + experts %d of %d", got, dense, got-dense, experts)
	if got != want {
		t.Errorf("decode read %d weight bytes, want %d (dense %d + %d/%d of experts %d)", got, want, dense, s.H.NExpertUsed, s.H.NExpert, experts)
	}
}

// TestArchitecturesHParams: the per-family reading of each arch/ file.
func TestArchitecturesHParams(t *testing.T) {
	for _, c := range []struct {
		file                  string
		arch                  string
		window, slidingBlocks int
		experts, used         int
	}{
		{"synth-gemma2-Q8_0.gguf", "gemma2", 8, 13, 0, 0},
		{"synth-gemma3-Q8_0.gguf", "gemma3", 8, 10, 0, 0},
		{"synth-phi3-Q8_0.gguf", "phi3", 16, 4, 0, 0},
		{"synth-qwen3-Q8_0.gguf", "qwen3", 0, 0, 0, 0},
		{"synth-llama-moe-Q8_0.gguf", "llama", 0, 0, 4, 2},
		{"synth-qwen2moe-Q8_0.gguf", "qwen2moe", 0, 0, 4, 2},
	} {
		info, err := Inspect(ggtest.Path(t, "arch", c.file))
		if err != nil {
			t.Fatal(err)
		}
		if info.Problem != "" || info.HParams == nil {
			t.Errorf("%s: %s", c.file, info.Problem)
			continue
		}
		h := info.HParams
		if h.Arch != c.arch || h.SlidingWindow != c.window || h.SlidingBlocks() != c.slidingBlocks || h.NExpert != c.experts || h.NExpertUsed != c.used {
			t.Errorf("%s: %s window %d on %d blocks, experts %d/%d; want %s %d on %d, %d/%d", c.file, h.Arch, h.SlidingWindow, h.SlidingBlocks(), h.NExpertUsed, h.NExpert,
				c.arch, c.window, c.slidingBlocks, c.used, c.experts)
		}
		if info.ExpertCount != c.experts || info.ExpertUsed != c.used || info.SlidingWindow != c.window {
			t.Errorf("%s: inspect shows experts %d/%d, window %d", c.file, info.ExpertUsed, info.ExpertCount, info.SlidingWindow)
		}
	}
}

// TestConversationFallsBackWhenRingCannotRewind: a second completion that
// shares only a short prefix with a long first one cannot reuse the
// sliding-window cache (the ring lost that window): the conversation
// re-evaluates from the start instead of failing; one that extends the
// first reuses it.
func TestConversationFallsBackWhenRingCannotRewind(t *testing.T) {
	s, err := Load(context.Background(), ggtest.Path(t, "arch", "synth-phi3-Q8_0.gguf"), cpuOnly(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	tok, err := s.Tokenizer()
	if err != nil {
		t.Fatal(err)
	}
	conv := chat.NewConversation(s, tok, nil)
	opts := greedy()
	opts.MaxTokens = 2
	long := strings.Repeat("Once upon a time there was a cat. ", 60)
	if _, st, err := conv.Complete(context.Background(), long, opts, nil); err != nil || st.PromptTokens < 600 {
		t.Fatalf("first completion: %v, %+v (want a prompt past the ring)", err, st)
	}
	_, st, err := conv.Complete(context.Background(), long+"The end.", opts, nil)
	if err != nil || st.ReusedTokens == 0 {
		t.Fatalf("extending completion: %v, reused %d", err, st.ReusedTokens)
	}
	_, st, err = conv.Complete(context.Background(), "Once upon a dog.", opts, nil)
	if err != nil {
		t.Fatal(err)
	}
	if st.ReusedTokens != 0 || st.PrefillTokens != st.PromptTokens {
		t.Errorf("short completion %+v: want a full re-evaluation", st)
	}
}

// TestMoEDecodeBytesScaleWithExpertsUsed: the same 4-expert model with
// expert_used_count 1, 2 and 4 (the file's metadata rewritten): a decode
// step reads the dense weights plus used/4 of the expert tensors, so the
// expert bytes grow with the experts used, not with the experts held.
func TestMoEDecodeBytesScaleWithExpertsUsed(t *testing.T) {
	src := ggtest.Path(t, "arch", "synth-llama-moe-Q8_0.gguf")
	var perUsed []int64
	for _, used := range []uint32{1, 2, 4} {
		path := coretest.Rewrite(t, src, func(_ *gguf.File, b *gguf.Builder) error {
			b.SetUint32("llama.expert_used_count", used)
			return b.Err()
		})
		s, err := Load(context.Background(), path, cpuOnly(), nil)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := s.Eval(context.Background(), []int32{1, 45, 496}, false); err != nil {
			t.Fatal(err)
		}
		before := s.cpu.WeightBytesRead()
		if _, err := s.Eval(context.Background(), []int32{173}, false); err != nil {
			t.Fatal(err)
		}
		perUsed = append(perUsed, s.cpu.WeightBytesRead()-before)
		s.Close()
	}
	step := perUsed[1] - perUsed[0] // one more expert in every block
	t.Logf("weight bytes per decode token with 1, 2, 4 experts used: %v", perUsed)
	if step <= 0 || perUsed[2]-perUsed[1] != 2*step {
		t.Errorf("bytes per token %v: want equal steps per expert used", perUsed)
	}
}

// TestPhi3RopeFactorsChosenByContext: a phi3 file carrying
// rope_factors_short/long uses the short ones up to the original training
// context and the long ones beyond it (llama.cpp's choice); factors of 1
// change nothing.
func TestPhi3RopeFactorsChosenByContext(t *testing.T) {
	src := ggtest.Path(t, "arch", "synth-phi3-Q8_0.gguf")
	f32 := func(v float32, n int) []byte {
		out := make([]byte, 4*n)
		for i := 0; i < n; i++ {
			bits := math.Float32bits(v)
			out[4*i], out[4*i+1], out[4*i+2], out[4*i+3] = byte(bits), byte(bits>>8), byte(bits>>16), byte(bits>>24)
		}
		return out
	}
	withFactors := func(short, long float32) string {
		return coretest.Rewrite(t, src, func(_ *gguf.File, b *gguf.Builder) error {
			b.SetUint32("phi3.rope.scaling.original_context_length", 1024)
			if err := b.AddTensor("rope_factors_short.weight", gguf.TypeF32, []int64{8}, f32(short, 8)); err != nil {
				return err
			}
			return b.AddTensor("rope_factors_long.weight", gguf.TypeF32, []int64{8}, f32(long, 8))
		})
	}
	toks := []int32{1, 45, 496, 173, 170}
	run := func(path string, ctx int) []float32 {
		o := cpuOnly()
		o.Ctx = ctx
		s, err := Load(context.Background(), path, o, nil)
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		l, err := s.Eval(context.Background(), toks, true)
		if err != nil {
			t.Fatal(err)
		}
		return l
	}
	plain := run(src, 1024)
	ones := withFactors(1, 3)
	if e := nmse(run(ones, 1024), plain); e != 0 {
		t.Errorf("short factors of 1 at context 1024 changed the logits: NMSE %.3g", e)
	}
	if e := nmse(run(ones, 2048), plain); e == 0 {
		t.Error("long factors of 3 at context 2048 changed nothing")
	}
	if e := nmse(run(withFactors(3, 1), 2048), plain); e != 0 {
		t.Errorf("long factors of 1 at context 2048 changed the logits: NMSE %.3g", e)
	}
}

// capDecliner is a stand-in device that cannot run soft-capped attention
// (as the CUDA backend today).
type capDecliner struct{ fakeGPU }

func (d capDecliner) SupportsNode(n *graph.Node) bool {
	if p, err := graph.ParamsOf[graph.AttentionParams](n); err == nil && p.SoftCap != 0 {
		return false
	}
	return d.fakeGPU.SupportsNode(n)
}

// TestDeviceWithoutSoftCapRunsGemma2OnTheCPU: a device plan for Gemma 2 on
// a device that cannot cap attention scores falls back to the CPU with the
// reason, and still computes the reference logits.
func TestDeviceWithoutSoftCapRunsGemma2OnTheCPU(t *testing.T) {
	o := withDevice(4, newFakeGPU(t, 1, 0))
	o.DeviceBackend = capDecliner{newFakeGPU(t, 1, 0)}
	s, err := Load(context.Background(), ggtest.Path(t, "arch", "synth-gemma2-Q8_0.gguf"), o, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if r := s.OffloadReport(); !strings.Contains(r.Fallback, "soft-capped") || s.Plan().DeviceBlocks() != 0 {
		t.Fatalf("fallback %q, plan %v: want the CPU with the reason", r.Fallback, s.Plan())
	}
	if _, err := s.Eval(context.Background(), []int32{1, 45, 496}, false); err != nil {
		t.Fatal(err)
	}
}
