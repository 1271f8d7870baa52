package chat

import (
	"errors"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"
)

// logitsOf returns natural-log probabilities, so the softmax of the result
// is probs (normalised).
func logitsOf(probs ...float64) []float32 {
	out := make([]float32, len(probs))
	for i, p := range probs {
		out[i] = float32(math.Log(p))
	}
	return out
}

// randomLogits is a fixed pseudo-random logits row.
func randomLogits(n int, seed uint64) []float32 {
	r := rand.New(rand.NewPCG(seed, 1))
	out := make([]float32, n)
	for i := range out {
		out[i] = float32(r.NormFloat64() * 3)
	}
	return out
}

func noPenalty(s SamplerSettings) SamplerSettings {
	s.RepeatPenalty, s.PresencePenalty, s.FrequencyPenalty, s.RepeatLastN = 1, 0, 0, 0
	return s
}

func TestSamplerGreedy(t *testing.T) {
	tests := []struct {
		name   string
		logits []float32
		want   int32
	}{
		{"clear max", []float32{0.1, 2.5, -1, 2.4}, 1},
		{"tie goes to lowest id", []float32{1, 3, 3, 3}, 1},
		{"all equal", []float32{0, 0, 0}, 0},
		{"negative", []float32{-5, -2, -3}, 1},
		{"NaN never wins", []float32{float32(math.NaN()), -100}, 1},
		{"all -Inf", []float32{float32(math.Inf(-1)), float32(math.Inf(-1))}, 0},
		{"single token", []float32{7}, 0},
	}
	for _, temp := range []float32{0, -1} {
		for _, tc := range tests {
			t.Run(tc.name, func(t *testing.T) {
				set := GreedySamplerSettings()
				set.Temperature = temp
				if got := NewSampler(set).Sample(tc.logits, nil); got != tc.want {
					t.Errorf("temp %v: got %d, want %d", temp, got, tc.want)
				}
			})
		}
	}
	if got := NewSampler(GreedySamplerSettings()).Sample(nil, nil); got != -1 {
		t.Errorf("empty logits: got %d, want -1", got)
	}
}

// Top-k 1 leaves only the best token, so any temperature and seed is greedy.
func TestSamplerTopKOneIsGreedy(t *testing.T) {
	for seed := uint64(0); seed < 20; seed++ {
		logits := randomLogits(500, seed)
		set := noPenalty(DefaultSamplerSettings())
		set.TopK, set.Temperature, set.Seed = 1, 1.5, seed
		want := NewSampler(GreedySamplerSettings()).Sample(logits, nil)
		if got := NewSampler(set).Sample(logits, nil); got != want {
			t.Fatalf("seed %d: top-k 1 picked %d, greedy %d", seed, got, want)
		}
	}
}

