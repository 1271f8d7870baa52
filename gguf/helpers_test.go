package gguf

import (
	"encoding/binary"
	"fmt"
	"math"
	"os"
	"reflect"
	"testing"
)

// rawLayout is where each field of a GGUF file sits, found by a deliberately
// naive walk that shares no code with the parser, so tests can patch exact
// bytes and predict the offsets errors must name.
type rawLayout struct {
	kvs      []rawKV
	tensors  []rawTensor
	infosEnd int64
}

type rawKV struct {
	key     string
	at      int64 // key length field
	typeAt  int64 // value type field
	valueAt int64 // payload (string length, array element type, or scalar)
	typ     ValueType
	end     int64
}

type rawTensor struct {
	name     string
	at       int64 // name length field
	ndimsAt  int64
	dimsAt   []int64
	typeAt   int64
	offsetAt int64
	offset   uint64
	end      int64
}

type rawReader struct {
	t   testing.TB
	b   []byte
	off int64
}

func (r *rawReader) u32() uint32 {
	v := binary.LittleEndian.Uint32(r.b[r.off:])
	r.off += 4
	return v
}

func (r *rawReader) u64() uint64 {
	v := binary.LittleEndian.Uint64(r.b[r.off:])
	r.off += 8
	return v
}

func (r *rawReader) str() string {
	n := int64(r.u64())
	s := string(r.b[r.off : r.off+n])
	r.off += n
	return s
}

func (r *rawReader) skipValue(t ValueType) {
	switch t {
	case ValUint8, ValInt8, ValBool:
		r.off++
	case ValUint16, ValInt16:
		r.off += 2
	case ValUint32, ValInt32, ValFloat32:
		r.off += 4
	case ValUint64, ValInt64, ValFloat64:
		r.off += 8
	case ValString:
		r.str()
	case ValArray:
		et := ValueType(r.u32())
		n := r.u64()
		for i := uint64(0); i < n; i++ {
			r.skipValue(et)
		}
	default:
		r.t.Fatalf("rawLayout: value type %d at byte %d", t, r.off)
	}
}

// scanLayout walks a well-formed file.
func scanLayout(t testing.TB, b []byte) rawLayout {
	t.Helper()
	r := &rawReader{t: t, b: b, off: 8}
	nT, nKV := r.u64(), r.u64()
	var l rawLayout
	for i := uint64(0); i < nKV; i++ {
		kv := rawKV{at: r.off}
		kv.key = r.str()
		kv.typeAt = r.off
		kv.typ = ValueType(r.u32())
		kv.valueAt = r.off
		r.skipValue(kv.typ)
		kv.end = r.off
		l.kvs = append(l.kvs, kv)
	}
	for i := uint64(0); i < nT; i++ {
		ti := rawTensor{at: r.off}
		ti.name = r.str()
		ti.ndimsAt = r.off
		nd := r.u32()
		for d := uint32(0); d < nd; d++ {
			ti.dimsAt = append(ti.dimsAt, r.off)
			r.u64()
		}
		ti.typeAt = r.off
		r.u32()
		ti.offsetAt = r.off
		ti.offset = r.u64()
		ti.end = r.off
		l.tensors = append(l.tensors, ti)
	}
	l.infosEnd = r.off
	return l
}

func (l rawLayout) kvOfType(t testing.TB, typ ValueType) rawKV {
	t.Helper()
	for _, kv := range l.kvs {
		if kv.typ == typ {
			return kv
		}
	}
	t.Fatalf("no metadata value of type %s", typ)
	return rawKV{}
}

func withU32(b []byte, at int64, v uint32) []byte {
	c := append([]byte(nil), b...)
	binary.LittleEndian.PutUint32(c[at:], v)
	return c
}

func withU64(b []byte, at int64, v uint64) []byte {
	c := append([]byte(nil), b...)
	binary.LittleEndian.PutUint64(c[at:], v)
	return c
}

