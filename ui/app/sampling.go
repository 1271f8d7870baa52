package app

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/minfer/minfer/core/chat"
)

// Sampling is the user's generation settings.
type Sampling struct {
	Sampler    chat.SamplerSettings `json:"sampler"`
	RandomSeed bool                 `json:"random_seed"` // a fresh seed per reply (else Sampler.Seed)
	MaxTokens  int                  `json:"max_tokens"`  // 0: until the end of the turn
}

// DefaultSampling: the core defaults, a fresh seed per reply (so
// Regenerate gives a different answer) and 1024 tokens at most.
func DefaultSampling() Sampling {
	return Sampling{Sampler: chat.DefaultSamplerSettings(), RandomSeed: true, MaxTokens: 1024}
}

// Validate checks the settings before they are used or kept.
func (s Sampling) Validate() error {
	if s.MaxTokens < 0 {
		return fmt.Errorf("max tokens is %d, want 0 (no limit) or more", s.MaxTokens)
	}
	return s.Sampler.Validate()
}

func (c *Controller) samplingPath() string { return filepath.Join(c.configDir, "sampling.json") }

func (c *Controller) loadSampling() {
	b, err := os.ReadFile(c.samplingPath())
	if err != nil {
		return
	}
	s := DefaultSampling()
	if json.Unmarshal(b, &s) == nil && s.Validate() == nil {
		c.sampling = s
	}
}

// SetSampling validates and keeps the settings.
func (c *Controller) SetSampling(s Sampling) error {
	if err := s.Validate(); err != nil {
		return err
	}
	c.sampling = s
	b, _ := json.MarshalIndent(s, "", "  ")
	if err := writeFileAtomic(c.samplingPath(), b); err != nil {
		return fmt.Errorf("settings kept for this session, not saved: %w", err)
	}
	c.changed(ChangeSampling)
	return nil
}
