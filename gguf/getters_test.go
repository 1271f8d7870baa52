package gguf

import (
	"errors"
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/minfer/minfer/internal/ggtest"
)

// getterMeta goes through the writer and parser so the getters see values
// exactly as a file delivers them.
func getterMeta(t *testing.T) *Metadata {
	t.Helper()
	b := NewBuilder()
	b.Set("u8", Value{ValUint8, uint8(200)})
	b.Set("i8.neg", Value{ValInt8, int8(-5)})
	b.Set("u16", Value{ValUint16, uint16(65535)})
	b.Set("i16", Value{ValInt16, int16(-300)})
	b.Set("u32.max", Value{ValUint32, uint32(math.MaxUint32)})
	b.Set("i32.min", Value{ValInt32, int32(math.MinInt32)})
	b.Set("u64.big", Value{ValUint64, uint64(math.MaxUint64)})
	b.Set("u64.small", Value{ValUint64, uint64(4096)})
	b.Set("i64.neg", Value{ValInt64, int64(-1)})
	b.Set("i64.2to24", Value{ValInt64, int64(1 << 24)})
	b.Set("i64.2to24+1", Value{ValInt64, int64(1<<24 + 1)})
	b.Set("f32", Value{ValFloat32, float32(1.5)})
	b.Set("f64", Value{ValFloat64, float64(0.1)})
	b.Set("bool", Value{ValBool, true})
	b.Set("str", Value{ValString, "llama"})
	b.Set("str.long", Value{ValString, strings.Repeat("{% if %}", 100)})
	b.Set("arr.u8", Value{ValArray, Array{ValUint8, []uint8{1, 255}}})
	b.Set("arr.i64", Value{ValArray, Array{ValInt64, []int64{-1, math.MaxInt32}}})
	b.Set("arr.i64.big", Value{ValArray, Array{ValInt64, []int64{0, math.MaxInt32 + 1}}})
	b.Set("arr.u32.big", Value{ValArray, Array{ValUint32, []uint32{math.MaxUint32}}})
	b.Set("arr.i32", Value{ValArray, Array{ValInt32, []int32{3, -3}}})
	b.Set("arr.f32", Value{ValArray, Array{ValFloat32, []float32{0.5}}})
	b.Set("arr.f64", Value{ValArray, Array{ValFloat64, []float64{0.25, 2}}})
	b.Set("arr.str", Value{ValArray, Array{ValString, []string{"a"}}})
	b.Set("arr.bool", Value{ValArray, Array{ValBool, []bool{true}}})
	f, _ := writeAndParse(t, b)
	return &f.Meta
}

