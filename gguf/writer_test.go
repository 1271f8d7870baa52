package gguf

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeAndParse(t *testing.T, b *Builder) (*File, []byte) {
	t.Helper()
	var buf bytes.Buffer
	n, err := b.WriteTo(&buf)
	if err != nil {
		t.Fatal(err)
	}
	if n != int64(buf.Len()) {
		t.Fatalf("WriteTo returned %d, wrote %d bytes", n, buf.Len())
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("parse of written file: %v", err)
	}
	return f, buf.Bytes()
}

func TestRoundTripValues(t *testing.T) {
	cases := []struct {
		name string
		v    Value
	}{
		{"uint8 zero", Value{ValUint8, uint8(0)}},
		{"uint8 max", Value{ValUint8, uint8(math.MaxUint8)}},
		{"int8 min", Value{ValInt8, int8(math.MinInt8)}},
		{"int8 max", Value{ValInt8, int8(math.MaxInt8)}},
		{"uint16 max", Value{ValUint16, uint16(math.MaxUint16)}},
		{"int16 min", Value{ValInt16, int16(math.MinInt16)}},
		{"uint32 max", Value{ValUint32, uint32(math.MaxUint32)}},
		{"int32 min", Value{ValInt32, int32(math.MinInt32)}},
		{"uint64 max", Value{ValUint64, uint64(math.MaxUint64)}},
		{"int64 min", Value{ValInt64, int64(math.MinInt64)}},
		{"int64 max", Value{ValInt64, int64(math.MaxInt64)}},
		{"float32 pi", Value{ValFloat32, float32(math.Pi)}},
		{"float32 negative zero", Value{ValFloat32, float32(math.Copysign(0, -1))}},
		{"float32 inf", Value{ValFloat32, float32(math.Inf(-1))}},
		{"float32 nan", Value{ValFloat32, float32(math.NaN())}},
		{"float32 subnormal", Value{ValFloat32, math.Float32frombits(1)}},
		{"float64 e", Value{ValFloat64, math.E}},
		{"float64 smallest", Value{ValFloat64, math.SmallestNonzeroFloat64}},
		{"bool true", Value{ValBool, true}},
		{"bool false", Value{ValBool, false}},
		{"string empty", Value{ValString, ""}},
		{"string unicode", Value{ValString, "héllo, 世界 🦙 ▁tok"}},
		{"string with NUL and newline", Value{ValString, "a\x00b\nc"}},
		{"string invalid utf8", Value{ValString, "\xff\xfe"}},
		{"string 70000 bytes", Value{ValString, strings.Repeat("x", 70000)}},
		{"array uint8", Value{ValArray, Array{ValUint8, []uint8{0, 1, 255}}}},
		{"array int8", Value{ValArray, Array{ValInt8, []int8{-128, 0, 127}}}},
		{"array uint16", Value{ValArray, Array{ValUint16, []uint16{0, 65535}}}},
		{"array int16", Value{ValArray, Array{ValInt16, []int16{-32768, 32767}}}},
		{"array uint32", Value{ValArray, Array{ValUint32, []uint32{0, math.MaxUint32}}}},
		{"array int32", Value{ValArray, Array{ValInt32, []int32{math.MinInt32, -1, math.MaxInt32}}}},
		{"array uint64", Value{ValArray, Array{ValUint64, []uint64{0, math.MaxUint64}}}},
		{"array int64", Value{ValArray, Array{ValInt64, []int64{math.MinInt64, math.MaxInt64}}}},
		{"array float32", Value{ValArray, Array{ValFloat32, []float32{-1.5, float32(math.NaN()), float32(math.Inf(1))}}}},
		{"array float64", Value{ValArray, Array{ValFloat64, []float64{-1e300, 1e-300}}}},
		{"array bool", Value{ValArray, Array{ValBool, []bool{true, false, true}}}},
		{"array string", Value{ValArray, Array{ValString, []string{"", "▁the", "<0x0A>", "🦙"}}}},
		{"empty array uint8", Value{ValArray, Array{ValUint8, []uint8{}}}},
		{"empty array int8", Value{ValArray, Array{ValInt8, []int8{}}}},
		{"empty array uint16", Value{ValArray, Array{ValUint16, []uint16{}}}},
		{"empty array int16", Value{ValArray, Array{ValInt16, []int16{}}}},
		{"empty array uint32", Value{ValArray, Array{ValUint32, []uint32{}}}},
		{"empty array int32", Value{ValArray, Array{ValInt32, []int32{}}}},
		{"empty array uint64", Value{ValArray, Array{ValUint64, []uint64{}}}},
		{"empty array int64", Value{ValArray, Array{ValInt64, []int64{}}}},
		{"empty array float32", Value{ValArray, Array{ValFloat32, []float32{}}}},
		{"empty array float64", Value{ValArray, Array{ValFloat64, []float64{}}}},
		{"empty array bool", Value{ValArray, Array{ValBool, []bool{}}}},
		{"empty array string", Value{ValArray, Array{ValString, []string{}}}},
		{"nil array string", Value{ValArray, Array{ValString, []string(nil)}}},
		{"empty array of arrays", Value{ValArray, Array{ValArray, []Array{}}}},
		{"array of arrays of strings", Value{ValArray, Array{ValArray, []Array{
			{ValString, []string{"a", "bc"}},
			{ValString, []string{}},
			{ValString, []string{"", "世界"}},
		}}}},
		{"array of arrays of mixed types", Value{ValArray, Array{ValArray, []Array{
			{ValInt32, []int32{1, 2}},
			{ValFloat64, []float64{0.5}},
			{ValBool, []bool{}},
		}}}},
		{"arrays nested three deep", Value{ValArray, Array{ValArray, []Array{
			{ValArray, []Array{{ValUint8, []uint8{7}}, {ValString, []string{"deep"}}}},
			{ValArray, []Array{}},
		}}}},
	}
	// All values in one file, between markers, so that a value that reads
	// back the wrong length shifts every key after it.
	b := NewBuilder()
	b.SetString("marker.first", "start")
	for _, c := range cases {
		if err := b.Set("test."+c.name, c.v); err != nil {
			t.Fatalf("Set %s: %v", c.name, err)
		}
	}
	b.SetString("marker.last", "end")
	f, _ := writeAndParse(t, b)
	if f.Version != WriteVersion {
		t.Errorf("version %d, want %d", f.Version, WriteVersion)
	}
	if got, want := len(f.Meta.KVs), len(cases)+2; got != want {
		t.Fatalf("%d keys read back, want %d", got, want)
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			kv := f.Meta.KVs[i+1]
			if kv.Key != "test."+c.name {
				t.Fatalf("key #%d is %q, want %q (order not kept)", i+1, kv.Key, "test."+c.name)
			}
			if !sameValue(kv.Value, c.v) {
				t.Errorf("read back %s (%#v), want %s (%#v)", describe(kv.Value), kv.Value.V, describe(c.v), c.v.V)
			}
		})
	}
	if s, err := f.Meta.String("marker.last"); err != nil || s != "end" {
		t.Errorf("marker.last = %q, %v", s, err)
	}
}

