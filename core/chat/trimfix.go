package chat

import (
	"strings"
	"unicode"
)

// ardanlabs/jinja v1.8.0 applies trim_blocks / lstrip_blocks / "-" markers
// to the nearest *text* segment on each side of a tag, skipping over any tags
// in between. Jinja2 only touches text that is directly adjacent. So in
//
//	{% for m in messages %}{{ m.content }}\n{% endfor %}
//
// the engine eats the "\n" after the expression (Jinja2 keeps it), and a
// "{{- x }}" right after a block tag strips text before that block tag. It
// also treats leading spaces of the first text segment as "start of line"
// even when a tag precedes them on the same line.
//
// separateAdjacentTags rewrites the source so that every tag is adjacent to a
// text segment the engine may trim freely: between two touching tags it
// inserts one space and turns the right-hand tag's opener into its "-" form
// ("{%" → "{%-"). The "-" trims exactly that inserted space and nothing else,
// because the space is the nearest text; the search of the left-hand tag's
// right side stops there too. This is output-neutral in Jinja2 terms: between
// touching tags there was no text to trim. A template that starts with a tag
// gets the same treatment at offset 0, so no later text is mistaken for the
// start of the template.
//
// Tags are found exactly as the engine's scanner finds them (quotes inside
// {{ }} and {% %} hide closers; comments are raw). Regions inside
// {% raw %}…{% endraw %} are left alone. Unclosed tags leave the source
// unchanged so the engine reports the syntax error.
func separateAdjacentTags(src string) string {
	tags, ok := scanTags(src)
	if !ok || len(tags) == 0 {
		return src
	}
	// Tags from {% raw %} to {% endraw %} are the raw block's text; leave
	// them and their neighbours as written.
	rawRelated := make([]bool, len(tags))
	inRaw := false
	for i, tag := range tags {
		keyword := ""
		if tag.kind == '%' {
			keyword = stmtKeywordOf(src[tag.contentStart:tag.contentEnd])
		}
		if keyword == "raw" {
			inRaw = true
		}
		rawRelated[i] = inRaw
		if keyword == "endraw" {
			inRaw = false
		}
	}
	var b strings.Builder
	b.Grow(len(src) + 2*len(tags))
	copied := 0
	for i, tag := range tags {
		prevEnd := 0
		if i > 0 {
			prevEnd = tags[i-1].end
		}
		if tag.start != prevEnd || rawRelated[i] || (i > 0 && rawRelated[i-1]) {
			continue
		}
		b.WriteString(src[copied:tag.start])
		b.WriteByte(' ')
		b.WriteString(src[tag.start : tag.start+2])
		if !tag.trimLeft {
			b.WriteByte('-')
		}
		copied = tag.start + 2
	}
	b.WriteString(src[copied:])
	return b.String()
}

type scannedTag struct {
	kind                     byte // '{' expression, '%' statement, '#' comment
	start, end               int  // offsets of "{x" and just past "x}"
	contentStart, contentEnd int
	trimLeft                 bool
}

// scanTags mirrors the engine's scanner (scan.go in ardanlabs/jinja v1.8.0).
func scanTags(src string) ([]scannedTag, bool) {
	var tags []scannedTag
	i := 0
	for i < len(src) {
		if src[i] != '{' || i+1 >= len(src) {
			i++
			continue
		}
		var closer string
		switch src[i+1] {
		case '{':
			closer = "}}"
		case '%':
			closer = "%}"
		case '#':
			closer = "#}"
		default:
			i++
			continue
		}
		tag := scannedTag{kind: src[i+1], start: i}
		i += 2
		if i < len(src) && src[i] == '-' {
			tag.trimLeft = true
			i++
		}
		tag.contentStart = i
		found := false
		for i < len(src) {
			ch := src[i]
			if tag.kind != '#' && (ch == '\'' || ch == '"') {
				i++
				for i < len(src) && src[i] != ch {
					if src[i] == '\\' && i+1 < len(src) {
						i++
					}
					i++
				}
				if i < len(src) {
					i++
				}
				continue
			}
			if ch == '-' && i+2 < len(src) && src[i+1] == closer[0] && src[i+2] == closer[1] {
				tag.contentEnd = i
				i += 3
				found = true
				break
			}
			if i+1 < len(src) && ch == closer[0] && src[i+1] == closer[1] {
				tag.contentEnd = i
				i += 2
				found = true
				break
			}
			i++
		}
		if !found {
			return nil, false
		}
		tag.end = i
		tags = append(tags, tag)
	}
	return tags, true
}

// stmtKeywordOf is the statement's first word, as the engine reads it.
func stmtKeywordOf(text string) string {
	text = strings.TrimSpace(text)
	for i, r := range text {
		if !unicode.IsLetter(r) && r != '_' {
			return text[:i]
		}
	}
	return text
}

// normalizeLineBreaks does what Jinja2's lexer does to every template before
// anything else (newline_sequence "\n", keep_trailing_newline=False, the
// Hugging Face settings): "\r\n" and "\r" become "\n", and one trailing
// line break is dropped.
func normalizeLineBreaks(src string) string {
	src = strings.ReplaceAll(src, "\r\n", "\n")
	src = strings.ReplaceAll(src, "\r", "\n")
	return strings.TrimSuffix(src, "\n")
}
