package jinja

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// FromJSON decodes JSON text into a Value as Python's json.loads does:
// objects keep their key order, integers stay integers.
func FromJSON(data []byte) (Value, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	v, err := decodeJSONValue(dec, 0)
	if err != nil {
		return Undefined(), err
	}
	if _, err := dec.Token(); err != io.EOF {
		return Undefined(), errors.New("trailing data after the JSON value")
	}
	return v, nil
}

func decodeJSONValue(dec *json.Decoder, depth int) (Value, error) {
	if depth > maxNesting {
		return Undefined(), fmt.Errorf("JSON nested deeper than %d", maxNesting)
	}
	tok, err := dec.Token()
	if err != nil {
		return Undefined(), err
	}
	switch tok := tok.(type) {
	case json.Delim:
		switch tok {
		case '[':
			var items []Value
			for dec.More() {
				item, err := decodeJSONValue(dec, depth+1)
				if err != nil {
					return Undefined(), err
				}
				items = append(items, item)
			}
			if _, err := dec.Token(); err != nil { // ']'
				return Undefined(), err
			}
			return NewList(items), nil
		case '{':
			obj := NewDict()
			for dec.More() {
				keyTok, err := dec.Token()
				if err != nil {
					return Undefined(), err
				}
				key, ok := keyTok.(string)
				if !ok {
					return Undefined(), fmt.Errorf("object key %v is not a string", keyTok)
				}
				val, err := decodeJSONValue(dec, depth+1)
				if err != nil {
					return Undefined(), err
				}
				obj.AsDict().Set(key, val)
			}
			if _, err := dec.Token(); err != nil { // '}'
				return Undefined(), err
			}
			return obj, nil
		}
		return Undefined(), fmt.Errorf("unexpected delimiter %q", rune(tok))
	case string:
		return NewString(tok), nil
	case json.Number:
		if n, err := tok.Int64(); err == nil {
			return NewInt(n), nil
		}
		f, err := tok.Float64()
		if err != nil {
			return Undefined(), fmt.Errorf("number %s: %w", tok, err)
		}
		return NewFloat(f), nil
	case bool:
		return NewBool(tok), nil
	case nil:
		return None(), nil
	}
	return Undefined(), fmt.Errorf("unexpected JSON token %v", tok)
}