func TestBuilderKeyOrder(t *testing.T) {
	b := NewBuilder()
	b.SetString("c", "1")
	b.SetUint32("a", 2)
	b.SetBool("b", true)
	b.SetString("c", "replaced") // keeps its first position
	b.SetFloat32s("d", []float32{1})
	b.Delete("a")
	b.SetInt32("a", -3) // re-added at the end
	f, _ := writeAndParse(t, b)
	var keys []string
	for _, kv := range f.Meta.KVs {
		keys = append(keys, kv.Key)
	}
	if got, want := strings.Join(keys, ","), "c,b,d,a"; got != want {
		t.Errorf("key order %s, want %s", got, want)
	}
	if s, _ := f.Meta.String("c"); s != "replaced" {
		t.Errorf("c = %q, want replaced", s)
	}
	if x, _ := f.Meta.Int32("a"); x != -3 {
		t.Errorf("a = %d, want -3", x)
	}
}

func TestConvenienceSetters(t *testing.T) {
	b := NewBuilder()
	b.SetString("s", "str")
	b.SetUint32("u32", 7)
	b.SetInt32("i32", -7)
	b.SetUint64("u64", 1<<40)
	b.SetFloat32("f32", 0.25)
	b.SetBool("bool", true)
	b.SetStrings("strs", []string{"x", "y"})
	b.SetFloat32s("f32s", []float32{1, 2})
	b.SetInt32s("i32s", []int32{-1, 1})
	b.SetArray("arr", Array{ValUint16, []uint16{3}})
	f, _ := writeAndParse(t, b)
	want := []KV{
		{"s", Value{ValString, "str"}},
		{"u32", Value{ValUint32, uint32(7)}},
		{"i32", Value{ValInt32, int32(-7)}},
		{"u64", Value{ValUint64, uint64(1 << 40)}},
		{"f32", Value{ValFloat32, float32(0.25)}},
		{"bool", Value{ValBool, true}},
		{"strs", Value{ValArray, Array{ValString, []string{"x", "y"}}}},
		{"f32s", Value{ValArray, Array{ValFloat32, []float32{1, 2}}}},
		{"i32s", Value{ValArray, Array{ValInt32, []int32{-1, 1}}}},
		{"arr", Value{ValArray, Array{ValUint16, []uint16{3}}}},
	}
	if err := sameMeta(&f.Meta, &Metadata{KVs: want}); err != nil {
		t.Error(err)
	}
}

