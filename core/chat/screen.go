package chat

import "fmt"

// A template comes from the model file. The Jinja engine (internal/jinja)
// enforces limits on recursion, work and sizes during every render, so a
// hostile template fails with an error instead of overflowing the stack or
// exhausting memory; the screen only bounds the source itself.

// maxTemplateBytes bounds the template source (real ones are under 20 KiB).
const maxTemplateBytes = 256 << 10

// screen refuses template sources too large to be real chat templates.
func screen(src string) error {
	if len(src) > maxTemplateBytes {
		return fmt.Errorf("%w: template of %d bytes exceeds %d", ErrTemplate, len(src), maxTemplateBytes)
	}
	return nil
}
