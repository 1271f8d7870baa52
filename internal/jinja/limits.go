package jinja

import (
	"errors"
	"fmt"
	"strings"
)

// Templates may come from untrusted files (a model's chat template), and a
// Go stack overflow or an out-of-memory error ends the process without any
// chance to recover. Every render therefore runs under Limits, enforced by
// the evaluator itself: nesting of macro calls, work done, and the size of
// every string, list and of the output.

// Limits bound one render. A zero field takes the DefaultLimits value.
type Limits struct {
	// MaxDepth bounds nested macro and caller() invocations.
	MaxDepth int
	// MaxSteps bounds the work of a render, counted in nodes executed,
	// loop iterations, calls, and items or bytes (per 64) handled by
	// filters and operators.
	MaxSteps int64
	// MaxBytes bounds any string value and the output.
	MaxBytes int
	// MaxItems bounds any list or dict.
	MaxItems int
}

// DefaultLimits are far above what real chat templates need (they render a
// conversation in thousands of steps, recurse a few levels over JSON
// schemas) and low enough that a hostile template fails within a second or
// two and some tens of MiB.
func DefaultLimits() Limits {
	return Limits{MaxDepth: 100, MaxSteps: 1_000_000, MaxBytes: 8 << 20, MaxItems: 1 << 20}
}

// hardMaxBytes caps what the value printers and JSON encoders build before
// the per-render check sees the result: a list holding a million references
// to one large string would otherwise print to terabytes.
const hardMaxBytes = 64 << 20

// maxNesting bounds how deep printing, comparing and encoding descend into
// nested values; deeper structures are, in practice, self-references
// (a list appended to itself).
const maxNesting = 64

// ErrLimit is wrapped by every LimitError.
var ErrLimit = errors.New("jinja: render limit exceeded")

// LimitError reports which limit a render exceeded.
type LimitError struct {
	What  string // "recursion depth", "steps", "string size", "output size", "list size"
	Limit int64
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("template exceeds the %s limit of %d", e.What, e.Limit)
}

// Unwrap returns ErrLimit.
func (e *LimitError) Unwrap() error { return ErrLimit }

// budget is shared by the evaluator of a render and every nested evaluator
// (macro bodies, call blocks, set blocks).
type budget struct {
	lim   Limits
	depth int
	steps int64
}

func newBudget(lim Limits) *budget {
	def := DefaultLimits()
	if lim.MaxDepth <= 0 {
		lim.MaxDepth = def.MaxDepth
	}
	if lim.MaxSteps <= 0 {
		lim.MaxSteps = def.MaxSteps
	}
	if lim.MaxBytes <= 0 {
		lim.MaxBytes = def.MaxBytes
	}
	if lim.MaxBytes > hardMaxBytes {
		lim.MaxBytes = hardMaxBytes
	}
	if lim.MaxItems <= 0 {
		lim.MaxItems = def.MaxItems
	}
	return &budget{lim: lim}
}

// charge counts n units of work.
func (b *budget) charge(n int64) error {
	b.steps += n
	if b.steps > b.lim.MaxSteps {
		return &LimitError{What: "steps", Limit: b.lim.MaxSteps}
	}
	return nil
}

// enter counts one level of call nesting; leave undoes it.
func (b *budget) enter() error {
	if b.depth >= b.lim.MaxDepth {
		return &LimitError{What: "recursion depth", Limit: int64(b.lim.MaxDepth)}
	}
	b.depth++
	return b.charge(1)
}

func (b *budget) leave() { b.depth-- }

// checkBytes refuses a string of n bytes before it is built.
func (b *budget) checkBytes(n int64) error {
	if n > int64(b.lim.MaxBytes) || n < 0 {
		return &LimitError{What: "string size", Limit: int64(b.lim.MaxBytes)}
	}
	return nil
}