// ggmlBlockBytes restates ggml's block sizes (ggml-common.h static asserts)
// independently of types.go, so a typo in either table fails.
var ggmlBlockBytes = map[GGMLType][2]int{ // elements, bytes
	TypeF32: {1, 4}, TypeF16: {1, 2}, TypeBF16: {1, 2}, TypeF64: {1, 8},
	TypeI8: {1, 1}, TypeI16: {1, 2}, TypeI32: {1, 4}, TypeI64: {1, 8},
	TypeQ4_0: {32, 18}, TypeQ4_1: {32, 20}, TypeQ5_0: {32, 22}, TypeQ5_1: {32, 24},
	TypeQ8_0: {32, 34}, TypeQ8_1: {32, 36}, TypeIQ4_NL: {32, 18}, TypeMXFP4: {32, 17},
	TypeQ2_K: {256, 84}, TypeQ3_K: {256, 110}, TypeQ4_K: {256, 144}, TypeQ5_K: {256, 176},
	TypeQ6_K: {256, 210}, TypeQ8_K: {256, 292},
	TypeIQ2_XXS: {256, 66}, TypeIQ2_XS: {256, 74}, TypeIQ2_S: {256, 82},
	TypeIQ3_XXS: {256, 98}, TypeIQ3_S: {256, 110}, TypeIQ1_S: {256, 50}, TypeIQ1_M: {256, 56},
	TypeIQ4_XS: {256, 136}, TypeTQ1_0: {256, 54}, TypeTQ2_0: {256, 66},
}

func TestRoundTripTensorTypes(t *testing.T) {
	if len(ggmlBlockBytes) != len(typeTable) {
		t.Fatalf("test table has %d types, typeTable %d", len(ggmlBlockBytes), len(typeTable))
	}
	rng := rand.New(rand.NewPCG(1, 2))
	b := NewBuilder()
	want := map[string][]byte{}
	for typ := GGMLType(0); typ < 64; typ++ {
		layout, ok := ggmlBlockBytes[typ]
		if ok != typ.Known() {
			t.Fatalf("%s: test table says known=%v, typeTable %v", typ, ok, typ.Known())
		}
		if !ok {
			continue
		}
		if typ.BlockSize() != layout[0] || typ.TypeSize() != layout[1] {
			t.Errorf("%s: typeTable block %d elements/%d bytes, ggml has %d/%d", typ, typ.BlockSize(), typ.TypeSize(), layout[0], layout[1])
		}
		// Two blocks per row, three rows.
		data := make([]byte, 6*layout[1])
		for i := range data {
			data[i] = byte(rng.Uint32())
		}
		name := "t." + typ.String()
		if err := b.AddTensor(name, typ, []int64{int64(2 * layout[0]), 3}, data); err != nil {
			t.Fatal(err)
		}
		want[name] = data
		if got, ok := TypeByName(typ.String()); !ok || got != typ {
			t.Errorf("TypeByName(%q) = %v, %v", typ.String(), got, ok)
		}
	}
	f, _ := writeAndParse(t, b)
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		t.Run(ti.Type.String(), func(t *testing.T) {
			if ti.NBytes() != int64(len(want[ti.Name])) {
				t.Errorf("NBytes %d, want %d", ti.NBytes(), len(want[ti.Name]))
			}
			if ti.NElements() != int64(6*ti.Type.BlockSize()) || ti.Rows() != 3 || ti.RowElements() != int64(2*ti.Type.BlockSize()) {
				t.Errorf("dims %v: %d elements, %d rows of %d", ti.Dims, ti.NElements(), ti.Rows(), ti.RowElements())
			}
			got, err := f.TensorData(ti)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want[ti.Name]) {
				t.Error("tensor bytes differ")
			}
		})
	}
}

