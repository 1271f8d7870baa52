package core

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"sync"
	"time"
)

// BenchResult is one prefill + decode measurement.
type BenchResult struct {
	Model         string  `json:"model"`
	Threads       int     `json:"threads"`
	PromptTokens  int     `json:"prompt_tokens"`
	DecodeTokens  int     `json:"decode_tokens"`
	PrefillTokS   float64 `json:"prefill_tok_s"`
	DecodeTokS    float64 `json:"decode_tok_s"`
	WeightsPerTok int64   `json:"weight_bytes_per_decode_token"`
	// DecodeGBs is the weight bytes a decode step reads per second.
	DecodeGBs float64 `json:"decode_weight_gb_s"`
	// MemGBs is this machine's read bandwidth measured in the same run;
	// the ratio is how close decode gets to the memory-bandwidth limit.
	MemGBs     float64 `json:"measured_memory_gb_s"`
	RatioOfMem float64 `json:"decode_fraction_of_memory_bandwidth"`
	// Device runs: where the blocks ran and, when the device can measure
	// it, its device-to-device copy bandwidth (read + write) in this run.
	Device       string  `json:"device,omitempty"`
	GPULayers    int     `json:"gpu_layers"`
	NLayers      int     `json:"n_layers"`
	DevCopyGBs   float64 `json:"device_copy_gb_s,omitempty"`
	RatioOfCopy  float64 `json:"decode_fraction_of_device_copy_bandwidth,omitempty"`
	DeviceWeight int64   `json:"device_weight_bytes,omitempty"`
}

// copyMeter is a device backend that measures its copy bandwidth.
type copyMeter interface {
	CopyBandwidth(size int64) (float64, error)
}

// Bench runs a prefill of prompt random tokens and decode more tokens one
// at a time, and measures memory read bandwidth with the same threads.
func (s *Session) Bench(ctx context.Context, prompt, decode int) (BenchResult, error) {
	r := BenchResult{Model: s.Info.Name, Threads: s.cpu.Threads(), PromptTokens: prompt, DecodeTokens: decode}
	if prompt+decode > s.nCtx {
		return r, fmt.Errorf("core: bench of %d+%d tokens exceeds the context %d", prompt, decode, s.nCtx)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	toks := make([]int32, prompt)
	for i := range toks {
		toks[i] = int32(rng.IntN(s.H.NVocab))
	}
	s.Rewind(0)
	t0 := time.Now()
	if _, err := s.Eval(ctx, toks, false); err != nil {
		return r, err
	}
	r.PrefillTokS = float64(prompt) / time.Since(t0).Seconds()
	t1 := time.Now()
	for i := 0; i < decode; i++ {
		if _, err := s.Eval(ctx, []int32{int32(rng.IntN(s.H.NVocab))}, false); err != nil {
			return r, err
		}
	}
	r.DecodeTokS = float64(decode) / time.Since(t1).Seconds()
	// A decode step reads every matmul weight once: the blocks and the
	// output head (the embedding is read one row at a time).
	for _, b := range s.Info.BlockBytes {
		r.WeightsPerTok += b
	}
	head := "output.weight"
	if s.H.TiedOutput {
		head = "token_embd.weight"
	}
	if ti, ok := s.file.Tensor(head); ok {
		r.WeightsPerTok += ti.NBytes()
	}
	r.DecodeGBs = float64(r.WeightsPerTok) * r.DecodeTokS / 1e9
	r.MemGBs = MeasureReadBandwidth(r.Threads, 256<<20)
	if r.MemGBs > 0 {
		r.RatioOfMem = r.DecodeGBs / r.MemGBs
	}
	r.GPULayers, r.NLayers = s.plan.GPULayers, s.H.NLayer
	if len(s.bes) > 1 {
		r.Device = s.bes[1].Name()
		r.DeviceWeight = s.bes[1].WeightsBytes()
		if m, ok := s.bes[1].(copyMeter); ok {
			if gbs, err := m.CopyBandwidth(1 << 30); err == nil && gbs > 0 {
				r.DevCopyGBs = gbs
				r.RatioOfCopy = r.DecodeGBs / gbs
			}
		}
	}
	return r, nil
}

var sink float32

// MeasureReadBandwidth reads a buffer of size bytes with threads
// goroutines (sums of float32, best of 5 passes) and returns GB/s.
func MeasureReadBandwidth(threads int, size int) float64 {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	buf := make([]float32, size/4)
	for i := range buf {
		buf[i] = float32(i & 7)
	}
	best := 0.0
	for pass := 0; pass < 5; pass++ {
		var wg sync.WaitGroup
		sums := make([]float32, threads)
		chunk := len(buf) / threads
		t0 := time.Now()
		for t := 0; t < threads; t++ {
			wg.Add(1)
			go func(t int) {
				defer wg.Done()
				part := buf[t*chunk : (t+1)*chunk]
				var a, b, c, d float32
				for i := 0; i+4 <= len(part); i += 4 {
					a += part[i]
					b += part[i+1]
					c += part[i+2]
					d += part[i+3]
				}
				sums[t] = a + b + c + d
			}(t)
		}
		wg.Wait()
		if gbs := float64(chunk*threads*4) / time.Since(t0).Seconds() / 1e9; gbs > best {
			best = gbs
		}
		for _, x := range sums {
			sink += x
		}
	}
	return best
}
