package offload

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// The three places a request can come from, as Request.Source spells them.
const (
	SourceFlag    = "--gpu-layers"      // the CLI flag; wins over the environment
	SourceEnv     = "MINFER_GPU_LAYERS" // the environment variable
	SourceDefault = "default"           // neither set: auto
)

// ErrBadRequest is the sentinel under every refused spelling of a block count
// (and of MINFER_GPU_MEM, see WeightBudget): a load that must not start.
var ErrBadRequest = errors.New("offload: bad offload setting")

// RequestError is a refused spelling. Its message quotes the value exactly as
// given and names where it came from, so the user can find and fix it.
type RequestError struct {
	Source string // SourceFlag, SourceEnv, or EnvGPUMem
	Value  string // as given, untrimmed
	// Want says what would have been accepted.
	Want string
}

func (e *RequestError) Error() string {
	return fmt.Sprintf("offload: %s=%q is not %s", e.Source, e.Value, e.Want)
}

// Unwrap lets errors.Is(err, ErrBadRequest) hold.
func (e *RequestError) Unwrap() error { return ErrBadRequest }

const blockCountWant = `a block count (use a number 0..N or "auto")`

// Request is how many blocks the user asked to offload, before the model's
// size is known. Auto means "every block the device can hold" (the fit).
type Request struct {
	Auto   bool
	Layers int    // the explicit count when !Auto
	Source string // SourceFlag, SourceEnv or SourceDefault
}

// ParseRequest reads the offload request: --gpu-layers (flagValue, when
// flagSet) wins over MINFER_GPU_LAYERS (looked up through env; nil means no
// environment), and with neither the request is auto.
//
// Accepted spellings are a decimal count of blocks (digits only, any size
// that fits an int; Resolve clamps it to the model) or "auto" in any case.
// Surrounding spaces and tabs are ignored — they cannot change what was
// meant. Everything else — "", "-1", "+3", "1.5", "0x10", "all", a number
// too large for an int — is refused with a *RequestError wrapping
// ErrBadRequest rather than guessed at. A variable set to the empty string is
// refused too: it is set, and it does not say a count.
func ParseRequest(flagValue string, flagSet bool, env func(string) (string, bool)) (Request, error) {
	if flagSet {
		return parseCount(SourceFlag, flagValue)
	}
	if env != nil {
		if v, ok := env(SourceEnv); ok {
			return parseCount(SourceEnv, v)
		}
	}
	return Request{Auto: true, Source: SourceDefault}, nil
}

func parseCount(source, raw string) (Request, error) {
	v := trimBlanks(raw)
	if strings.EqualFold(v, "auto") {
		return Request{Auto: true, Source: source}, nil
	}
	n, ok := parseDecimal(v)
	if !ok {
		return Request{}, &RequestError{Source: source, Value: raw, Want: blockCountWant}
	}
	return Request{Layers: n, Source: source}, nil
}

// trimBlanks drops surrounding spaces and tabs, which cannot change what a
// setting means.
func trimBlanks(s string) string { return strings.Trim(s, " \t") }

// parseDecimal accepts ASCII digits only (no sign, no base prefix, no
// fraction) that fit an int.
func parseDecimal(s string) (int, bool) {
	if s == "" {
		return 0, false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, false
		}
	}
	n, err := strconv.Atoi(s)
	return n, err == nil
}

// String reads like "auto (default)" or "18 (--gpu-layers)".
func (r Request) String() string {
	if r.Auto {
		return fmt.Sprintf("auto (%s)", r.Source)
	}
	return fmt.Sprintf("%d (%s)", r.Layers, r.Source)
}

// Resolve turns the request into the Plan for a model with nLayers blocks
// (pure). fit is FitBlocks' answer and is used only for auto. An explicit
// count above nLayers+1 ("all blocks + output") is clamped to it and the
// returned note says so; otherwise the note is empty.
func (r Request) Resolve(nLayers int, fit int) (Plan, string) {
	nLayers = max(nLayers, 0)
	if r.Auto {
		return NewPlan(fit, nLayers), ""
	}
	plan := NewPlan(r.Layers, nLayers)
	if r.Layers > nLayers+1 {
		return plan, fmt.Sprintf("offload: %s=%d is more than the model's %d blocks + output; using %d (all blocks + output)",
			r.Source, r.Layers, nLayers, plan.GPULayers)
	}
	return plan, ""
}

// BudgetRefusal decides whether an error from WeightBudget stops a load with
// this request. The automatic fit needs the budget, so any error refuses it;
// a failed device query (ErrDeviceQuery) is not a zero budget (docs/memory-policy.md), so
// an explicit count does not need the answer and proceeds (nil). A malformed
// MINFER_GPU_MEM always refuses: it is a setting that says nothing usable.
func (r Request) BudgetRefusal(budgetErr error) error {
	switch {
	case budgetErr == nil:
		return nil
	case !errors.Is(budgetErr, ErrDeviceQuery):
		return budgetErr
	case r.Auto:
		return fmt.Errorf("offload: automatic offload (%s) needs the device's free memory: %w; set %s=<MiB> or %s N to choose without it",
			r.Source, budgetErr, EnvGPUMem, SourceFlag)
	default:
		return nil
	}
}