func TestAlignment(t *testing.T) {
	for _, align := range []uint32{1, 4, 32, 64, 4096} {
		t.Run(fmt.Sprint(align), func(t *testing.T) {
			b := NewBuilder()
			b.SetString("general.architecture", "test")
			if err := b.SetAlignment(align); err != nil {
				t.Fatal(err)
			}
			// Odd sizes so every tensor needs padding.
			sizes := []int64{3, 5, 1, 7}
			for i, n := range sizes {
				data := bytes.Repeat([]byte{byte(0xA0 + i)}, int(n))
				if err := b.AddTensor(fmt.Sprintf("t%d", i), TypeI8, []int64{n}, data); err != nil {
					t.Fatal(err)
				}
			}
			f, raw := writeAndParse(t, b)
			if f.Alignment != uint64(align) {
				t.Errorf("Alignment %d, want %d", f.Alignment, align)
			}
			if got := f.Meta.Has("general.alignment"); got != (align != DefaultAlignment) {
				t.Errorf("general.alignment present = %v for alignment %d", got, align)
			}
			if align != DefaultAlignment {
				if v, _ := f.Meta.Get("general.alignment"); v.Type != ValUint32 {
					t.Errorf("general.alignment stored as %s, llama.cpp reads uint32", v.Type)
				}
			}
			if f.DataOffset%int64(align) != 0 {
				t.Errorf("data offset %d not aligned to %d", f.DataOffset, align)
			}
			end := f.DataOffset
			for i := range f.Tensors {
				ti := &f.Tensors[i]
				if ti.Offset%uint64(align) != 0 {
					t.Errorf("%s offset %d not aligned", ti.Name, ti.Offset)
				}
				if f.DataOffset+int64(ti.Offset) != end {
					t.Errorf("%s starts at %d, want %d (right after the previous tensor's padding)", ti.Name, f.DataOffset+int64(ti.Offset), end)
				}
				data, _ := f.TensorData(ti)
				if !bytes.Equal(data, bytes.Repeat([]byte{byte(0xA0 + i)}, int(sizes[i]))) {
					t.Errorf("%s data %x", ti.Name, data)
				}
				padEnd := int64(alignUp(uint64(end+ti.NBytes()), uint64(align)))
				for k := end + ti.NBytes(); k < padEnd; k++ {
					if raw[k] != 0 {
						t.Fatalf("padding byte %d is %#x", k, raw[k])
					}
				}
				end = padEnd
			}
			if end != int64(len(raw)) {
				t.Errorf("file is %d bytes, want %d (data offset + padded tensors)", len(raw), end)
			}
			for k := scanLayout(t, raw).infosEnd; k < f.DataOffset; k++ {
				if raw[k] != 0 {
					t.Fatalf("padding byte %d before the data is %#x", k, raw[k])
				}
			}
		})
	}
}

func TestBuilderNoTensors(t *testing.T) {
	b := NewBuilder()
	b.SetString("general.architecture", "llama")
	f, raw := writeAndParse(t, b)
	// llama.cpp's vocab-only files end right after the index.
	if l := scanLayout(t, raw); l.infosEnd != int64(len(raw)) {
		t.Errorf("file of %d bytes has padding after its index (ends at %d)", len(raw), l.infosEnd)
	}
	if len(f.Tensors) != 0 {
		t.Errorf("%d tensors", len(f.Tensors))
	}
}

