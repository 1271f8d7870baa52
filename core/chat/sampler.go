package chat

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// SamplerSettings choose how the next token is picked from logits. The
// stages run in llama.cpp's default order: repetition penalties → top-k →
// top-p → min-p → temperature → random draw.
type SamplerSettings struct {
	// Temperature divides the logits before the draw; <= 0 picks the
	// highest (penalised) logit instead of drawing (greedy).
	Temperature float32
	// TopP keeps the smallest set of most likely tokens whose probability
	// sums to at least TopP, in [0, 1]; 1 disables it.
	TopP float32
	// MinP drops tokens less likely than MinP times the most likely one,
	// in [0, 1]; 0 disables it.
	MinP float32
	// TopK keeps the TopK most likely tokens; 0 disables it.
	TopK int
	// RepeatPenalty divides positive and multiplies negative logits of
	// tokens seen in the last RepeatLastN tokens; 1 disables it.
	RepeatPenalty float32
	// PresencePenalty is subtracted once from each seen token's logit.
	PresencePenalty float32
	// FrequencyPenalty is subtracted per occurrence of a seen token.
	FrequencyPenalty float32
	// RepeatLastN is how many of the most recent tokens the penalties look
	// at; 0 disables the penalties, -1 uses every token passed to Sample.
	RepeatLastN int
	// Seed seeds the random draw: same seed, settings and logits give the
	// same tokens. Pick a fresh one (e.g. rand.Uint64()) for varied replies.
	Seed uint64
}

// DefaultSamplerSettings are llama.cpp's defaults: temperature 0.8, top-k 40,
// top-p 0.95, min-p 0.05, no presence/frequency penalty, seed 0, and the
// repeat penalty off (1.0, current llama.cpp; the classic value was 1.1)
// with a 64-token window ready for when it is raised.
func DefaultSamplerSettings() SamplerSettings {
	return SamplerSettings{
		Temperature:   0.8,
		TopP:          0.95,
		MinP:          0.05,
		TopK:          40,
		RepeatPenalty: 1.0, // off, as in current llama.cpp: a penalty changes greedy output
		RepeatLastN:   64,
	}
}

// GreedySamplerSettings pick the plain argmax with no penalties, which is
// what llama.cpp reference outputs (testdata *.ref.json "greedy") use.
func GreedySamplerSettings() SamplerSettings {
	return SamplerSettings{Temperature: 0, TopP: 1, RepeatPenalty: 1}
}

// ErrSamplerSettings is wrapped by every Validate failure.
var ErrSamplerSettings = errors.New("chat: invalid sampler settings")

// Validate reports the first setting that is out of range.
func (s SamplerSettings) Validate() error {
	finite := func(name string, v float32) error {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("%w: %s is %v, want a finite number", ErrSamplerSettings, name, v)
		}
		return nil
	}
	for _, f := range []struct {
		name string
		v    float32
	}{
		{"temperature", s.Temperature}, {"top_p", s.TopP}, {"min_p", s.MinP},
		{"repeat_penalty", s.RepeatPenalty}, {"presence_penalty", s.PresencePenalty},
		{"frequency_penalty", s.FrequencyPenalty},
	} {
		if err := finite(f.name, f.v); err != nil {
			return err
		}
	}
	switch {
	case s.TopP < 0 || s.TopP > 1:
		return fmt.Errorf("%w: top_p is %g, want 0..1 (1 disables it)", ErrSamplerSettings, s.TopP)
	case s.MinP < 0 || s.MinP > 1:
		return fmt.Errorf("%w: min_p is %g, want 0..1 (0 disables it)", ErrSamplerSettings, s.MinP)
	case s.TopK < 0:
		return fmt.Errorf("%w: top_k is %d, want >= 0 (0 disables it)", ErrSamplerSettings, s.TopK)
	case s.RepeatPenalty <= 0:
		return fmt.Errorf("%w: repeat_penalty is %g, want > 0 (1 disables it)", ErrSamplerSettings, s.RepeatPenalty)
	case s.RepeatLastN < -1:
		return fmt.Errorf("%w: repeat_last_n is %d, want >= -1 (-1: all tokens, 0 disables penalties)", ErrSamplerSettings, s.RepeatLastN)
	}
	return nil
}

