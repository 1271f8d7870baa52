package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minfer/minfer/internal/ggtest"
)

// corruption is one damaged variant of a valid file: the error must wrap
// ErrFormat, be a *FormatError at byte `at`, and contain `text`.
type corruption struct {
	name string
	data []byte
	at   int64
	text string
}

// corruptions derives every damage case from a valid file, computing the
// offset each error must name from an independent walk of the bytes.
func corruptions(t *testing.T, raw []byte) []corruption {
	t.Helper()
	f, err := Parse(raw)
	if err != nil {
		t.Fatal(err)
	}
	l := scanLayout(t, raw)
	if len(l.tensors) < 2 {
		t.Fatal("corruption cases need a file with at least two tensors")
	}
	size := int64(len(raw))
	align := f.Alignment
	nT := uint64(len(l.tensors))
	nKV := uint64(len(l.kvs))
	first, last := l.tensors[0], l.tensors[len(l.tensors)-1]
	lastKV := l.kvs[len(l.kvs)-1]
	strKV := l.kvOfType(t, ValString)
	arrKV := l.kvs[0]
	for _, kv := range l.kvs {
		if a, err := f.Meta.Array(kv.key); err == nil && a.ElemType == ValString && a.Len() > 100 {
			arrKV = kv
			break
		}
	}
	if arrKV.typ != ValArray {
		t.Fatal("corruption cases need a string array of more than 100 entries")
	}
	var multiDim rawTensor
	for _, ti := range l.tensors {
		if len(ti.dimsAt) >= 2 {
			multiDim = ti
			break
		}
	}
	if multiDim.name == "" {
		t.Fatal("corruption cases need a tensor with two dimensions")
	}
	// A pair of neighbours whose first tensor is longer than one
	// alignment step, so the second can be moved inside it.
	overlapIdx := -1
	for i := 0; i+1 < len(f.Tensors); i++ {
		if uint64(f.Tensors[i].NBytes()) > align {
			overlapIdx = i + 1
			break
		}
	}
	if overlapIdx < 0 {
		t.Fatal("no tensor larger than the alignment")
	}
	lastInfo := f.Tensors[len(f.Tensors)-1]
	dataCut := f.DataOffset + int64(lastInfo.Offset) + lastInfo.NBytes()/2
	tokCut, tokAt, tokText := cutInsideStrings(t, raw, arrKV)
	u32KV := func(key string, v uint32) []byte { return rawKVBytes(key, ValUint32, le32(v)) }
	withKVs := func(extra []byte, at int64) []byte {
		return withU64(spliced(raw, at, extra), 16, nKV+1)
	}

	cases := []corruption{
		{"truncated in tensor count", raw[:10], 8, "truncated: tensor count needs 8 bytes, 2 left"},
		{"truncated in metadata count", raw[:20], 16, "truncated: metadata count needs 8 bytes, 4 left"},
		{"truncated in last metadata value", raw[:lastKV.valueAt+1], lastKV.valueAt, fmt.Sprintf("truncated: %q", lastKV.key)},
		{"truncated inside string array", raw[:tokCut], tokAt, tokText},
		{"truncated in tensor dims", raw[:last.dimsAt[0]+3], last.dimsAt[0], fmt.Sprintf("truncated: tensor %q dimension 0 needs 8 bytes, 3 left", last.name)},
		{"truncated in tensor type", raw[:last.typeAt+2], last.typeAt, fmt.Sprintf("truncated: tensor %q type needs 4 bytes, 2 left", last.name)},
		{"truncated in tensor data", raw[:dataCut], last.offsetAt, fmt.Sprintf("truncated: tensor %q needs bytes %d..%d, the file has %d",
			last.name, f.DataOffset+int64(lastInfo.Offset), f.DataOffset+int64(lastInfo.Offset)+lastInfo.NBytes(), dataCut)},
		{"bad magic", append([]byte("GGUX"), raw[4:]...), 0, `not a GGUF file (magic "GGUX")`},
		{"version 1", withU32(raw, 4, 1), 4, "GGUF version 1 is not supported"},
		{"big-endian version", withU32(raw, 4, 3<<24), 4, "big-endian GGUF (version 3 byte-swapped)"},
		{"unknown version 4", withU32(raw, 4, 4), 4, "unknown GGUF version 4"},
		{"unknown version 0", withU32(raw, 4, 0), 4, "unknown GGUF version 0"},
		{"huge metadata count", withU64(raw, 16, 1<<60), 16, "metadata count 1152921504606846976 cannot fit"},
		{"huge tensor count", withU64(raw, 8, 1<<60), 8, "tensor count 1152921504606846976 cannot fit"},
		{"huge key length", withU64(raw, l.kvs[0].at, 1<<62), l.kvs[0].at, "metadata key #0 length 4611686018427387904 exceeds"},
		{"huge string length", withU64(raw, strKV.valueAt, 1<<62), strKV.valueAt, fmt.Sprintf("%q value length 4611686018427387904 exceeds", strKV.key)},
		{"huge array count", withU64(raw, arrKV.valueAt+4, 1<<40), arrKV.valueAt + 4, fmt.Sprintf("%q: array of 1099511627776 string cannot fit", arrKV.key)},
		{"unknown value type", withU32(raw, l.kvs[0].typeAt, 99), l.kvs[0].typeAt, fmt.Sprintf("%q value has unknown type id 99", l.kvs[0].key)},
		{"value type one past float64", withU32(raw, l.kvs[0].typeAt, 13), l.kvs[0].typeAt, "unknown type id 13"},
		{"unknown array element type", withU32(raw, arrKV.valueAt, 99), arrKV.valueAt, fmt.Sprintf("%q: array element type id 99 is unknown", arrKV.key)},
		{"unknown tensor type", withU32(raw, first.typeAt, 99), first.typeAt, fmt.Sprintf("tensor %q has unknown type id 99", first.name)},
		{"removed tensor type Q4_2", withU32(raw, first.typeAt, 4), first.typeAt, "unknown type id 4"},
		{"too many dims", withU32(raw, first.ndimsAt, 5), first.ndimsAt, fmt.Sprintf("tensor %q has 5 dimensions, at most 4 allowed", first.name)},
		{"dims product overflow", withU64(raw, multiDim.dimsAt[1], 1<<62), multiDim.dimsAt[1], fmt.Sprintf("tensor %q: element count overflows at dimension 1 ([%d 4611686018427387904])", multiDim.name, binary.LittleEndian.Uint64(raw[multiDim.dimsAt[0]:]))},
		{"dim above int64", withU64(raw, first.dimsAt[0], 1<<63), first.dimsAt[0], "dimension 0 is 9223372036854775808, too large"},
		{"offset misaligned", withU64(raw, l.tensors[1].offsetAt, l.tensors[1].offset+1), l.tensors[1].offsetAt,
			fmt.Sprintf("tensor %q: data offset %d is not a multiple of the alignment %d", l.tensors[1].name, l.tensors[1].offset+1, align)},
		{"offset past end", withU64(raw, first.offsetAt, alignUp(uint64(size-f.DataOffset), align)+align), first.offsetAt,
			fmt.Sprintf("tensor %q: data offset %d is past the end of the data section (%d bytes from byte %d, file size %d)", first.name,
				alignUp(uint64(size-f.DataOffset), align)+align, size-f.DataOffset, f.DataOffset, size)},
		{"offset wraps around", withU64(raw, first.offsetAt, ^uint64(0)-align+1), first.offsetAt,
			fmt.Sprintf("data offset %d is past the end", ^uint64(0)-align+1)},
		{"overlapping tensors", withU64(raw, l.tensors[overlapIdx].offsetAt, l.tensors[overlapIdx-1].offset+align), l.tensors[overlapIdx].offsetAt,
			fmt.Sprintf("tensor %q (data bytes %d..", l.tensors[overlapIdx].name, l.tensors[overlapIdx-1].offset+align)},
		{"duplicate key", withKVs(raw[l.kvs[0].at:l.kvs[0].end], l.kvs[1].at), l.kvs[1].at, fmt.Sprintf("duplicate metadata key %q", l.kvs[0].key)},
		{"duplicate tensor name", withU64(spliced(raw, first.end, raw[first.at:first.end]), 8, nT+1), first.end, fmt.Sprintf("duplicate tensor name %q", first.name)},
		{"alignment 3", withKVs(u32KV("general.alignment", 3), 24), 24, "general.alignment uint32 3 is not a power of two"},
		{"alignment 0", withKVs(u32KV("general.alignment", 0), 24), 24, "general.alignment uint32 0 is not a power of two"},
		{"alignment string", withKVs(rawKVBytes("general.alignment", ValString, append(binary.LittleEndian.AppendUint64(nil, 2), "32"...)), 24), 24,
			`general.alignment string "32" is not a power of two`},
	}
	if f.DataOffset > l.infosEnd {
		cases = append(cases, corruption{"truncated in padding before data", raw[:f.DataOffset-1], l.infosEnd,
			fmt.Sprintf("truncated: tensor data would start at byte %d, file has %d", f.DataOffset, f.DataOffset-1)})
	}
	return cases
}