func TestBuilderErrors(t *testing.T) {
	f32 := func(n int) []byte { return make([]byte, 4*n) }
	cases := []struct {
		name  string
		build func(b *Builder) error
		want  string
	}{
		{"data too short", func(b *Builder) error { return b.AddTensor("w", TypeF32, []int64{4, 2}, f32(7)) }, `tensor "w": 28 bytes of data, F32 [4 2] needs 32`},
		{"data too long", func(b *Builder) error { return b.AddTensor("w", TypeQ8_0, []int64{32}, make([]byte, 35)) }, `35 bytes of data, Q8_0 [32] needs 34`},
		{"duplicate name", func(b *Builder) error {
			b.AddTensor("w", TypeF32, []int64{1}, f32(1))
			return b.AddTensor("w", TypeF32, []int64{1}, f32(1))
		}, `duplicate tensor name "w"`},
		{"no dims", func(b *Builder) error { return b.AddTensor("w", TypeF32, nil, f32(1)) }, `has 0 dimensions, want 1..4`},
		{"five dims", func(b *Builder) error { return b.AddTensor("w", TypeF32, []int64{1, 1, 1, 1, 1}, f32(1)) }, `has 5 dimensions`},
		{"negative dim", func(b *Builder) error { return b.AddTensor("w", TypeF32, []int64{2, -1}, f32(1)) }, `dimension 1 is negative (-1)`},
		{"dims overflow", func(b *Builder) error { return b.AddTensor("w", TypeF32, []int64{1 << 32, 1 << 32}, nil) }, `element count of [4294967296 4294967296] overflows`},
		{"bytes overflow", func(b *Builder) error { return b.AddTensor("w", TypeF32, []int64{1 << 31, 1 << 31}, nil) }, `overflow a byte size`},
		{"row not whole blocks", func(b *Builder) error { return b.AddTensor("w", TypeQ4_K, []int64{128, 2}, nil) }, `row of 128 elements is not a multiple of Q4_K's block size 256`},
		{"unknown type", func(b *Builder) error { return b.AddTensor("w", GGMLType(5), []int64{1}, nil) }, `unknown tensor type: type(5)`},
		{"empty name", func(b *Builder) error { return b.AddTensor("", TypeF32, []int64{1}, f32(1)) }, `tensor name is empty`},
		{"name too long", func(b *Builder) error { return b.AddTensor(strings.Repeat("n", 64), TypeF32, []int64{1}, f32(1)) }, `is 64 bytes, ggml allows 63`},
		{"nil write func", func(b *Builder) error { return b.AddTensorFunc("w", TypeF32, []int64{1}, nil) }, `nil write function`},
		{"alignment 3", func(b *Builder) error { return b.SetAlignment(3) }, `alignment uint32 3 is not a power of two`},
		{"alignment 0", func(b *Builder) error { return b.SetAlignment(0) }, `alignment uint32 0 is not a power of two`},
		{"alignment 2^31", func(b *Builder) error { return b.SetAlignment(1 << 31) }, `alignment uint32 2147483648 is not a power of two up to 2^30`},
		{"alignment as uint64", func(b *Builder) error { return b.Set("general.alignment", Value{ValUint64, uint64(64)}) }, `"general.alignment" must be a uint32, not uint64`},
		{"empty key", func(b *Builder) error { return b.Set("", Value{ValBool, true}) }, `metadata key is empty`},
		{"go type mismatch", func(b *Builder) error { return b.Set("k", Value{ValUint32, 5}) }, `metadata "k": uint32 value holds Go type int`},
		{"array items mismatch", func(b *Builder) error { return b.Set("k", Value{ValArray, Array{ValInt32, []int64{1}}}) }, `array of int32 holds Go type []int64`},
		{"array value not Array", func(b *Builder) error { return b.Set("k", Value{ValArray, []string{"x"}}) }, `array value holds Go type []string`},
		{"unknown value type", func(b *Builder) error { return b.Set("k", Value{ValueType(13), uint8(0)}) }, `unknown value type id 13`},
		{"unknown element type", func(b *Builder) error { return b.Set("k", Value{ValArray, Array{ValueType(99), []uint8{}}}) }, `unknown array element type id 99`},
		{"nested element mismatch", func(b *Builder) error {
			return b.Set("k", Value{ValArray, Array{ValArray, []Array{{ValString, []string{}}, {ValString, []int32{}}}}})
		}, `element 1: array of string holds Go type []int32`},
		{"nested too deep", func(b *Builder) error {
			a := Array{ValUint8, []uint8{1}}
			for range maxArrayDepth {
				a = Array{ValArray, []Array{a}}
			}
			return b.Set("k", Value{ValArray, a})
		}, `arrays nested deeper than 8`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := c.build(NewBuilder())
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
		})
	}
}

// Convenience setters have no error result: the first bad value sticks and
// WriteTo refuses to write.
func TestBuilderStickyError(t *testing.T) {
	b := NewBuilder()
	b.SetString("", "no key")
	b.SetString("fine", "x")
	if b.Err() == nil || !strings.Contains(b.Err().Error(), "key is empty") {
		t.Fatalf("Err() = %v", b.Err())
	}
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err == nil || buf.Len() != 0 {
		t.Errorf("WriteTo wrote %d bytes, err %v", buf.Len(), err)
	}
	path := filepath.Join(t.TempDir(), "m.gguf")
	if err := b.WriteFile(path); err == nil {
		t.Error("WriteFile succeeded")
	}
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Errorf("file exists after a refused write: %v", err)
	}
}

