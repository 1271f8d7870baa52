package core

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"github.com/minfer/minfer/core/quant"
	"github.com/minfer/minfer/internal/hugemem"
)

// BenchResult is a prefill + decode measurement: one run, or the mean of
// several after a warm-up run (BenchN).
type BenchResult struct {
	Model        string `json:"model"`
	Threads      int    `json:"threads"`
	KernelLevel  string `json:"kernel_level"`
	PromptTokens int    `json:"prompt_tokens"`
	DecodeTokens int    `json:"decode_tokens"`
	Repetitions  int    `json:"repetitions"`
	// PrefillTokS and DecodeTokS are the means over the repetitions; the
	// stddevs are sample standard deviations (0 for one run).
	PrefillTokS    float64   `json:"prefill_tok_s"`
	PrefillStdDev  float64   `json:"prefill_tok_s_stddev"`
	DecodeTokS     float64   `json:"decode_tok_s"`
	DecodeStdDev   float64   `json:"decode_tok_s_stddev"`
	PrefillSamples []float64 `json:"prefill_tok_s_samples"`
	DecodeSamples  []float64 `json:"decode_tok_s_samples"`
	// PrefillCPUms and DecodeCPUms are the process CPU time (all threads)
	// per token, means over the repetitions (0 where the platform does not
	// report it). On a shared machine, where wall-clock rates depend on
	// what else runs, threads × 1000 / CPUms is what the threads give when
	// they have their cores to themselves (spin-waiting included).
	PrefillCPUms  float64 `json:"prefill_cpu_ms_per_tok"`
	DecodeCPUms   float64 `json:"decode_cpu_ms_per_tok"`
	WeightsPerTok int64   `json:"weight_bytes_per_decode_token"`
	// DecodeGBs is the weight bytes a decode step reads per second (at the
	// mean decode rate).
	DecodeGBs float64 `json:"decode_weight_gb_s"`
	// MemGBs is this machine's read bandwidth with the same threads: the
	// mean (MemBasis "mean") of MemSamples, one meter reading (the best of
	// three passes) just before and one just after each measured decode
	// run, so that it sees the machine as decode did; MemGBsMax is the
	// largest sample. RatioOfMem is DecodeGBs / MemGBs: how close decode
	// gets to the memory-bandwidth limit.
	MemGBs     float64   `json:"measured_memory_gb_s"`
	MemBasis   string    `json:"measured_memory_basis"`
	MemGBsMax  float64   `json:"measured_memory_gb_s_max"`
	MemSamples []float64 `json:"measured_memory_gb_s_samples"`
	RatioOfMem float64   `json:"decode_fraction_of_memory_bandwidth"`
	// Device runs: where the blocks ran and, when the device can measure
	// it, its device-to-device copy bandwidth (read + write) in this run.
	Device       string  `json:"device,omitempty"`
	GPULayers    int     `json:"gpu_layers"`
	NLayers      int     `json:"n_layers"`
	DevCopyGBs   float64 `json:"device_copy_gb_s,omitempty"`
	RatioOfCopy  float64 `json:"decode_fraction_of_device_copy_bandwidth,omitempty"`
	DeviceWeight int64   `json:"device_weight_bytes,omitempty"`
	// DecodeStepMs is the wall time of a decode step in the run with the
	// timers on (one more run after the measured ones, whose rates it does
	// not enter) and DecodeDeviceMs the device's own time in it (its runs
	// up to the read of the logits, timed by the device; zero when there
	// is no device that can time itself), means over that run's steps; the
	// difference is what the host, the copies and the launches add.
	DecodeStepMs   float64 `json:"decode_step_ms,omitempty"`
	DecodeDeviceMs float64 `json:"decode_device_ms_per_step,omitempty"`
	timedSteps     int
	busySteps      int
	// DecodePhasesMs is the mean wall time of each part of a decode step
	// (StepPhaseNames: the host's work before the step's nodes are issued,
	// the issue, the read that waits for them and copies the logits, the
	// release); DecodeWaitMs and DecodeCopyMs split a device's read into
	// the wait for its queued work and the copy after it.
	DecodePhasesMs map[string]float64 `json:"decode_step_phases_ms,omitempty"`
	DecodeWaitMs   float64            `json:"decode_read_wait_ms,omitempty"`
	DecodeCopyMs   float64            `json:"decode_read_copy_ms,omitempty"`
	phases         StepPhases
	waitCopy       [2]time.Duration
	// CPUWeights says how the CPU held its weights (copied into memory or
	// mapped from the file, and why: the offload report's line).
	CPUWeights string `json:"cpu_weights"`
}