// cutInsideStrings picks a cut 90% into a string array (late enough that the
// array's count still fits the bytes left) and returns the error offset and
// text the element it lands in must produce.
func cutInsideStrings(t *testing.T, raw []byte, kv rawKV) (cut, at int64, text string) {
	t.Helper()
	cut = kv.valueAt + 12 + (kv.end-kv.valueAt-12)*9/10
	pos := kv.valueAt + 12
	for i := 0; ; i++ {
		if pos+8 > cut {
			return cut, pos, fmt.Sprintf("truncated: %q element %d length needs 8 bytes, %d left", kv.key, i, cut-pos)
		}
		n := int64(binary.LittleEndian.Uint64(raw[pos:]))
		if pos+8+n > cut {
			return cut, pos, fmt.Sprintf("%q element %d length %d exceeds the %d bytes left", kv.key, i, n, cut-pos-8)
		}
		pos += 8 + n
	}
}

func checkCorruption(t *testing.T, err error, c corruption) {
	t.Helper()
	if err == nil {
		t.Fatal("parsed without error")
	}
	t.Log(err)
	if !errors.Is(err, ErrFormat) {
		t.Errorf("error %q does not wrap ErrFormat", err)
	}
	var fe *FormatError
	if !errors.As(err, &fe) {
		t.Fatalf("error %q is not a *FormatError", err)
	}
	if fe.Offset != c.at {
		t.Errorf("error at byte %d, want %d: %v", fe.Offset, c.at, err)
	}
	if want := fmt.Sprintf("at byte %d: ", c.at); !strings.Contains(err.Error(), want) {
		t.Errorf("error %q does not name %q", err, want)
	}
	if !strings.Contains(err.Error(), c.text) {
		t.Errorf("error %q does not contain %q", err, c.text)
	}
}

