package gguf

import (
	"errors"
	"fmt"
	"math"
)

// ValueType is the type tag of a metadata value (gguf_type).
type ValueType uint32

const (
	ValUint8   ValueType = 0
	ValInt8    ValueType = 1
	ValUint16  ValueType = 2
	ValInt16   ValueType = 3
	ValUint32  ValueType = 4
	ValInt32   ValueType = 5
	ValFloat32 ValueType = 6
	ValBool    ValueType = 7
	ValString  ValueType = 8
	ValArray   ValueType = 9
	ValUint64  ValueType = 10
	ValInt64   ValueType = 11
	ValFloat64 ValueType = 12
)

func (t ValueType) String() string {
	names := [...]string{"uint8", "int8", "uint16", "int16", "uint32", "int32", "float32", "bool", "string", "array", "uint64", "int64", "float64"}
	if int(t) < len(names) {
		return names[t]
	}
	return fmt.Sprintf("value_type(%d)", uint32(t))
}

// scalarSize is the encoded size of a fixed-size value type, 0 for string/array.
func (t ValueType) scalarSize() int {
	switch t {
	case ValUint8, ValInt8, ValBool:
		return 1
	case ValUint16, ValInt16:
		return 2
	case ValUint32, ValInt32, ValFloat32:
		return 4
	case ValUint64, ValInt64, ValFloat64:
		return 8
	}
	return 0
}

// Value is one metadata value. Scalars are held as their Go type (uint8, int8,
// …, float64, bool, string); arrays as Array.
type Value struct {
	Type ValueType
	V    any
}

// Array is a metadata array. Items is a typed slice ([]string, []int32,
// []float32, []uint8, … or []Array for nested arrays) so that 150k-entry
// vocabularies stay compact.
type Array struct {
	ElemType ValueType
	Items    any
}

// Len is the number of elements in the array.
func (a Array) Len() int {
	switch s := a.Items.(type) {
	case []uint8:
		return len(s)
	case []int8:
		return len(s)
	case []uint16:
		return len(s)
	case []int16:
		return len(s)
	case []uint32:
		return len(s)
	case []int32:
		return len(s)
	case []float32:
		return len(s)
	case []bool:
		return len(s)
	case []string:
		return len(s)
	case []Array:
		return len(s)
	case []uint64:
		return len(s)
	case []int64:
		return len(s)
	case []float64:
		return len(s)
	}
	return 0
}

// KV is one metadata key/value pair, in file order.
type KV struct {
	Key   string
	Value Value
}

var (
	// ErrKeyNotFound is returned by the typed getters for an absent key.
	ErrKeyNotFound = errors.New("gguf: metadata key not found")
	// ErrTypeMismatch is returned when a key holds a value that cannot be
	// converted losslessly to the requested type.
	ErrTypeMismatch = errors.New("gguf: metadata type mismatch")
)

// Metadata is the KV section of a GGUF file, in file order with an index.
type Metadata struct {
	KVs   []KV
	index map[string]int
}

func (m *Metadata) add(k string, v Value) bool {
	if m.index == nil {
		m.index = map[string]int{}
	}
	if _, dup := m.index[k]; dup {
		return false
	}
	m.index[k] = len(m.KVs)
	m.KVs = append(m.KVs, KV{k, v})
	return true
}

// Get returns the value stored under key.
func (m *Metadata) Get(key string) (Value, bool) {
	i, ok := m.index[key]
	if !ok {
		return Value{}, false
	}
	return m.KVs[i].Value, true
}

// Has reports whether key is present.
func (m *Metadata) Has(key string) bool { _, ok := m.index[key]; return ok }

func (m *Metadata) lookup(key string) (Value, error) {
	v, ok := m.Get(key)
	if !ok {
		return Value{}, fmt.Errorf("%w: %q", ErrKeyNotFound, key)
	}
	return v, nil
}

func mismatch(key string, v Value, want string) error {
	return fmt.Errorf("%w: %q holds %s, want %s", ErrTypeMismatch, key, describe(v), want)
}

func describe(v Value) string {
	if a, ok := v.V.(Array); ok {
		return fmt.Sprintf("array of %d %s", a.Len(), a.ElemType)
	}
	if s, ok := v.V.(string); ok {
		// Chat templates run to kilobytes; an error needs only the start.
		if len(s) > 40 {
			s = s[:40] + "…"
		}
		return fmt.Sprintf("string %q", s)
	}
	return fmt.Sprintf("%s %v", v.Type, v.V)
}

// asInt64 converts any integer scalar (and bool) to int64, reporting whether
// it fit: uint64 values above MaxInt64 do not.
func asInt64(v any) (int64, bool) {
	switch x := v.(type) {
	case uint8:
		return int64(x), true
	case int8:
		return int64(x), true
	case uint16:
		return int64(x), true
	case int16:
		return int64(x), true
	case uint32:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	case uint64:
		if x > math.MaxInt64 {
			return 0, false
		}
		return int64(x), true
	}
	return 0, false
}