func TestGetters(t *testing.T) {
	m := getterMeta(t)
	type result struct {
		val any
		err error
	}
	get := map[string]func(key string) result{
		"Int64":    func(k string) result { v, err := m.Int64(k); return result{v, err} },
		"Uint64":   func(k string) result { v, err := m.Uint64(k); return result{v, err} },
		"Uint32":   func(k string) result { v, err := m.Uint32(k); return result{v, err} },
		"Int32":    func(k string) result { v, err := m.Int32(k); return result{v, err} },
		"Float32":  func(k string) result { v, err := m.Float32(k); return result{v, err} },
		"Bool":     func(k string) result { v, err := m.Bool(k); return result{v, err} },
		"String":   func(k string) result { v, err := m.String(k); return result{v, err} },
		"Strings":  func(k string) result { v, err := m.Strings(k); return result{v, err} },
		"Float32s": func(k string) result { v, err := m.Float32s(k); return result{v, err} },
		"Int32s":   func(k string) result { v, err := m.Int32s(k); return result{v, err} },
	}
	cases := []struct {
		getter, key string
		want        any    // on success
		wantErr     error  // ErrTypeMismatch or ErrKeyNotFound
		errText     string // must appear in the message
	}{
		// Lossless widening and narrowing.
		{"Int64", "u8", int64(200), nil, ""},
		{"Int64", "i8.neg", int64(-5), nil, ""},
		{"Int64", "u64.small", int64(4096), nil, ""},
		{"Int64", "i32.min", int64(math.MinInt32), nil, ""},
		{"Uint64", "u16", uint64(65535), nil, ""},
		{"Uint64", "u64.big", uint64(math.MaxUint64), nil, ""},
		{"Uint32", "u8", uint32(200), nil, ""},
		{"Uint32", "u32.max", uint32(math.MaxUint32), nil, ""},
		{"Uint32", "u64.small", uint32(4096), nil, ""},
		{"Int32", "i16", int32(-300), nil, ""},
		{"Int32", "u16", int32(65535), nil, ""},
		{"Int32", "i32.min", int32(math.MinInt32), nil, ""},
		{"Float32", "f32", float32(1.5), nil, ""},
		{"Float32", "f64", float32(0.1), nil, ""},
		{"Float32", "u8", float32(200), nil, ""},
		{"Float32", "i64.2to24", float32(1 << 24), nil, ""},
		{"Bool", "bool", true, nil, ""},
		{"String", "str", "llama", nil, ""},
		{"Strings", "arr.str", []string{"a"}, nil, ""},
		{"Float32s", "arr.f32", []float32{0.5}, nil, ""},
		{"Float32s", "arr.f64", []float32{0.25, 2}, nil, ""},
		{"Int32s", "arr.i32", []int32{3, -3}, nil, ""},
		{"Int32s", "arr.u8", []int32{1, 255}, nil, ""},
		{"Int32s", "arr.i64", []int32{-1, math.MaxInt32}, nil, ""},
		// Overflow and sign.
		{"Int64", "u64.big", nil, ErrTypeMismatch, `"u64.big" holds uint64 18446744073709551615, want int64`},
		{"Uint64", "i8.neg", nil, ErrTypeMismatch, `"i8.neg" holds int8 -5, want uint64`},
		{"Uint32", "i64.neg", nil, ErrTypeMismatch, `"i64.neg" holds int64 -1, want uint32`},
		{"Uint32", "u64.big", nil, ErrTypeMismatch, `"u64.big" holds uint64 18446744073709551615, want uint32`},
		{"Int32", "u32.max", nil, ErrTypeMismatch, `"u32.max" holds uint32 4294967295, want int32`},
		{"Int32", "u64.big", nil, ErrTypeMismatch, `"u64.big" holds uint64 18446744073709551615, want int32`},
		{"Float32", "i64.2to24+1", nil, ErrTypeMismatch, `"i64.2to24+1" holds int64 16777217, want float32`},
		{"Int32s", "arr.i64.big", nil, ErrTypeMismatch, `"arr.i64.big" holds array of 2 int64, want array of int32`},
		{"Int32s", "arr.u32.big", nil, ErrTypeMismatch, `"arr.u32.big" holds array of 1 uint32, want array of int32`},
		// Wrong kind.
		{"Int64", "f32", nil, ErrTypeMismatch, `"f32" holds float32 1.5, want int64`},
		{"Uint32", "str", nil, ErrTypeMismatch, `"str" holds string "llama", want uint32`},
		{"Int32", "bool", nil, ErrTypeMismatch, `"bool" holds bool true, want int32`},
		{"Bool", "u8", nil, ErrTypeMismatch, `"u8" holds uint8 200, want bool`},
		{"String", "arr.str", nil, ErrTypeMismatch, `"arr.str" holds array of 1 string, want string`},
		{"String", "u8", nil, ErrTypeMismatch, `"u8" holds uint8 200, want string`},
		{"Uint32", "str.long", nil, ErrTypeMismatch, `"str.long" holds string "{% if %}{% if %}{% if %}{% if %}{% if %}…", want uint32`},
		{"Strings", "arr.i32", nil, ErrTypeMismatch, `"arr.i32" holds array of 2 int32, want array of string`},
		{"Strings", "str", nil, ErrTypeMismatch, `"str" holds string "llama", want array`},
		{"Float32s", "arr.i32", nil, ErrTypeMismatch, `"arr.i32" holds array of 2 int32, want array of float32`},
		{"Int32s", "arr.f32", nil, ErrTypeMismatch, `"arr.f32" holds array of 1 float32, want array of int32`},
		{"Int32s", "arr.bool", nil, ErrTypeMismatch, `"arr.bool" holds array of 1 bool, want array of int32`},
		// Missing.
		{"Int64", "absent.key", nil, ErrKeyNotFound, `"absent.key"`},
		{"Uint32", "absent.key", nil, ErrKeyNotFound, `"absent.key"`},
		{"Int32", "absent.key", nil, ErrKeyNotFound, `"absent.key"`},
		{"Float32", "absent.key", nil, ErrKeyNotFound, `"absent.key"`},
		{"Bool", "absent.key", nil, ErrKeyNotFound, `"absent.key"`},
		{"String", "absent.key", nil, ErrKeyNotFound, `"absent.key"`},
		{"Strings", "absent.key", nil, ErrKeyNotFound, `"absent.key"`},
		{"Float32s", "absent.key", nil, ErrKeyNotFound, `"absent.key"`},
		{"Int32s", "absent.key", nil, ErrKeyNotFound, `"absent.key"`},
	}
	for _, c := range cases {
		t.Run(c.getter+"/"+c.key, func(t *testing.T) {
			r := get[c.getter](c.key)
			if c.wantErr == nil {
				if r.err != nil {
					t.Fatal(r.err)
				}
				if !sameGot(r.val, c.want) {
					t.Errorf("got %#v, want %#v", r.val, c.want)
				}
				return
			}
			if !errors.Is(r.err, c.wantErr) {
				t.Fatalf("got %v (value %#v), want %v", r.err, r.val, c.wantErr)
			}
			if !strings.Contains(r.err.Error(), c.errText) {
				t.Errorf("error %q does not contain %q", r.err, c.errText)
			}
		})
	}
}

