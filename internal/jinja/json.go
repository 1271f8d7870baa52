package jinja

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"unicode/utf8"
)

// jsonEncoder writes a Value as Python's json.dumps(ensure_ascii=False)
// does (the tojson filter of Hugging Face chat templates): dict keys in
// their order, the given separators, optional indentation, and no HTML
// escaping. Output is capped at hardMaxBytes and nesting at maxNesting
// (Python raises on circular references).
type jsonEncoder struct {
	w       cappedWriter
	itemSep string
	keySep  string
	indent  string // "" for one line; "\x00" for indent=0
}

func (j *jsonEncoder) newline(level int) {
	if j.indent == "" {
		return
	}
	j.w.WriteByte('\n')
	if j.indent != "\x00" {
		for range level {
			j.w.WriteString(j.indent)
		}
	}
}

func (j *jsonEncoder) encode(v Value, level int) error {
	if level > maxNesting {
		return fmt.Errorf("tojson: ValueError: Circular reference detected (or nesting deeper than %d)", maxNesting)
	}
	if j.w.over {
		return nil
	}
	switch v.kind {
	case KindUndefined, KindNone, KindCallable:
		j.w.WriteString("null")
	case KindBool:
		if v.AsBool() {
			j.w.WriteString("true")
		} else {
			j.w.WriteString("false")
		}
	case KindInt:
		j.w.WriteString(strconv.FormatInt(v.AsInt(), 10))
	case KindFloat:
		f := v.AsFloat()
		switch {
		case math.IsNaN(f):
			j.w.WriteString("NaN")
		case math.IsInf(f, 1):
			j.w.WriteString("Infinity")
		case math.IsInf(f, -1):
			j.w.WriteString("-Infinity")
		default:
			j.w.WriteString(pyFloat(f))
		}
	case KindString:
		writeJSONString(&j.w, v.AsString())
	case KindList:
		items := v.AsList().Items
		if len(items) == 0 {
			j.w.WriteString("[]")
			return nil
		}
		j.w.WriteByte('[')
		for i, item := range items {
			if i > 0 {
				j.w.WriteString(j.itemSep)
			}
			j.newline(level + 1)
			if err := j.encode(item, level+1); err != nil {
				return err
			}
		}
		j.newline(level)
		j.w.WriteByte(']')
	case KindDict:
		d := v.AsDict()
		if len(d.Keys) == 0 {
			j.w.WriteString("{}")
			return nil
		}
		j.w.WriteByte('{')
		for i, key := range d.Keys {
			if i > 0 {
				j.w.WriteString(j.itemSep)
			}
			j.newline(level + 1)
			writeJSONString(&j.w, key)
			j.w.WriteString(j.keySep)
			if err := j.encode(d.Data[key], level+1); err != nil {
				return err
			}
		}
		j.newline(level)
		j.w.WriteByte('}')
	}
	return nil
}

// writeJSONString quotes s as Python's json module does with
// ensure_ascii=False: only '"', '\\' and control characters are escaped.
// Invalid UTF-8 bytes (Python strings cannot hold them) become U+FFFD.
func writeJSONString(w *cappedWriter, s string) {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('"')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '"':
			b.WriteString(`\"`)
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r == '\b':
			b.WriteString(`\b`)
		case r == '\f':
			b.WriteString(`\f`)
		case r < 0x20:
			fmt.Fprintf(&b, `\u%04x`, r)
		case r == utf8.RuneError && size == 1:
			b.WriteString("\uFFFD")
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('"')
	w.WriteString(b.String())
}

// pyFloat formats f as Python's repr(float) does: the shortest digits
// that round-trip, positional between 1e-4 and 1e16 (with ".0" when
// integral), scientific otherwise.
func pyFloat(f float64) string {
	switch {
	case math.IsNaN(f):
		return "nan"
	case math.IsInf(f, 1):
		return "inf"
	case math.IsInf(f, -1):
		return "-inf"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	// The decimal exponent, read from the shortest 'e' form (exact, where
	// Log10 can be off by one near powers of ten).
	e := strconv.FormatFloat(f, 'e', -1, 64)
	if exp, _ := strconv.Atoi(e[strings.LastIndexByte(e, 'e')+1:]); exp < -4 || exp >= 16 {
		return e
	}
	s := strconv.FormatFloat(f, 'f', -1, 64)
	if !strings.ContainsAny(s, ".") {
		s += ".0"
	}
	return s
}