// Int64 returns an integer value of any width.
func (m *Metadata) Int64(key string) (int64, error) {
	v, err := m.lookup(key)
	if err != nil {
		return 0, err
	}
	if x, ok := asInt64(v.V); ok {
		return x, nil
	}
	return 0, mismatch(key, v, "int64")
}

// Uint64 returns a non-negative integer value of any width.
func (m *Metadata) Uint64(key string) (uint64, error) {
	v, err := m.lookup(key)
	if err != nil {
		return 0, err
	}
	if x, ok := v.V.(uint64); ok {
		return x, nil
	}
	if x, ok := asInt64(v.V); ok && x >= 0 {
		return uint64(x), nil
	}
	return 0, mismatch(key, v, "uint64")
}

// Uint32 returns an integer value that fits in uint32.
func (m *Metadata) Uint32(key string) (uint32, error) {
	x, err := m.Uint64(key)
	if err != nil {
		v, _ := m.Get(key)
		if errors.Is(err, ErrTypeMismatch) {
			return 0, mismatch(key, v, "uint32")
		}
		return 0, err
	}
	if x > math.MaxUint32 {
		v, _ := m.Get(key)
		return 0, mismatch(key, v, "uint32")
	}
	return uint32(x), nil
}

// Int32 returns an integer value that fits in int32.
func (m *Metadata) Int32(key string) (int32, error) {
	x, err := m.Int64(key)
	if err != nil {
		if errors.Is(err, ErrTypeMismatch) {
			v, _ := m.Get(key)
			return 0, mismatch(key, v, "int32")
		}
		return 0, err
	}
	if x < math.MinInt32 || x > math.MaxInt32 {
		v, _ := m.Get(key)
		return 0, mismatch(key, v, "int32")
	}
	return int32(x), nil
}

// Float32 returns a float value; float64 values are narrowed, integers
// converted when exactly representable.
func (m *Metadata) Float32(key string) (float32, error) {
	v, err := m.lookup(key)
	if err != nil {
		return 0, err
	}
	switch x := v.V.(type) {
	case float32:
		return x, nil
	case float64:
		return float32(x), nil
	}
	if x, ok := asInt64(v.V); ok && x >= -1<<24 && x <= 1<<24 {
		return float32(x), nil
	}
	return 0, mismatch(key, v, "float32")
}

// Bool returns a bool value.
func (m *Metadata) Bool(key string) (bool, error) {
	v, err := m.lookup(key)
	if err != nil {
		return false, err
	}
	if x, ok := v.V.(bool); ok {
		return x, nil
	}
	return false, mismatch(key, v, "bool")
}

// String returns a string value.
func (m *Metadata) String(key string) (string, error) {
	v, err := m.lookup(key)
	if err != nil {
		return "", err
	}
	if x, ok := v.V.(string); ok {
		return x, nil
	}
	return "", mismatch(key, v, "string")
}

// Array returns an array value.
func (m *Metadata) Array(key string) (Array, error) {
	v, err := m.lookup(key)
	if err != nil {
		return Array{}, err
	}
	if x, ok := v.V.(Array); ok {
		return x, nil
	}
	return Array{}, mismatch(key, v, "array")
}

// Strings returns an array of strings.
func (m *Metadata) Strings(key string) ([]string, error) {
	a, err := m.Array(key)
	if err != nil {
		return nil, err
	}
	if s, ok := a.Items.([]string); ok {
		return s, nil
	}
	v, _ := m.Get(key)
	return nil, mismatch(key, v, "array of string")
}

// Float32s returns an array of float32 (float64 arrays are narrowed).
func (m *Metadata) Float32s(key string) ([]float32, error) {
	a, err := m.Array(key)
	if err != nil {
		return nil, err
	}
	switch s := a.Items.(type) {
	case []float32:
		return s, nil
	case []float64:
		out := make([]float32, len(s))
		for i, x := range s {
			out[i] = float32(x)
		}
		return out, nil
	}
	v, _ := m.Get(key)
	return nil, mismatch(key, v, "array of float32")
}

// Int32s returns an array of integers that all fit in int32.
func (m *Metadata) Int32s(key string) ([]int32, error) {
	a, err := m.Array(key)
	if err != nil {
		return nil, err
	}
	if s, ok := a.Items.([]int32); ok {
		return s, nil
	}
	v, _ := m.Get(key)
	n := a.Len()
	out := make([]int32, 0, n)
	for i := 0; i < n; i++ {
		x, ok := arrayInt(a, i)
		if !ok || x < math.MinInt32 || x > math.MaxInt32 {
			return nil, mismatch(key, v, "array of int32")
		}
		out = append(out, int32(x))
	}
	return out, nil
}

func arrayInt(a Array, i int) (int64, bool) {
	switch s := a.Items.(type) {
	case []uint8:
		return int64(s[i]), true
	case []int8:
		return int64(s[i]), true
	case []uint16:
		return int64(s[i]), true
	case []int16:
		return int64(s[i]), true
	case []uint32:
		return int64(s[i]), true
	case []int32:
		return int64(s[i]), true
	case []int64:
		return s[i], true
	case []uint64:
		return asInt64(s[i])
	}
	return 0, false
}
