package gguf

import (
	"bytes"
	"cmp"
	"errors"
	"os"
	"slices"
	"testing"

	"github.com/minfer/minfer/internal/ggtest"
)

// fuzzSeedPrefix bounds each real file in the seed corpus: the fuzzer
// mutates small inputs far faster, and the index is what Parse reads.
const fuzzSeedPrefix = 64 << 10

func FuzzOpen(f *testing.F) {
	for _, seed := range fuzzSeeds(f) {
		f.Add(seed.data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		checkParse(t, data)
	})
}

// checkParse is the fuzz property: Parse never panics, and a file it accepts
// is safe to use: every tensor is in bounds and apart from the others, and
// what parsing allocated is bounded by the input.
func checkParse(t *testing.T, data []byte) {
	f, err := Parse(data)
	if err != nil {
		if !errors.Is(err, ErrFormat) {
			t.Fatalf("error does not wrap ErrFormat: %v", err)
		}
		var fe *FormatError
		if !errors.As(err, &fe) || fe.Offset < 0 || fe.Offset > int64(len(data)) {
			t.Fatalf("error offset outside the %d-byte input: %v", len(data), err)
		}
		return
	}
	if n := footprint(f); n > int64(len(data)) {
		t.Fatalf("parsed %d string bytes and array elements from %d bytes of input", n, len(data))
	}
	if f.Alignment == 0 || f.Alignment&(f.Alignment-1) != 0 || f.DataOffset%int64(f.Alignment) != 0 {
		t.Fatalf("alignment %d, data offset %d", f.Alignment, f.DataOffset)
	}
	type extent struct{ start, end int64 }
	var extents []extent
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		if got, ok := f.Tensor(ti.Name); !ok || got != ti {
			t.Fatalf("Tensor(%q) does not find tensor #%d", ti.Name, i)
		}
		b, err := f.TensorData(ti)
		if err != nil {
			t.Fatalf("accepted file, but TensorData(%q): %v", ti.Name, err)
		}
		if int64(len(b)) != ti.NBytes() {
			t.Fatalf("%q: %d bytes, NBytes %d", ti.Name, len(b), ti.NBytes())
		}
		start := f.DataOffset + int64(ti.Offset)
		if start < f.DataOffset || start+ti.NBytes() > int64(len(data)) || ti.Offset%f.Alignment != 0 {
			t.Fatalf("%q: bytes %d..%d outside the data section %d..%d", ti.Name, start, start+ti.NBytes(), f.DataOffset, len(data))
		}
		if ti.NBytes() > 0 {
			extents = append(extents, extent{start, start + ti.NBytes()})
		}
		want, err := ti.Type.RowBytes(ti.NElements())
		if err != nil || want != ti.NBytes() {
			t.Fatalf("%q: NBytes %d, RowBytes(%d) = %d, %v", ti.Name, ti.NBytes(), ti.NElements(), want, err)
		}
	}
	slices.SortFunc(extents, func(a, b extent) int { return cmp.Compare(a.start, b.start) })
	for k := 1; k < len(extents); k++ {
		if extents[k].start < extents[k-1].end {
			t.Fatalf("accepted overlapping tensors: %v and %v", extents[k-1], extents[k])
		}
	}
	// The metadata must survive the writer: same keys, order and values.
	b := NewBuilder()
	for _, kv := range f.Meta.KVs {
		if kv.Key == "general.alignment" {
			continue // the writer insists on uint32; the reader is lenient
		}
		if err := b.Set(kv.Key, kv.Value); err != nil {
			t.Fatalf("writer refuses parsed metadata: %v", err)
		}
	}
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		t.Fatal(err)
	}
	again, err := Parse(buf.Bytes())
	if err != nil {
		t.Fatalf("re-parse of written metadata: %v", err)
	}
	if err := sameMeta(b.Meta(), &again.Meta); err != nil {
		t.Fatalf("metadata changed through the writer: %v", err)
	}
}

