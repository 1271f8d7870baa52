package core

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minfer/minfer/devices"
	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/alloc"
	"github.com/minfer/minfer/internal/coretest"
	"github.com/minfer/minfer/internal/ggtest"
)

// TestQwen2MatchesLlamaReferenceUnderNeoXPermutation: a qwen2 block is a
// llama block with Q/K/V biases and NeoX rotary pairs (i, i+d/2) instead of
// (2i, 2i+1). Permuting each head's Q and K rows from interleaved to split
// halves turns the synth llama model into an equivalent qwen2 model (q·k is
// unchanged when both sides are permuted alike), so with zero biases its
// logits must match llama.cpp's reference for the llama file.
func TestQwen2MatchesLlamaReferenceUnderNeoXPermutation(t *testing.T) {
	dir := ggtest.Path(t, "synth")
	ref := loadRef(t, filepath.Join(dir, "synth-llama-F16.ref.json"))
	path := coretest.Rewrite(t, filepath.Join(dir, "synth-llama-F16.gguf"), func(f *gguf.File, b *gguf.Builder) error {
		for _, kv := range f.Meta.KVs {
			if strings.HasPrefix(kv.Key, "llama.") {
				b.Delete(kv.Key)
				b.Set("qwen2."+strings.TrimPrefix(kv.Key, "llama."), kv.Value)
			}
		}
		b.SetString("general.architecture", "qwen2")
		hd := 64
		for il := 0; il < 2; il++ {
			for _, w := range []string{"attn_q", "attn_k"} {
				ti, _ := f.Tensor(fmt.Sprintf("blk.%d.%s.weight", il, w))
				data, _ := f.TensorData(ti)
				rowBytes := int(ti.Dims[0]) * 2 // F16
				perm := make([]byte, len(data))
				for h := 0; h < int(ti.Dims[1])/hd; h++ {
					for i := 0; i < hd/2; i++ {
						for k, dst := range []int{i, i + hd/2} {
							src := h*hd + 2*i + k
							copy(perm[(h*hd+dst)*rowBytes:], data[src*rowBytes:(src+1)*rowBytes])
						}
					}
				}
				if err := b.ReplaceTensor(ti.Name, ti.Type, ti.Dims, perm); err != nil {
					return err
				}
			}
			for _, w := range []string{"attn_q", "attn_k", "attn_v"} {
				ti, _ := f.Tensor(fmt.Sprintf("blk.%d.%s.weight", il, w))
				bias := []int64{ti.Dims[1]}
				if err := b.AddTensor(fmt.Sprintf("blk.%d.%s.bias", il, w), gguf.TypeF32, bias, make([]byte, 4*bias[0])); err != nil {
					return err
				}
			}
		}
		return nil
	})
	s, err := Load(context.Background(), path, cpuOnly(), nil)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.H.Arch != "qwen2" || !s.H.RopeNeoX || !s.H.QKVBias {
		t.Fatalf("hparams %+v: not read as qwen2", s.H)
	}
	for ci, c := range ref.Cases {
		s.Rewind(0)
		got, err := s.Eval(context.Background(), c.Tokens, true)
		if err != nil {
			t.Fatal(err)
		}
		want := readLogits(t, filepath.Join(dir, c.LogitsFile))
		if e := nmse(got, want); e > 1e-6 {
			t.Errorf("case %d: NMSE %.3g > 1e-6", ci, e)
		} else {
			t.Logf("case %d: NMSE %.3g", ci, e)
		}
	}
}

// TestUnsupportedTensorTypeFailsBeforeAllocating: a weight type the CPU
// cannot compute with refuses the load, naming the tensor and its type.
func TestUnsupportedTensorTypeFailsBeforeAllocating(t *testing.T) {
	src := ggtest.Path(t, "synth", "synth-llama-Q8_0.gguf")
	path := coretest.Rewrite(t, src, func(f *gguf.File, b *gguf.Builder) error {
		ti, _ := f.Tensor("blk.1.ffn_up.weight")
		n, _ := gguf.TypeIQ4_NL.RowBytes(ti.NElements()) // same 32-element block of 18 bytes as Q4_0
		return b.ReplaceTensor(ti.Name, gguf.TypeIQ4_NL, ti.Dims, make([]byte, n))
	})
	_, err := Load(context.Background(), path, cpuOnly(), nil)
	if err == nil || !strings.Contains(err.Error(), `"blk.1.ffn_up.weight": unsupported type IQ4_NL`) {
		t.Errorf("got %v", err)
	}
	info, err := Inspect(path)
	if err != nil || info.Problem == "" {
		t.Errorf("inspect: %v, problem %q", err, info.Problem)
	}
}

// TestLoadReportsProgressAndCancels: progress climbs to the total, and a
// cancelled context stops the load with context.Canceled.
func TestLoadReportsProgressAndCancels(t *testing.T) {
	path := ggtest.Path(t, "synth", "synth-llama-Q4_0.gguf")
	var last, total int64
	calls := 0
	s, err := Load(context.Background(), path, cpuOnly(), func(done, tot int64) {
		if done < last {
			t.Errorf("progress went back from %d to %d", last, done)
		}
		last, total = done, tot
		calls++
	})
	if err != nil {
		t.Fatal(err)
	}
	s.Close()
	if calls < 10 || last != total || total == 0 {
		t.Errorf("%d progress calls, last %d of %d", calls, last, total)
	}
	ctx, cancel := context.WithCancel(context.Background())
	_, err = Load(ctx, path, cpuOnly(), func(done, tot int64) {
		if done > tot/3 {
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled load returned %v", err)
	}
}

// TestBadFilesGiveClearErrors: not a model, truncated, missing.
func TestBadFilesGiveClearErrors(t *testing.T) {
	dir := t.TempDir()
	src, _ := os.ReadFile(ggtest.Path(t, "models", "stories260K.gguf"))
	cut := filepath.Join(dir, "cut.gguf")
	os.WriteFile(cut, src[:len(src)/2], 0o644)
	txt := filepath.Join(dir, "notes.gguf")
	os.WriteFile(txt, []byte("hello, this is not a model file at all"), 0o644)
	for _, c := range []struct{ path, want string }{
		{cut, "truncated"},
		{txt, "not a GGUF file"},
		{filepath.Join(dir, "absent.gguf"), "no such file"},
		{ggtest.Path(t, "vocab", "ggml-vocab-bert-bge.gguf"), "unsupported architecture"},
	} {
		_, err := Load(context.Background(), c.path, cpuOnly(), nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: %v, want it to say %q", filepath.Base(c.path), err, c.want)
		}
	}
}

// TestHugeContextRefusedOnTheCPUBudget: a context the host cannot hold is
// a refusal naming the numbers, not an out-of-memory kill.
func TestHugeContextRefusedOnTheCPUBudget(t *testing.T) {
	o := cpuOnly()
	o.Ctx = 1 << 20 // a 1 GiB KV cache
	o.HostMemory = func() (devices.HostMem, error) { return devices.HostMem{Total: 2 << 30, Available: 1 << 30}, nil }
	_, err := Load(context.Background(), ggtest.Path(t, "synth", "synth-llama-Q8_0.gguf"), o, nil)
	var r *alloc.Refusal
	if !errors.As(err, &r) || !strings.Contains(err.Error(), "KV cache") || !strings.Contains(err.Error(), "budget") {
		t.Fatalf("got %v, want a refusal for the KV cache", err)
	}
	t.Log(err)
}