func TestSamplerPenaltiesLikeLlamaCpp(t *testing.T) {
	tests := []struct {
		name    string
		set     SamplerSettings
		logits  []float32
		recent  []int32
		want    []float32
		comment string
	}{
		{"repeat divides positive, multiplies negative",
			SamplerSettings{RepeatPenalty: 2, RepeatLastN: 64},
			[]float32{2, -1, 0.5, 3}, []int32{0, 1, 0}, []float32{1, -2, 0.5, 3}, ""},
		{"zero logit is multiplied (stays zero)",
			SamplerSettings{RepeatPenalty: 2, RepeatLastN: 64},
			[]float32{0, 1}, []int32{0}, []float32{0, 1}, ""},
		{"frequency per occurrence, presence once",
			SamplerSettings{RepeatPenalty: 2, FrequencyPenalty: 0.5, PresencePenalty: 0.25, RepeatLastN: 64},
			[]float32{2, -1, 0.5, 3}, []int32{0, 1, 0}, []float32{2.0/2 - 2*0.5 - 0.25, -1*2 - 0.5 - 0.25, 0.5, 3}, ""},
		{"window is the last RepeatLastN tokens",
			SamplerSettings{RepeatPenalty: 2, RepeatLastN: 2},
			[]float32{2, 2, 2, 2}, []int32{0, 1, 2, 2}, []float32{2, 2, 1, 2}, ""},
		{"-1 uses every token",
			SamplerSettings{RepeatPenalty: 2, RepeatLastN: -1},
			[]float32{2, 2, 2, 2}, []int32{0, 1, 2, 2}, []float32{1, 1, 1, 2}, ""},
		{"RepeatLastN 0 disables",
			SamplerSettings{RepeatPenalty: 2, FrequencyPenalty: 1, RepeatLastN: 0},
			[]float32{2, 2}, []int32{0, 1}, []float32{2, 2}, ""},
		{"ids outside the vocabulary are ignored",
			SamplerSettings{RepeatPenalty: 2, RepeatLastN: 8},
			[]float32{2, 2}, []int32{-1, 2, 99, 1}, []float32{2, 1}, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s := NewSampler(tc.set)
			s.grow(len(tc.logits))
			work := append([]float32(nil), tc.logits...)
			s.applyPenalties(work, tc.recent)
			for i := range work {
				if math.Abs(float64(work[i]-tc.want[i])) > 1e-6 {
					t.Fatalf("penalised %v, want %v", work, tc.want)
				}
			}
			// The counting buffer is left clean for the next call.
			if slices.ContainsFunc(s.counts, func(c int32) bool { return c != 0 }) {
				t.Error("counts not cleared")
			}
		})
	}
	// End to end: the repeated token loses the argmax it had by a hair.
	set := GreedySamplerSettings()
	set.RepeatPenalty, set.RepeatLastN = 1.1, 64
	if got := NewSampler(set).Sample([]float32{1.0, 0.95}, []int32{0}); got != 1 {
		t.Errorf("greedy with penalty picked %d, want 1", got)
	}
}

// frequencies samples logits many times with a fixed seed.
func frequencies(set SamplerSettings, logits []float32, draws int) []float64 {
	s := NewSampler(set)
	counts := make([]float64, len(logits))
	for range draws {
		counts[s.Sample(logits, nil)]++
	}
	for i := range counts {
		counts[i] /= float64(draws)
	}
	return counts
}

func TestSamplerKeepsTheRightSets(t *testing.T) {
	// probabilities 0.5, 0.25, 0.15, 0.07, 0.03
	logits := logitsOf(0.5, 0.25, 0.15, 0.07, 0.03)
	base := noPenalty(SamplerSettings{Temperature: 1, TopP: 1, Seed: 42})
	with := func(f func(*SamplerSettings)) SamplerSettings { s := base; f(&s); return s }
	sq := func(p ...float64) []float64 { // temperature 2 flattens p to sqrt(p)
		out := make([]float64, len(p))
		for i, v := range p {
			out[i] = math.Sqrt(v)
		}
		return out
	}
	normalise := func(p ...float64) []float64 {
		var sum float64
		for _, v := range p {
			sum += v
		}
		out := make([]float64, len(p))
		for i, v := range p {
			out[i] = v / sum
		}
		return out
	}
	tests := []struct {
		name string
		set  SamplerSettings
		want []float64 // expected frequency per id; 0 means never drawn
	}{
		{"no filtering", base, []float64{0.5, 0.25, 0.15, 0.07, 0.03}},
		{"top-k 2", with(func(s *SamplerSettings) { s.TopK = 2 }), normalise(0.5, 0.25, 0, 0, 0)},
		// cumulative 0.5, 0.75: the token that crosses 0.7 is kept.
		{"top-p 0.7", with(func(s *SamplerSettings) { s.TopP = 0.7 }), normalise(0.5, 0.25, 0, 0, 0)},
		{"top-p 0.9", with(func(s *SamplerSettings) { s.TopP = 0.9 }), normalise(0.5, 0.25, 0.15, 0, 0)},
		{"top-p 0 keeps one", with(func(s *SamplerSettings) { s.TopP = 0 }), []float64{1, 0, 0, 0, 0}},
		// keep p >= 0.25 * 0.5 = 0.125
		{"min-p 0.25", with(func(s *SamplerSettings) { s.MinP = 0.25 }), normalise(0.5, 0.25, 0.15, 0, 0)},
		{"min-p 0.1", with(func(s *SamplerSettings) { s.MinP = 0.1 }), normalise(0.5, 0.25, 0.15, 0.07, 0)},
		// top-p on the top-k set: over {0.5, 0.25, 0.15}/0.9 the cumulative
		// is 0.556, 0.833, so p=0.8 keeps two.
		{"top-k 3 then top-p 0.8", with(func(s *SamplerSettings) { s.TopK, s.TopP = 3, 0.8 }), normalise(0.5, 0.25, 0, 0, 0)},
		{"temperature 2 after min-p", with(func(s *SamplerSettings) { s.MinP = 0.25; s.Temperature = 2 }), normalise(sq(0.5, 0.25, 0.15, 0, 0)...)},
	}
	const draws = 40000
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := frequencies(tc.set, logits, draws)
			for id, want := range tc.want {
				if want == 0 && got[id] != 0 {
					t.Errorf("id %d drawn (freq %.4f) but should be filtered out", id, got[id])
				}
				// 4 standard deviations of a binomial frequency.
				if tol := 4 * math.Sqrt(want*(1-want)/draws); math.Abs(got[id]-want) > tol+1e-12 {
					t.Errorf("id %d: freq %.4f, want %.4f ± %.4f", id, got[id], want, tol)
				}
			}
		})
	}
}