// candidate is a token still in the running, with its current logit.
type candidate struct {
	id    int32
	logit float32
}

// better orders candidates by logit, highest first, and the lower id first
// on ties, so every stage is deterministic.
func better(a, b candidate) bool {
	return a.logit > b.logit || (a.logit == b.logit && a.id < b.id)
}

func compareCandidates(a, b candidate) int {
	switch {
	case better(a, b):
		return -1
	case better(b, a):
		return 1
	}
	return 0
}

// Sampler picks tokens with fixed settings. It keeps its buffers between
// calls, so after the first call with the largest vocabulary Sample does not
// allocate. A Sampler is not safe for concurrent use.
type Sampler struct {
	settings SamplerSettings
	rng      *rand.Rand
	pcg      *rand.PCG

	logits  []float32   // penalised copy of the caller's logits
	cands   []candidate // candidates, best first after selection
	counts  []int32     // occurrences per token id in the penalty window
	touched []int32     // ids whose counts are non-zero, to clear them cheaply
}

// NewSampler returns a sampler for s. Settings are used as given; call
// s.Validate first to reject out-of-range values (Sample clamps nothing).
func NewSampler(s SamplerSettings) *Sampler {
	pcg := rand.NewPCG(s.Seed, pcgStream)
	return &Sampler{
		settings: s,
		pcg:      pcg,
		rng:      rand.New(pcg),
		touched:  make([]int32, 0, max(s.RepeatLastN, 64)),
	}
}

// pcgStream is the PCG's second seed word; any constant works, it only has
// to be fixed so that Seed alone decides the sequence.
const pcgStream = 0x9e3779b97f4a7c15

// Settings returns the settings the sampler was made with.
func (s *Sampler) Settings() SamplerSettings { return s.settings }

// Reset rewinds the random stream to its seeded start, so the same logits
// produce the same tokens again.
func (s *Sampler) Reset() { s.pcg.Seed(s.settings.Seed, pcgStream) }

// Sample picks the next token id from logits (one row, vocabulary-sized).
// recent holds the previous tokens, oldest first; only the last RepeatLastN
// count for the penalties, and ids outside the vocabulary are ignored.
// logits is not modified. An empty logits row returns -1.
func (s *Sampler) Sample(logits []float32, recent []int32) int32 {
	n := len(logits)
	if n == 0 {
		return -1
	}
	s.grow(n)
	work := s.logits[:n]
	for i, v := range logits {
		if v != v { // NaN never wins
			v = float32(math.Inf(-1))
		}
		work[i] = v
	}
	s.applyPenalties(work, recent)

	set := s.settings
	if set.Temperature <= 0 {
		return argmax(work)
	}

	cands := s.selectTopK(work)
	cands = topP(cands, set.TopP)
	cands = minP(cands, set.MinP)
	// A lone candidate, or an infinite best logit (all -Inf, or one +Inf
	// that takes all the probability), needs no draw.
	if len(cands) == 1 || math.IsInf(float64(cands[0].logit), 0) {
		return cands[0].id
	}
	return s.draw(cands, set.Temperature)
}

func (s *Sampler) grow(n int) {
	if cap(s.logits) < n {
		s.logits = make([]float32, n)
		s.cands = make([]candidate, n)
		s.counts = make([]int32, n)
	}
}

// applyPenalties lowers the logits of tokens in the penalty window as
// llama.cpp does: a positive logit is divided by RepeatPenalty, a negative
// one multiplied; then count·FrequencyPenalty + PresencePenalty is
// subtracted.
func (s *Sampler) applyPenalties(work []float32, recent []int32) {
	set := s.settings
	if set.RepeatLastN == 0 || (set.RepeatPenalty == 1 && set.FrequencyPenalty == 0 && set.PresencePenalty == 0) {
		return
	}
	if set.RepeatLastN > 0 && len(recent) > set.RepeatLastN {
		recent = recent[len(recent)-set.RepeatLastN:]
	}
	counts := s.counts[:len(work)]
	touched := s.touched[:0]
	for _, id := range recent {
		if id < 0 || int(id) >= len(work) {
			continue
		}
		if counts[id] == 0 {
			touched = append(touched, id)
		}
		counts[id]++
	}
	for _, id := range touched {
		v := work[id]
		if v <= 0 {
			v *= set.RepeatPenalty
		} else {
			v /= set.RepeatPenalty
		}
		v -= float32(counts[id])*set.FrequencyPenalty + set.PresencePenalty
		work[id] = v
		counts[id] = 0
	}
	s.touched = touched // keep the grown buffer
}

