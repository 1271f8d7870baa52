package chat

import (
	"fmt"
	"regexp"
	"strconv"
)

// The Jinja engine has no memory or recursion limits, and a template comes
// from the model file: a hostile one could make the process die with an
// out-of-memory or stack-overflow fatal error that recover cannot catch.
// Real chat templates never need the constructs that do it most cheaply
// (the power operator, huge integer literals), so a template using them is
// refused and the caller falls back to a built-in format. Recursive macros
// stay allowed: tool-use templates recurse over JSON schemas; an unbounded
// one remains a known risk of the engine.

var (
	bigIntLiteral = regexp.MustCompile(`[0-9]{7,}`)
	powerOperator = regexp.MustCompile(`\*\*`)
)

// maxTemplateBytes bounds the template source (real ones are under 20 KiB).
const maxTemplateBytes = 256 << 10

// screen refuses templates that could exhaust memory or the stack.
func screen(src string) error {
	if len(src) > maxTemplateBytes {
		return fmt.Errorf("%w: template of %d bytes exceeds %d", ErrTemplate, len(src), maxTemplateBytes)
	}
	if loc := powerOperator.FindStringIndex(src); loc != nil {
		return fmt.Errorf("%w: the ** operator (at byte %d) is not allowed in chat templates", ErrTemplate, loc[0])
	}
	for _, loc := range bigIntLiteral.FindAllStringIndex(src, -1) {
		if n, err := strconv.ParseInt(src[loc[0]:loc[1]], 10, 64); err != nil || n > 1_000_000 {
			return fmt.Errorf("%w: integer literal %.20s (at byte %d) is too large for a chat template", ErrTemplate, src[loc[0]:loc[1]], loc[0])
		}
	}
	return nil
}