// The heap-based top-k must keep exactly the k best, ties by lower id.
func TestSamplerTopKSelection(t *testing.T) {
	logits := randomLogits(1000, 7)
	logits[10], logits[20], logits[30] = 100, 100, 100 // a three-way tie at the top
	for _, k := range []int{1, 2, 3, 5, 40, 999, 1000, 1001} {
		s := NewSampler(SamplerSettings{TopK: k, Temperature: 1, TopP: 1, RepeatPenalty: 1})
		s.grow(len(logits))
		got := s.selectTopK(logits)
		want := make([]candidate, len(logits))
		for i, v := range logits {
			want[i] = candidate{int32(i), v}
		}
		slices.SortFunc(want, compareCandidates)
		want = want[:min(k, len(logits))]
		if !slices.Equal(got, want) {
			t.Fatalf("k=%d: selection differs from a full sort", k)
		}
	}
}

func TestSamplerSeedReproducible(t *testing.T) {
	logits := randomLogits(2000, 3)
	run := func(s *Sampler) []int32 {
		var out []int32
		for range 200 {
			out = append(out, s.Sample(logits, out))
		}
		return out
	}
	set := DefaultSamplerSettings()
	set.Temperature, set.TopK, set.MinP = 1.5, 0, 0 // plenty of randomness
	set.Seed = 1234
	a, b := run(NewSampler(set)), run(NewSampler(set))
	if !slices.Equal(a, b) {
		t.Fatal("same seed gave different tokens")
	}
	set.Seed = 1235
	if c := run(NewSampler(set)); slices.Equal(a, c) {
		t.Error("different seeds gave identical 200-token runs")
	}
	set.Seed = 1234
	s := NewSampler(set)
	first := run(s)
	s.Reset()
	if again := run(s); !slices.Equal(first, again) {
		t.Error("Reset did not rewind the random stream")
	}
	if !slices.Equal(first, a) {
		t.Error("sampler history leaked between samplers")
	}
}