func sameGot(got, want any) bool {
	switch w := want.(type) {
	case []string:
		g, ok := got.([]string)
		return ok && slices.Equal(g, w)
	case []float32:
		g, ok := got.([]float32)
		return ok && slices.Equal(g, w)
	case []int32:
		g, ok := got.([]int32)
		return ok && slices.Equal(g, w)
	}
	return got == want
}

func TestMetadataLookups(t *testing.T) {
	m := getterMeta(t)
	if !m.Has("u8") || m.Has("nope") {
		t.Error("Has is wrong")
	}
	if _, ok := m.Get("nope"); ok {
		t.Error("Get found an absent key")
	}
	a, err := m.Array("arr.u8")
	if err != nil || a.Len() != 2 || a.ElemType != ValUint8 {
		t.Errorf("Array = %+v, %v", a, err)
	}
}

// Real files: the keys every loader reads come back typed.
func TestGettersOnModel(t *testing.T) {
	f, err := Open(ggtest.Path(t, "models", "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if arch, err := f.Meta.String("general.architecture"); err != nil || arch != "llama" {
		t.Errorf("general.architecture = %q, %v", arch, err)
	}
	nLayer, err := f.Meta.Uint32("llama.block_count")
	if err != nil || nLayer == 0 {
		t.Errorf("llama.block_count = %d, %v", nLayer, err)
	}
	toks, err := f.Meta.Strings("tokenizer.ggml.tokens")
	if err != nil || len(toks) != 512 {
		t.Errorf("%d tokens, %v", len(toks), err)
	}
	if _, err := f.Meta.Float32s("tokenizer.ggml.scores"); err != nil {
		t.Error(err)
	}
	if _, err := f.Meta.Int32s("tokenizer.ggml.token_type"); err != nil {
		t.Error(err)
	}
}