var corruptionModels = []string{
	"models/stories260K.gguf",
	"models/llama-2-tiny-random.gguf",
	"synth/synth-llama-Q4_0.gguf",
}

func TestCorruptModels(t *testing.T) {
	for _, rel := range corruptionModels {
		t.Run(filepath.Base(rel), func(t *testing.T) {
			raw := readFile(t, ggtest.Path(t, rel))
			for _, c := range corruptions(t, raw) {
				t.Run(c.name, func(t *testing.T) {
					_, err := Parse(c.data)
					checkCorruption(t, err, c)
				})
			}
		})
	}
}

// The same damage through Open: the error also names the path.
func TestCorruptOpen(t *testing.T) {
	raw := readFile(t, ggtest.Path(t, corruptionModels[0]))
	dir := t.TempDir()
	for _, c := range corruptions(t, raw) {
		t.Run(c.name, func(t *testing.T) {
			path := filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".gguf")
			if err := os.WriteFile(path, c.data, 0o644); err != nil {
				t.Fatal(err)
			}
			defer os.Remove(path)
			f, err := Open(path)
			if err == nil {
				f.Close()
			}
			checkCorruption(t, err, c)
			if err != nil && !strings.HasPrefix(err.Error(), path+": ") {
				t.Errorf("error %q does not start with the path", err)
			}
		})
	}
}

// crafted assembles a file field by field: kvs and infos are raw encodings.
func crafted(version uint32, kvs, infos [][]byte, data []byte) []byte {
	out := []byte(Magic)
	out = binary.LittleEndian.AppendUint32(out, version)
	out = binary.LittleEndian.AppendUint64(out, uint64(len(infos)))
	out = binary.LittleEndian.AppendUint64(out, uint64(len(kvs)))
	for _, kv := range kvs {
		out = append(out, kv...)
	}
	for _, ti := range infos {
		out = append(out, ti...)
	}
	if len(infos) > 0 {
		for len(out)%DefaultAlignment != 0 {
			out = append(out, 0)
		}
	}
	return append(out, data...)
}

func rawTensorInfo(name string, dims []uint64, typ GGMLType, offset uint64) []byte {
	var out []byte
	out = binary.LittleEndian.AppendUint64(out, uint64(len(name)))
	out = append(out, name...)
	out = binary.LittleEndian.AppendUint32(out, uint32(len(dims)))
	for _, d := range dims {
		out = binary.LittleEndian.AppendUint64(out, d)
	}
	out = binary.LittleEndian.AppendUint32(out, uint32(typ))
	return binary.LittleEndian.AppendUint64(out, offset)
}

func rawArray(elem ValueType, n uint64, payload []byte) []byte {
	out := binary.LittleEndian.AppendUint32(nil, uint32(elem))
	out = binary.LittleEndian.AppendUint64(out, n)
	return append(out, payload...)
}