func TestSamplerDoesNotTouchLogitsOrAllocate(t *testing.T) {
	logits := randomLogits(32000, 9)
	orig := slices.Clone(logits)
	recent := []int32{5, 6, 7, 5, 31999, 100}
	for _, set := range []SamplerSettings{DefaultSamplerSettings(), GreedySamplerSettings(),
		{Temperature: 0.7, TopP: 0.9, MinP: 0.1, RepeatPenalty: 1.3, FrequencyPenalty: 0.2, PresencePenalty: 0.1, RepeatLastN: -1}} {
		s := NewSampler(set)
		s.Sample(logits, recent)
		if !slices.Equal(logits, orig) {
			t.Fatal("Sample modified the caller's logits")
		}
		allocs := testing.AllocsPerRun(20, func() { s.Sample(logits, recent) })
		if allocs != 0 {
			t.Errorf("%+v: %v allocations per Sample after the first", set, allocs)
		}
	}
}

func TestSamplerSettingsValidate(t *testing.T) {
	nan, inf := float32(math.NaN()), float32(math.Inf(1))
	tests := []struct {
		name    string
		mutate  func(*SamplerSettings)
		wantErr string // "" for valid
	}{
		{"defaults", func(*SamplerSettings) {}, ""},
		{"greedy negative temperature", func(s *SamplerSettings) { s.Temperature = -1 }, ""},
		{"all disabled", func(s *SamplerSettings) { s.TopK, s.TopP, s.MinP, s.RepeatLastN = 0, 1, 0, 0 }, ""},
		{"repeat last n -1", func(s *SamplerSettings) { s.RepeatLastN = -1 }, ""},
		{"negative penalties allowed", func(s *SamplerSettings) { s.PresencePenalty, s.FrequencyPenalty = -0.5, -0.5 }, ""},
		{"negative top_p", func(s *SamplerSettings) { s.TopP = -0.1 }, "top_p is -0.1"},
		{"top_p above 1", func(s *SamplerSettings) { s.TopP = 1.5 }, "top_p is 1.5"},
		{"negative min_p", func(s *SamplerSettings) { s.MinP = -0.01 }, "min_p is -0.01"},
		{"min_p above 1", func(s *SamplerSettings) { s.MinP = 2 }, "min_p is 2"},
		{"negative top_k", func(s *SamplerSettings) { s.TopK = -40 }, "top_k is -40"},
		{"zero repeat penalty", func(s *SamplerSettings) { s.RepeatPenalty = 0 }, "repeat_penalty is 0"},
		{"negative repeat penalty", func(s *SamplerSettings) { s.RepeatPenalty = -1.1 }, "repeat_penalty is -1.1"},
		{"repeat last n -2", func(s *SamplerSettings) { s.RepeatLastN = -2 }, "repeat_last_n is -2"},
		{"NaN temperature", func(s *SamplerSettings) { s.Temperature = nan }, "temperature is NaN"},
		{"Inf frequency penalty", func(s *SamplerSettings) { s.FrequencyPenalty = inf }, "frequency_penalty is +Inf"},
		{"NaN top_p", func(s *SamplerSettings) { s.TopP = nan }, "top_p is NaN"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			set := DefaultSamplerSettings()
			tc.mutate(&set)
			err := set.Validate()
			if tc.wantErr == "" {
				if err != nil {
					t.Fatalf("valid settings rejected: %v", err)
				}
				return
			}
			if err == nil {
				t.Fatalf("accepted %+v", set)
			}
			if !errors.Is(err, ErrSamplerSettings) || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("error %q, want ErrSamplerSettings mentioning %q", err, tc.wantErr)
			}
		})
	}
	if err := GreedySamplerSettings().Validate(); err != nil {
		t.Errorf("GreedySamplerSettings invalid: %v", err)
	}
}

func TestDefaultSamplerSettings(t *testing.T) {
	want := SamplerSettings{Temperature: 0.8, TopK: 40, TopP: 0.95, MinP: 0.05, RepeatPenalty: 1.0, RepeatLastN: 64}
	if got := DefaultSamplerSettings(); got != want {
		t.Errorf("got %+v, want %+v", got, want)
	}
}

func BenchmarkSampleDefault32k(b *testing.B) {
	logits := randomLogits(32000, 1)
	recent := make([]int32, 64)
	s := NewSampler(DefaultSamplerSettings())
	for b.Loop() {
		s.Sample(logits, recent)
	}
}