// checkValue refuses an oversized result and charges the work of making
// it (a string per 64 bytes, a list or dict per item).
func (b *budget) checkValue(v Value) error {
	switch v.kind {
	case KindString:
		n := len(v.v.(string))
		if err := b.checkBytes(int64(n)); err != nil {
			return err
		}
		return b.charge(int64(n) / 64)
	case KindList:
		n := v.v.(*List).Len()
		if n > b.lim.MaxItems {
			return &LimitError{What: "list size", Limit: int64(b.lim.MaxItems)}
		}
		return b.charge(int64(n) / 2)
	case KindDict:
		n := v.v.(*Dict).Len()
		if n > b.lim.MaxItems {
			return &LimitError{What: "list size", Limit: int64(b.lim.MaxItems)}
		}
		return b.charge(int64(n) / 8)
	}
	return nil
}

// checkOutput refuses output grown past the limit.
func (b *budget) checkOutput(sb *strings.Builder) error {
	if sb.Len() > b.lim.MaxBytes {
		return &LimitError{What: "output size", Limit: int64(b.lim.MaxBytes)}
	}
	return nil
}

// estimateFilter returns, for the filters whose output can be much larger
// than their input, an upper bound of the output's size in bytes, so the
// render fails before allocating it. Other filters return -1.
func estimateFilter(name string, args []Value, kwargs map[string]Value) int64 {
	switch name {
	case "join":
		if len(args) == 0 || !args[0].IsList() {
			return -1
		}
		sep := int64(0)
		if len(args) > 1 {
			sep = int64(len(printValue(args[1])))
		}
		if s, ok := kwargs["d"]; ok {
			sep = int64(len(printValue(s)))
		}
		return joinedSize(args[0].AsList().Items, sep)
	case "replace":
		if len(args) < 3 {
			return -1
		}
		return replacedSize(printValue(args[0]), printValue(args[1]), printValue(args[2]))
	case "indent":
		if len(args) == 0 {
			return -1
		}
		s := printValue(args[0])
		width := int64(4)
		if len(args) > 1 {
			width = toInt64(args[1])
		}
		if w, ok := kwargs["width"]; ok {
			width = toInt64(w)
		}
		lines := int64(strings.Count(s, "\n") + 1)
		if width < 0 {
			width = 0
		}
		return satAdd(int64(len(s)), satMul(lines, width))
	}
	return -1
}

// joinedSize is the length of the items joined with a separator of sep bytes.
func joinedSize(items []Value, sep int64) int64 {
	total := satMul(int64(len(items)), sep)
	for _, it := range items {
		if it.IsString() {
			total = satAdd(total, int64(len(it.AsString())))
		} else {
			total = satAdd(total, int64(len(printValue(it))))
		}
		if total > hardMaxBytes {
			return total
		}
	}
	return total
}

// replacedSize is the length of strings.Replace(s, old, new, -1).
func replacedSize(s, old, newStr string) int64 {
	n := int64(strings.Count(s, old))
	if old == "" {
		n = int64(len([]rune(s)) + 1)
	}
	return satAdd(int64(len(s)), satMul(n, int64(len(newStr))-int64(len(old))))
}

func satMul(a, b int64) int64 {
	if a == 0 || b == 0 {
		return 0
	}
	if a > 0 && b > 0 && a > (1<<62)/b {
		return 1 << 62
	}
	return a * b
}

func satAdd(a, b int64) int64 {
	if s := a + b; s >= a == (b >= 0) {
		return s
	}
	if b > 0 {
		return 1 << 62
	}
	return -1 << 62
}

// cappedWriter is a strings.Builder that stops growing at hardMaxBytes
// (further writes are dropped and the result is marked over).
type cappedWriter struct {
	strings.Builder
	over bool
}

func (w *cappedWriter) WriteString(s string) {
	if w.over {
		return
	}
	if w.Len()+len(s) > hardMaxBytes {
		w.over = true
		return
	}
	w.Builder.WriteString(s)
}

func (w *cappedWriter) WriteByte(c byte) error {
	w.WriteString(string(c))
	return nil
}