func TestAddTensorFunc(t *testing.T) {
	const n = 3 * 1000 // F16 [1000, 3]
	want := make([]byte, 2*n)
	for i := range want {
		want[i] = byte(i * 7)
	}
	chunked := func(w io.Writer) error {
		for i := 0; i < len(want); i += 333 {
			if _, err := w.Write(want[i:min(i+333, len(want))]); err != nil {
				return err
			}
		}
		return nil
	}
	t.Run("streams exact bytes", func(t *testing.T) {
		b := NewBuilder()
		b.AddTensor("before", TypeF32, []int64{3}, make([]byte, 12))
		if err := b.AddTensorFunc("streamed", TypeF16, []int64{1000, 3}, chunked); err != nil {
			t.Fatal(err)
		}
		b.AddTensor("after", TypeI8, []int64{2}, []byte{1, 2})
		f, _ := writeAndParse(t, b)
		ti, ok := f.Tensor("streamed")
		if !ok {
			t.Fatal("tensor missing")
		}
		got, _ := f.TensorData(ti)
		if !bytes.Equal(got, want) {
			t.Error("streamed bytes differ")
		}
		after, _ := f.Tensor("after")
		if got, _ := f.TensorData(after); !bytes.Equal(got, []byte{1, 2}) {
			t.Errorf("tensor after the stream reads %x", got)
		}
	})
	bad := []struct {
		name  string
		write func(io.Writer) error
		want  string
	}{
		{"too few bytes", func(w io.Writer) error { _, err := w.Write(want[:10]); return err }, `write function produced 10 bytes, want 6000`},
		{"too many bytes", func(w io.Writer) error {
			if err := chunked(w); err != nil {
				return err
			}
			_, err := w.Write([]byte{1, 2, 3})
			return err
		}, `3 more bytes than the tensor's 6000`},
		{"too many bytes, error ignored", func(w io.Writer) error {
			w.Write(append(append([]byte(nil), want...), 9))
			return nil
		}, `write function produced 6001 bytes, want 6000`},
		{"write error", func(w io.Writer) error { return errors.New("disk on fire") }, `writing tensor "streamed": disk on fire`},
	}
	for _, c := range bad {
		t.Run(c.name, func(t *testing.T) {
			b := NewBuilder()
			b.AddTensorFunc("streamed", TypeF16, []int64{1000, 3}, c.write)
			_, err := b.WriteTo(io.Discard)
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Errorf("got %v, want an error containing %q", err, c.want)
			}
			// WriteFile must leave nothing behind.
			dir := t.TempDir()
			if err := b.WriteFile(filepath.Join(dir, "m.gguf")); err == nil {
				t.Fatal("WriteFile succeeded")
			}
			if left, _ := os.ReadDir(dir); len(left) != 0 {
				t.Errorf("left behind: %v", left)
			}
		})
	}
}

func TestWriteFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.gguf")
	if err := os.WriteFile(path, []byte("old contents"), 0o644); err != nil {
		t.Fatal(err)
	}
	b := NewBuilder()
	b.SetString("general.name", "written")
	b.AddTensor("w", TypeF32, []int64{2}, []byte{0, 0, 128, 63, 0, 0, 0, 64})
	if err := b.WriteFile(path); err != nil {
		t.Fatal(err)
	}
	f, err := Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if s, _ := f.Meta.String("general.name"); s != "written" {
		t.Errorf("general.name = %q", s)
	}
	if f.Path != path {
		t.Errorf("Path = %q", f.Path)
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 1 {
		t.Errorf("directory holds %d entries, want only the model", len(entries))
	}
}

func TestReplaceTensorKeepsItsPlace(t *testing.T) {
	b := NewBuilder()
	b.AddTensor("a", TypeF32, []int64{4}, make([]byte, 16))
	b.AddTensor("b", TypeF32, []int64{2}, make([]byte, 8))
	if err := b.ReplaceTensor("a", TypeF16, []int64{8}, make([]byte, 16)); err != nil {
		t.Fatal(err)
	}
	if err := b.ReplaceTensor("a", TypeF16, []int64{8}, make([]byte, 15)); err == nil {
		t.Error("short data accepted")
	}
	if err := b.ReplaceTensor("c", TypeF32, []int64{1}, make([]byte, 4)); err == nil {
		t.Error("replacing a missing tensor accepted")
	}
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	f, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if f.Tensors[0].Name != "a" || f.Tensors[0].Type != TypeF16 || f.Tensors[0].Dims[0] != 8 || f.Tensors[1].Name != "b" {
		t.Errorf("tensors %+v", f.Tensors)
	}
}