// copyMeter is a device backend that measures its copy bandwidth.
type copyMeter interface {
	CopyBandwidth(size int64) (float64, error)
}

// busyTimer is a device backend that times its own work between reads
// (the CUDA backend: events around its runs).
type busyTimer interface {
	SetBusyTiming(on bool) error
	DeviceBusy() (time.Duration, int)
	// ReadWaitCopy is the time its reads spent waiting for the queued
	// work and copying, since SetBusyTiming(true).
	ReadWaitCopy() (wait, copy time.Duration)
}

// Bench runs a prefill of prompt random tokens and decode more tokens one
// at a time, once, and measures memory read bandwidth with the same threads.
func (s *Session) Bench(ctx context.Context, prompt, decode int) (BenchResult, error) {
	return s.BenchN(ctx, prompt, decode, 1, false)
}

// BenchN is Bench repeated reps times, after one untimed warm-up run when
// warmup is set (as llama-bench does), reporting mean and stddev.
func (s *Session) BenchN(ctx context.Context, prompt, decode, reps int, warmup bool) (BenchResult, error) {
	r := BenchResult{Model: s.Info.Name, Threads: s.cpu.Threads(), KernelLevel: quant.CurrentLevel().String(),
		PromptTokens: prompt, DecodeTokens: decode, Repetitions: reps}
	if prompt <= 0 || decode <= 0 || reps <= 0 {
		return r, fmt.Errorf("core: bench of %d+%d tokens × %d runs: all must be positive", prompt, decode, reps)
	}
	if prompt+decode > s.nCtx {
		return r, fmt.Errorf("core: bench of %d+%d tokens exceeds the context %d", prompt, decode, s.nCtx)
	}
	rng := rand.New(rand.NewPCG(1, 2))
	if warmup {
		if _, _, err := s.benchOnce(ctx, rng, prompt, decode, nil, nil, nil); err != nil {
			return r, err
		}
	}
	// The roofline is the mean of meter readings taken just before and just
	// after each measured decode run: one reading moved 35–42 GB/s between
	// runs on a quiet two-core VM while decode tok/s stayed within 1 %, and
	// on a shared machine the bandwidth decode saw is that of its own time,
	// so a single or a best reading overstates it.
	// The meter runs under the profile label bench=meter, so that a CPU
	// profile of the runs (minfer bench --cpuprofile) can leave it out
	// (pprof -tagignore bench=meter).
	var meter *readMeter
	pprof.Do(ctx, meterLabels, func(context.Context) { meter = newReadMeter(256 << 20) })
	defer meter.free()
	sample := func() {
		pprof.Do(ctx, meterLabels, func(context.Context) {
			r.MemSamples = append(r.MemSamples, meter.best(r.Threads, 3))
		})
	}
	for i := 0; i < reps; i++ {
		pp, tg, err := s.benchOnce(ctx, rng, prompt, decode, &r, sample, nil)
		if err != nil {
			return r, err
		}
		r.PrefillSamples = append(r.PrefillSamples, pp)
		r.DecodeSamples = append(r.DecodeSamples, tg)
	}
	// The device's busy time and the step's phases come from one more run,
	// not counted: their timers are host calls a step (event records, clock
	// reads) that the chat's decode does not make, so the measured runs
	// make none either.
	if decode > 0 {
		if _, _, err := s.benchOnce(ctx, rng, prompt, decode, nil, nil, &r); err != nil {
			return r, err
		}
	}
	r.MemBasis = "mean"
	r.MemGBs, _ = meanStdDev(r.MemSamples)
	for _, g := range r.MemSamples {
		r.MemGBsMax = max(r.MemGBsMax, g)
	}
	if r.timedSteps > 0 {
		r.DecodeStepMs /= float64(r.timedSteps)
	}
	if r.busySteps > 0 {
		r.DecodeDeviceMs /= float64(r.busySteps)
		r.DecodeWaitMs = float64(r.waitCopy[0]) / 1e6 / float64(r.busySteps)
		r.DecodeCopyMs = float64(r.waitCopy[1]) / 1e6 / float64(r.busySteps)
	}
	if n := r.phases.Steps; n > 0 {
		r.DecodePhasesMs = map[string]float64{}
		for i, d := range r.phases.Phase {
			r.DecodePhasesMs[StepPhaseNames[i]] = float64(d) / 1e6 / float64(n)
		}
	}
	r.PrefillCPUms /= float64(reps * prompt)
	r.DecodeCPUms /= float64(reps * decode)
	r.PrefillTokS, r.PrefillStdDev = meanStdDev(r.PrefillSamples)
	r.DecodeTokS, r.DecodeStdDev = meanStdDev(r.DecodeSamples)
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
	if r.MemGBs > 0 {
		r.RatioOfMem = r.DecodeGBs / r.MemGBs
	}
	r.GPULayers, r.NLayers = s.plan.GPULayers, s.H.NLayer
	r.CPUWeights = s.report.HostWeights
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

// benchOnce is one prefill of prompt random tokens from an empty cache,
// then decode single-token steps; it returns both rates in tokens/s and,
// with r set, adds the CPU milliseconds of each phase to r's CPU fields.
// With sample set, it calls sample just before the decode steps and just
// after them, outside their timing and CPU time. With timers set, the
// decode steps run with the device's busy timer and the step phase timer
// on, and their figures are added to timers.
func (s *Session) benchOnce(ctx context.Context, rng *rand.Rand, prompt, decode int, r *BenchResult, sample func(), timers *BenchResult) (pp, tg float64, err error) {
	toks := make([]int32, prompt)
	for i := range toks {
		toks[i] = int32(rng.IntN(s.H.NVocab))
	}
	s.Rewind(0)
	c0 := processCPUTime()
	t0 := time.Now()
	if _, err := s.Eval(ctx, toks, false); err != nil {
		return 0, 0, err
	}
	pp = float64(prompt) / time.Since(t0).Seconds()
	c1 := processCPUTime()
	if sample != nil {
		sample()
	}
	var bt busyTimer
	if len(s.bes) > 1 {
		if b, ok := s.bes[1].(busyTimer); ok && timers != nil {
			if err := b.SetBusyTiming(true); err != nil {
				return 0, 0, err
			}
			bt = b
		}
	}
	if timers != nil {
		s.SetStepTiming(true)
	}
	c2 := processCPUTime()
	t1 := time.Now()
	// As the chat's decode loop does: every step's logits into one slice.
	var logits []float32
	for i := 0; i < decode; i++ {
		if logits, err = s.EvalInto(ctx, []int32{int32(rng.IntN(s.H.NVocab))}, logits); err != nil {
			return 0, 0, err
		}
	}
	tg = float64(decode) / time.Since(t1).Seconds()
	c3 := processCPUTime()
	if timers != nil {
		ph := s.StepTiming()
		s.SetStepTiming(false)
		for i, d := range ph.Phase {
			timers.phases.Phase[i] += d
		}
		timers.phases.Steps += ph.Steps
		timers.DecodeStepMs += 1e3 / tg * float64(decode)
		timers.timedSteps += decode
	}
	if bt != nil {
		if d, n := bt.DeviceBusy(); n == decode {
			timers.DecodeDeviceMs += float64(d) / 1e6
			timers.busySteps += decode
			w, c := bt.ReadWaitCopy()
			timers.waitCopy[0] += w
			timers.waitCopy[1] += c
		}
		if err := bt.SetBusyTiming(false); err != nil {
			return 0, 0, err
		}
	}
	if sample != nil {
		sample()
	}
	if r != nil {
		r.PrefillCPUms += float64(c1-c0) / 1e6
		r.DecodeCPUms += float64(c3-c2) / 1e6
	}
	return pp, tg, nil
}

// meanStdDev is the mean and the sample standard deviation (n−1; 0 for
// fewer than two values).
func meanStdDev(xs []float64) (mean, sd float64) {
	for _, x := range xs {
		mean += x
	}
	mean /= float64(len(xs))
	if len(xs) < 2 {
		return mean, 0
	}
	var ss float64
	for _, x := range xs {
		ss += (x - mean) * (x - mean)
	}
	return mean, math.Sqrt(ss / float64(len(xs)-1))
}

var sink float32

// meterLabels marks the bandwidth meter's work in CPU profiles (its
// goroutines inherit the label).
var meterLabels = pprof.Labels("bench", "meter")

// MeasureReadBandwidth reads a buffer of size bytes with threads
// goroutines and returns GB/s (best of 5 passes); see readMeter.
func MeasureReadBandwidth(threads int, size int) float64 {
	m := newReadMeter(size)
	defer m.free()
	return m.best(threads, 5)
}

// readMeter measures the memory's read bandwidth: goroutines stream their
// parts of a buffer (huge pages, as the copied weights: internal/hugemem)
// and the meter reports the fastest pass, so that it is an upper bound of
// what a decode kernel can stream, measured in the same run. Each pass
// reads the buffer in each of the meter's ways (readMeter.ways), each
// thread on its own part and each pass timed from the moment every thread
// has started (read):
//   - wide: quant.ReadSumAt (full-width loads and nothing else) in 64 KiB
//     calls, at each level that has it in assembly (AVX2 and AVX-512 on
//     amd64);
//   - plain: quant.VecDotF32 against a vector that stays in L1, in 4 KiB
//     calls (the fastest read where ReadSum has no assembly: arm64);
//   - prefetch: the same in 2 KiB calls with the next 2 KiB prefetched
//     (as the decode kernels prefetch their streams): on an Intel Xeon VM
//     31–33 GB/s where the plain read gave 25–28.
//
// Until session 16 the meter read only plain and prefetch, and on an AMD
// EPYC (Zen 5) VM that read 0–16 % below the best streaming read, by the
// moment (BenchmarkReadMeter: plain 49.6 / 52.0 / 68.2 GB/s where the
// AVX-512 wide read gave 55.7 / 57.5 / 81.2; BenchmarkMemMeterVariants,
// four runs: the AVX2 wide read −2 to +9 % against the AVX-512 one, and
// 64 KiB calls 1–23 % above 4 KiB ones), below what the Q8_0 x8 decode
// kernel streamed in BenchmarkMemDecodeLayouts. That benchmark's meter
// also kept both threads' sums on one cache line, a store a call: 12–28 %
// slower still (bench/results/2026-12-06-s16-cpu).
type readMeter struct {
	buf  []byte
	ones []float32
	free func()
	ways []meterWay
}

// meterWay is one of the meter's reads: wide (ReadSum at level lvl),
// plain or prefetch.
type meterWay struct {
	kind int
	lvl  quant.Level
}

const (
	meterWide = iota
	meterPlain
	meterPrefetch
)

// meterSpan is the floats per kernel call of the plain read: 4 KiB of
// the buffer, and the resident vector; meterSpanPF that of the
// prefetching read (2 KiB, the next call's 2 KiB prefetched first);
// meterWideSpan the bytes per ReadSum call of the wide read. The buffer
// is a whole number of meterWideSpan parts for any thread count.
const (
	meterSpan     = 1024
	meterSpanPF   = 512
	meterWideSpan = 64 << 10
)

func newReadMeter(size int) *readMeter {
	m := &readMeter{ones: make([]float32, meterSpan)}
	b, free := hugemem.Alloc(max(size/meterWideSpan, 1) * meterWideSpan)
	m.buf, m.free = b, free
	f := m.floats()
	for i := range f {
		f[i] = float32(i & 7)
	}
	for i := range m.ones {
		m.ones[i] = 1
	}
	for _, l := range quant.ReadSumLevels() {
		m.ways = append(m.ways, meterWay{meterWide, l})
	}
	m.ways = append(m.ways, meterWay{kind: meterPlain}, meterWay{kind: meterPrefetch})
	return m
}

// floats is the buffer as float32s.
func (m *readMeter) floats() []float32 {
	return unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(m.buf))), len(m.buf)/4)
}