func TestCorruptCrafted(t *testing.T) {
	// Arrays nested one level deeper than the reader allows.
	deep := rawArray(ValUint8, 0, nil)
	for range maxArrayDepth {
		deep = rawArray(ValArray, 1, deep)
	}
	okKV := rawKVBytes("general.architecture", ValString, append(binary.LittleEndian.AppendUint64(nil, 5), "llama"...))
	kvEnd := int64(24 + len(okKV)) // end of okKV when it comes first
	cases := []corruption{
		{"empty", nil, 0, "truncated: magic needs 4 bytes, 0 left"},
		{"three bytes", []byte("GGU"), 0, "truncated: magic needs 4 bytes, 3 left"},
		{"nesting too deep", crafted(3, [][]byte{rawKVBytes("k", ValArray, deep)}, nil, nil), 24 + 8 + 1 + 4 + 12*(maxArrayDepth), `"k" value: arrays nested deeper than 8`},
		{"empty key", crafted(3, [][]byte{okKV, rawKVBytes("", ValUint8, []byte{1})}, nil, nil), kvEnd, "metadata key #1 is empty"},
		{"bool byte 2", crafted(3, [][]byte{rawKVBytes("b", ValBool, []byte{2})}, nil, nil), 24 + 8 + 1 + 4, `"b" value: bool byte is 2`},
		{"bool array byte 7", crafted(3, [][]byte{rawKVBytes("b", ValArray, rawArray(ValBool, 2, []byte{1, 7}))}, nil, nil), 24 + 8 + 1 + 4 + 12 + 1, `"b": bool element 1 is byte 7`},
		{"nested array count huge", crafted(3, [][]byte{rawKVBytes("k", ValArray, rawArray(ValArray, 1, rawArray(ValInt32, 1<<40, nil)))}, nil, nil),
			24 + 8 + 1 + 4 + 12 + 4, `"k": array of 1099511627776 int32 cannot fit`},
		{"row not whole blocks", crafted(3, nil, [][]byte{rawTensorInfo("w", []uint64{33, 1}, TypeQ4_0, 0)}, make([]byte, 64)),
			24 + 8 + 1 + 4 + 16, `tensor "w": row of 33 elements is not a multiple of Q4_0's block size 32`},
		{"scalar quantized tensor", crafted(3, nil, [][]byte{rawTensorInfo("w", nil, TypeQ8_0, 0)}, make([]byte, 64)),
			24 + 8 + 1 + 4, `tensor "w": 1 elements of Q8_0 is not a whole number of 32-element blocks`},
		{"byte size overflow", crafted(3, nil, [][]byte{rawTensorInfo("w", []uint64{1 << 31, 1 << 31}, TypeF64, 0)}, nil),
			24 + 8 + 1 + 4 + 16, `tensor "w": 4611686018427387904 elements of F64 overflow a byte size`},
		{"zero-size tensor past the end", crafted(3, nil, [][]byte{rawTensorInfo("w", []uint64{0}, TypeF32, 64)}, make([]byte, 32)),
			24 + 8 + 1 + 4 + 8 + 4, `tensor "w": data offset 64 is past the end of the data section (32 bytes from byte 64, file size 96)`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Parse(c.data)
			checkCorruption(t, err, c)
		})
	}
}

// Damage that must still parse: v2 files and tensors that touch.
func TestCraftedValid(t *testing.T) {
	cases := []struct {
		name string
		data []byte
	}{
		{"version 2", crafted(2, nil, nil, nil)},
		{"header only", crafted(3, nil, nil, nil)},
		{"adjacent tensors", crafted(3, nil, [][]byte{
			rawTensorInfo("a", []uint64{8}, TypeF32, 0),
			rawTensorInfo("b", []uint64{8}, TypeF32, 32),
		}, make([]byte, 64))},
		{"zero-size tensor at end", crafted(3, nil, [][]byte{rawTensorInfo("w", []uint64{0, 3}, TypeQ4_K, 32)}, make([]byte, 32))},
		{"zero-size tensor sharing an offset", crafted(3, nil, [][]byte{
			rawTensorInfo("a", []uint64{8}, TypeF32, 0),
			rawTensorInfo("empty", []uint64{0}, TypeF32, 0),
		}, make([]byte, 32))},
		{"tensors out of order", crafted(3, nil, [][]byte{
			rawTensorInfo("second", []uint64{8}, TypeF32, 32),
			rawTensorInfo("first", []uint64{8}, TypeF32, 0),
		}, make([]byte, 64))},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if _, err := Parse(c.data); err != nil {
				t.Error(err)
			}
		})
	}
}