// fuzzSeeds: the start of every test model, whole small files built with
// the real models' metadata, and small crafted files that reach every
// branch of the parser.
type fuzzSeed struct {
	data  []byte
	valid bool // must parse
}

func fuzzSeeds(tb testing.TB) []fuzzSeed {
	var seeds []fuzzSeed
	for _, path := range ggtest.Models(tb) {
		raw, err := os.ReadFile(path)
		if err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, fuzzSeed{raw[:min(len(raw), fuzzSeedPrefix)], len(raw) <= fuzzSeedPrefix})
		// A complete, valid file: the model's metadata with its string
		// arrays cut short and two tiny tensors.
		f, err := Parse(raw)
		if err != nil {
			tb.Fatal(err)
		}
		b := NewBuilder()
		for _, kv := range f.Meta.KVs {
			v := kv.Value
			if a, ok := v.V.(Array); ok && a.Len() > 16 {
				v.V = shortArray(a, 16)
			}
			b.Set(kv.Key, v)
		}
		b.AddTensor("a.weight", TypeF32, []int64{4, 2}, make([]byte, 32))
		b.AddTensor("b.weight", TypeQ8_0, []int64{32}, make([]byte, 34))
		var buf bytes.Buffer
		if _, err := b.WriteTo(&buf); err != nil {
			tb.Fatal(err)
		}
		seeds = append(seeds, fuzzSeed{buf.Bytes(), true})
	}
	b := NewBuilder()
	b.SetAlignment(64)
	b.Set("u8", Value{ValUint8, uint8(1)})
	b.Set("i8", Value{ValInt8, int8(-1)})
	b.Set("u16", Value{ValUint16, uint16(2)})
	b.Set("i16", Value{ValInt16, int16(-2)})
	b.Set("u64", Value{ValUint64, uint64(3)})
	b.Set("i64", Value{ValInt64, int64(-3)})
	b.Set("f64", Value{ValFloat64, 0.5})
	b.SetBool("bool", true)
	b.SetArray("nested", Array{ValArray, []Array{{ValString, []string{"x"}}, {ValBool, []bool{true}}}})
	b.SetArray("u16s", Array{ValUint16, []uint16{1, 2}})
	for _, typ := range []GGMLType{TypeQ4_K, TypeIQ2_XXS, TypeBF16} {
		nb, _ := typ.RowBytes(int64(typ.BlockSize()))
		b.AddTensor("t."+typ.String(), typ, []int64{int64(typ.BlockSize())}, make([]byte, nb))
	}
	var buf bytes.Buffer
	if _, err := b.WriteTo(&buf); err != nil {
		tb.Fatal(err)
	}
	seeds = append(seeds,
		fuzzSeed{buf.Bytes(), true},
		fuzzSeed{crafted(3, nil, nil, nil), true},
		fuzzSeed{crafted(2, nil, [][]byte{rawTensorInfo("w", []uint64{8, 1, 1, 1}, TypeF32, 0)}, make([]byte, 32)), true},
	)
	return seeds
}

func shortArray(a Array, n int) Array {
	switch s := a.Items.(type) {
	case []string:
		return Array{a.ElemType, s[:n]}
	case []float32:
		return Array{a.ElemType, s[:n]}
	case []int32:
		return Array{a.ElemType, s[:n]}
	case []uint32:
		return Array{a.ElemType, s[:n]}
	case []uint8:
		return Array{a.ElemType, s[:n]}
	}
	return a
}

// The crafted seeds must parse, so the fuzzer starts from inputs that reach
// the tensor checks.
func TestFuzzSeedsParse(t *testing.T) {
	valid := 0
	for i, seed := range fuzzSeeds(t) {
		if !seed.valid {
			continue
		}
		valid++
		if _, err := Parse(seed.data); err != nil {
			t.Errorf("seed %d (%d bytes): %v", i, len(seed.data), err)
		}
	}
	if valid < 3 {
		t.Errorf("only %d valid seeds", valid)
	}
}