// best is the fastest of passes reads of the buffer by threads goroutines
// (0: GOMAXPROCS), in GB/s, each pass every way (readMeter).
func (m *readMeter) best(threads, passes int) float64 {
	best := 0.0
	for pass := 0; pass < passes; pass++ {
		for _, w := range m.ways {
			gbs, sum := m.read(threads, w)
			best = max(best, gbs)
			sink += float32(sum & 0xff)
		}
	}
	return best
}

// part is thread t's part of the buffer for a read of kind (of threads):
// the threads' parts are equal, whole numbers of the read's calls, and
// together at most the buffer.
func (m *readMeter) part(threads, t, kind int) []byte {
	unit := meterWideSpan
	switch kind {
	case meterPlain:
		unit = 4 * meterSpan
	case meterPrefetch:
		unit = 4 * meterSpanPF
	}
	chunk := len(m.buf) / threads / unit * unit
	return m.buf[t*chunk : (t+1)*chunk]
}

// read is one read of the buffer by threads goroutines (0: GOMAXPROCS),
// the way w: GB/s and the sum of what it read (ReadSum's for the wide
// read; for the float reads, their float32 sum, which is exact for the
// buffer's small integers, as an integer). The time runs from when the
// first thread starts reading, once all have started, to when the last
// one is done, so that a goroutine the scheduler starts late does not
// count as slow memory.
func (m *readMeter) read(threads int, w meterWay) (gbs float64, sum uint64) {
	if threads <= 0 {
		threads = runtime.GOMAXPROCS(0)
	}
	var wg sync.WaitGroup
	var ready atomic.Int32
	type result struct {
		start, end time.Time
		sum        uint64
		_          [64]byte // each thread's result on its own cache line
	}
	res := make([]result, threads)
	var bytes int
	for t := 0; t < threads; t++ {
		part := m.part(threads, t, w.kind)
		bytes += len(part)
		wg.Add(1)
		go func(r *result) {
			defer wg.Done()
			ready.Add(1)
			for ready.Load() < int32(threads) {
				runtime.Gosched()
			}
			r.start = time.Now()
			r.sum = meterRead(part, m.ones, w)
			r.end = time.Now()
		}(&res[t])
	}
	wg.Wait()
	start, end := res[0].start, res[0].end
	for _, r := range res {
		if r.start.Before(start) {
			start = r.start
		}
		if r.end.After(end) {
			end = r.end
		}
		sum += r.sum
	}
	return float64(bytes) / end.Sub(start).Seconds() / 1e9, sum
}

// meterRead reads part the way w (readMeter), the sum kept in a local
// until the end.
func meterRead(part []byte, ones []float32, w meterWay) uint64 {
	switch w.kind {
	case meterWide:
		var s uint64
		for i := 0; i < len(part); i += meterWideSpan {
			s += quant.ReadSumAt(w.lvl, part[i:i+meterWideSpan])
		}
		return s
	case meterPlain:
		f := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(part))), len(part)/4)
		var s float32
		for i := 0; i < len(f); i += meterSpan {
			s += quant.VecDotF32(f[i:i+meterSpan], ones)
		}
		return uint64(s)
	default:
		f := unsafe.Slice((*float32)(unsafe.Pointer(unsafe.SliceData(part))), len(part)/4)
		ones = ones[:meterSpanPF]
		var s float32
		for i := 0; i < len(f); i += meterSpanPF {
			if j := i + meterSpanPF; j < len(f) {
				quant.Prefetch(part[4*j : 4*(j+meterSpanPF)])
			}
			s += quant.VecDotF32(f[i:i+meterSpanPF], ones)
		}
		return uint64(s)
	}
}