// spliced inserts ins at byte at.
func spliced(b []byte, at int64, ins []byte) []byte {
	c := make([]byte, 0, len(b)+len(ins))
	c = append(c, b[:at]...)
	c = append(c, ins...)
	return append(c, b[at:]...)
}

// rawKVBytes encodes one key/value pair by hand.
func rawKVBytes(key string, typ ValueType, payload []byte) []byte {
	var out []byte
	out = binary.LittleEndian.AppendUint64(out, uint64(len(key)))
	out = append(out, key...)
	out = binary.LittleEndian.AppendUint32(out, uint32(typ))
	return append(out, payload...)
}

func le32(v uint32) []byte { return binary.LittleEndian.AppendUint32(nil, v) }

// sameValue compares values exactly: floats by bits (NaN equals itself), a
// nil slice equals an empty one.
func sameValue(a, b Value) bool {
	if a.Type != b.Type {
		return false
	}
	aa, aIsArr := a.V.(Array)
	ba, bIsArr := b.V.(Array)
	if aIsArr || bIsArr {
		return aIsArr && bIsArr && sameArray(aa, ba)
	}
	return sameScalar(a.V, b.V)
}

func sameScalar(a, b any) bool {
	switch x := a.(type) {
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	}
	return a == b
}

func sameArray(a, b Array) bool {
	if a.ElemType != b.ElemType || a.Len() != b.Len() {
		return false
	}
	if reflect.TypeOf(a.Items) != reflect.TypeOf(b.Items) {
		return false
	}
	if sa, ok := a.Items.([]Array); ok {
		sb := b.Items.([]Array)
		for i := range sa {
			if !sameArray(sa[i], sb[i]) {
				return false
			}
		}
		return true
	}
	va, vb := reflect.ValueOf(a.Items), reflect.ValueOf(b.Items)
	for i := 0; i < va.Len(); i++ {
		if !sameScalar(va.Index(i).Interface(), vb.Index(i).Interface()) {
			return false
		}
	}
	return true
}

// sameMeta reports the first difference between two metadata sections,
// order included.
func sameMeta(a, b *Metadata) error {
	if len(a.KVs) != len(b.KVs) {
		return fmt.Errorf("%d keys vs %d", len(a.KVs), len(b.KVs))
	}
	for i := range a.KVs {
		ka, kb := a.KVs[i], b.KVs[i]
		if ka.Key != kb.Key {
			return fmt.Errorf("key #%d: %q vs %q", i, ka.Key, kb.Key)
		}
		if !sameValue(ka.Value, kb.Value) {
			return fmt.Errorf("key %q: %s vs %s", ka.Key, describe(ka.Value), describe(kb.Value))
		}
	}
	return nil
}

// footprint counts what parsing had to allocate per input byte: every string
// byte and every array element. The format spends at least one input byte on
// each, so a footprint above the input size means the parser invented data.
func footprint(f *File) int64 {
	var n int64
	for _, kv := range f.Meta.KVs {
		n += int64(len(kv.Key)) + valueFootprint(kv.Value.V)
	}
	for _, t := range f.Tensors {
		n += int64(len(t.Name)) + int64(len(t.Dims))
	}
	return n
}

func valueFootprint(v any) int64 {
	switch x := v.(type) {
	case string:
		return int64(len(x))
	case Array:
		n := int64(x.Len())
		switch items := x.Items.(type) {
		case []string:
			for _, s := range items {
				n += int64(len(s))
			}
		case []Array:
			for _, sub := range items {
				n += valueFootprint(sub)
			}
		}
		return n
	}
	return 0
}

func readFile(t testing.TB, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// rebuild copies f's metadata and tensors into a Builder, in file order.
func rebuild(t testing.TB, f *File) *Builder {
	t.Helper()
	b, err := BuilderFrom(f)
	if err != nil {
		t.Fatal(err)
	}
	return b
}