// argmax returns the index of the largest value, the lowest on ties.
func argmax(v []float32) int32 {
	best := 0
	for i := 1; i < len(v); i++ {
		if v[i] > v[best] {
			best = i
		}
	}
	return int32(best)
}

// selectTopK fills s.cands with the TopK best tokens (all when TopK is 0
// or not smaller than the vocabulary), sorted best first.
func (s *Sampler) selectTopK(work []float32) []candidate {
	k := s.settings.TopK
	if k <= 0 || k > len(work) {
		k = len(work)
	}
	cands := s.cands[:k]
	if k == len(work) {
		for i, v := range work {
			cands[i] = candidate{int32(i), v}
		}
		slices.SortFunc(cands, compareCandidates)
		return cands
	}
	// Keep the k best in a heap whose root is the worst of them.
	for i := range k {
		cands[i] = candidate{int32(i), work[i]}
	}
	for i := k/2 - 1; i >= 0; i-- {
		siftDownWorst(cands, i)
	}
	for i := k; i < len(work); i++ {
		c := candidate{int32(i), work[i]}
		if better(c, cands[0]) {
			cands[0] = c
			siftDownWorst(cands, 0)
		}
	}
	slices.SortFunc(cands, compareCandidates)
	return cands
}

// siftDownWorst restores the heap property "parent is worse than children".
func siftDownWorst(h []candidate, i int) {
	for {
		worst := i
		l, r := 2*i+1, 2*i+2
		if l < len(h) && better(h[worst], h[l]) {
			worst = l
		}
		if r < len(h) && better(h[worst], h[r]) {
			worst = r
		}
		if worst == i {
			return
		}
		h[i], h[worst] = h[worst], h[i]
		i = worst
	}
}

// topP keeps the shortest best-first prefix whose softmax probability
// (over all of cands) reaches p, at least one token. cands is sorted.
func topP(cands []candidate, p float32) []candidate {
	if p >= 1 || len(cands) <= 1 {
		return cands
	}
	maxLogit := float64(cands[0].logit)
	var sum float64
	for _, c := range cands {
		sum += math.Exp(float64(c.logit) - maxLogit)
	}
	var cum float64
	for i, c := range cands {
		cum += math.Exp(float64(c.logit)-maxLogit) / sum
		if cum >= float64(p) {
			return cands[:i+1]
		}
	}
	return cands
}

// minP keeps tokens whose probability is at least p times the best one's,
// i.e. logit >= best + ln(p). cands is sorted.
func minP(cands []candidate, p float32) []candidate {
	if p <= 0 || len(cands) <= 1 {
		return cands
	}
	threshold := float64(cands[0].logit) + math.Log(float64(p))
	for i := 1; i < len(cands); i++ {
		if float64(cands[i].logit) < threshold {
			return cands[:i]
		}
	}
	return cands
}

// draw divides by the temperature, takes the softmax and picks one token.
func (s *Sampler) draw(cands []candidate, temperature float32) int32 {
	maxLogit := float64(cands[0].logit) / float64(temperature)
	var sum float64
	for _, c := range cands {
		sum += math.Exp(float64(c.logit)/float64(temperature) - maxLogit)
	}
	u := s.rng.Float64() * sum
	var cum float64
	for _, c := range cands {
		cum += math.Exp(float64(c.logit)/float64(temperature) - maxLogit)
		if u < cum {
			return c.id
		}
	}
	return cands[len(cands)-1].id // rounding left u at the very end
}
