// Package gguf reads and writes GGUF model files (v2 and v3, little-endian).
//
// Open maps the file read-only and parses only its index (header, metadata,
// tensor infos); tensor data pages are not touched until TensorData is used.
// Every length, count and offset read from the file is checked against the
// bytes that remain, so a truncated or hostile file gives an error naming the
// byte offset instead of a panic or a huge allocation.
package gguf

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"unsafe"
)

// Magic is the 4-byte file signature.
const Magic = "GGUF"

// DefaultAlignment applies when general.alignment is absent.
const DefaultAlignment = 32

// headerSize is magic, version, tensor count and metadata count.
const headerSize = 4 + 4 + 8 + 8

// MaxDims is ggml's GGML_MAX_DIMS.
const MaxDims = 4

// maxArrayDepth bounds nested arrays; real files nest at most once.
const maxArrayDepth = 8

var (
	// ErrFormat marks every structural problem found while parsing.
	ErrFormat = errors.New("gguf: invalid file")
	// ErrUnknownType is a tensor type this table cannot size.
	ErrUnknownType = errors.New("gguf: unknown tensor type")
)

// FormatError is a structural problem at a byte offset of the file.
type FormatError struct {
	Offset int64
	Msg    string
}

func (e *FormatError) Error() string {
	return fmt.Sprintf("gguf: at byte %d: %s", e.Offset, e.Msg)
}

func (e *FormatError) Unwrap() error { return ErrFormat }

// TensorInfo describes one tensor. Dims are in ggml order: Dims[0] is the
// contiguous (row) dimension.
type TensorInfo struct {
	Name string
	Dims []int64
	Type GGMLType
	// Offset is relative to the start of the tensor data section.
	Offset uint64
	nbytes int64
}

// NElements is the product of the dimensions.
func (t *TensorInfo) NElements() int64 {
	n := int64(1)
	for _, d := range t.Dims {
		n *= d
	}
	return n
}

// NBytes is the exact size of the tensor's data in the file.
func (t *TensorInfo) NBytes() int64 { return t.nbytes }

// RowElements is Dims[0], the number of elements in one row.
func (t *TensorInfo) RowElements() int64 {
	if len(t.Dims) == 0 {
		return 1
	}
	return t.Dims[0]
}

// Rows is the number of rows (the product of Dims[1:]).
func (t *TensorInfo) Rows() int64 {
	n := int64(1)
	for _, d := range t.Dims[min(1, len(t.Dims)):] {
		n *= d
	}
	return n
}

// File is a parsed GGUF file. Its tensor data stays in the mapping until
// Close; slices returned by TensorData must not be used after Close.
type File struct {
	Path       string
	Version    uint32
	Alignment  uint64
	DataOffset int64 // absolute offset of the tensor data section
	Size       int64 // file size in bytes
	Meta       Metadata
	Tensors    []TensorInfo

	byName map[string]int
	data   []byte
	closer func() error
	// drop gives the whole pages of a range of data back (the mapping's
	// resident pages; nil where the file was read, not mapped).
	drop func(b []byte) error
}

// Tensor returns the info of the named tensor.
func (f *File) Tensor(name string) (*TensorInfo, bool) {
	i, ok := f.byName[name]
	if !ok {
		return nil, false
	}
	return &f.Tensors[i], true
}

// TensorData returns the tensor's bytes, a view into the mapped file.
func (f *File) TensorData(t *TensorInfo) ([]byte, error) {
	start := f.DataOffset + int64(t.Offset)
	end := start + t.nbytes
	if f.data == nil {
		return nil, fmt.Errorf("gguf: %s is closed", f.Path)
	}
	if start < 0 || end > int64(len(f.data)) {
		return nil, fmt.Errorf("gguf: tensor %q: bytes %d..%d outside the %d-byte file", t.Name, start, end, len(f.data))
	}
	return f.data[start:end:end], nil
}

// DropPages tells the system the process is done reading t's bytes for
// now: the whole pages of the mapping inside them leave its resident set
// (madvise MADV_DONTNEED; the page cache keeps them while memory allows).
// Nothing is lost — a later read maps them in again from the file — so a
// loader calls it for tensors it copied (into its own memory or a
// device's), and the process's resident size stops counting them twice.
// Where the file was read into memory instead of mapped, it does nothing.
func (f *File) DropPages(t *TensorInfo) error {
	if f.drop == nil {
		return nil
	}
	b, err := f.TensorData(t)
	if err != nil {
		return err
	}
	page := uintptr(pageSize)
	start := uintptr(unsafe.Pointer(unsafe.SliceData(b)))
	lo, hi := (start+page-1)&^(page-1), (start+uintptr(len(b)))&^(page-1)
	if hi <= lo {
		return nil
	}
	return f.drop(b[lo-start : hi-start])
}

// TensorBytes is the sum of every tensor's NBytes.
func (f *File) TensorBytes() int64 {
	var n int64
	for i := range f.Tensors {
		n += f.Tensors[i].nbytes
	}
	return n
}

// MappedOffset reports whether addr (a faulting address, from a runtime
// error's Addr method) lies inside the file's bytes, and at which offset.
// A fault there means the file changed under its mapping.
func (f *File) MappedOffset(addr uintptr) (int64, bool) {
	if len(f.data) == 0 {
		return 0, false
	}
	base := uintptr(unsafe.Pointer(unsafe.SliceData(f.data)))
	if addr < base || addr-base >= uintptr(len(f.data)) {
		return 0, false
	}
	return int64(addr - base), true
}

// Close releases the mapping.
func (f *File) Close() error {
	if f.closer == nil {
		return nil
	}
	err := f.closer()
	f.closer, f.data = nil, nil
	return err
}

// Parse parses a GGUF image held in memory. The returned File refers to data.
func Parse(data []byte) (*File, error) {
	p := &parser{b: data}
	f := &File{Size: int64(len(data)), data: data, byName: map[string]int{}}
	if err := p.parse(f); err != nil {
		return nil, err
	}
	return f, nil
}

type parser struct {
	b   []byte
	off int64
	// offsetAt[i] is where tensor i's offset field sits, so that extent
	// errors point at the number that is wrong.
	offsetAt []int64
}

func (p *parser) fail(at int64, format string, a ...any) error {
	return &FormatError{Offset: at, Msg: fmt.Sprintf(format, a...)}
}

func (p *parser) left() int64 { return int64(len(p.b)) - p.off }

// label names the field being read. It is called only to report an error:
// formatting a name for each of 150k vocabulary entries up front would cost
// more than parsing them.
type label func() string

func (p *parser) need(n int64, what label) error {
	if n < 0 || p.left() < n {
		return p.fail(p.off, "truncated: %s needs %d bytes, %d left", what(), n, max(p.left(), 0))
	}
	return nil
}

func (p *parser) u32(what label) (uint32, error) {
	if err := p.need(4, what); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint32(p.b[p.off:])
	p.off += 4
	return v, nil
}

func (p *parser) u64(what label) (uint64, error) {
	if err := p.need(8, what); err != nil {
		return 0, err
	}
	v := binary.LittleEndian.Uint64(p.b[p.off:])
	p.off += 8
	return v, nil
}

func (p *parser) str(what label) (string, error) {
	at := p.off
	n, err := p.u64(func() string { return what() + " length" })
	if err != nil {
		return "", err
	}
	if n > uint64(p.left()) {
		return "", p.fail(at, "%s length %d exceeds the %d bytes left", what(), n, p.left())
	}
	s := string(p.b[p.off : p.off+int64(n)])
	p.off += int64(n)
	return s, nil
}

func (p *parser) parse(f *File) error {
	if err := p.need(4, func() string { return "magic" }); err != nil {
		return err
	}
	if string(p.b[:4]) != Magic {
		return p.fail(0, "not a GGUF file (magic %q)", printable(p.b[:4]))
	}
	p.off = 4
	ver, err := p.u32(func() string { return "version" })
	if err != nil {
		return err
	}
	switch {
	case ver == 2 || ver == 3:
	case ver == 1:
		return p.fail(4, "GGUF version 1 is not supported (convert the file with a current llama.cpp)")
	case bitsSwap32(ver) == 2 || bitsSwap32(ver) == 3:
		return p.fail(4, "big-endian GGUF (version %d byte-swapped) is not supported", bitsSwap32(ver))
	default:
		return p.fail(4, "unknown GGUF version %d", ver)
	}
	f.Version = ver
	nTensorsAt := p.off
	nTensors, err := p.u64(func() string { return "tensor count" })
	if err != nil {
		return err
	}
	nKVAt := p.off
	nKV, err := p.u64(func() string { return "metadata count" })
	if err != nil {
		return err
	}
	// Each KV takes at least 8+4+1 bytes; each tensor info at least 8+4+4+8.
	if nKV > uint64(p.left())/13 {
		return p.fail(nKVAt, "metadata count %d cannot fit in the %d bytes left", nKV, p.left())
	}
	var alignAt int64 // where general.alignment sits, for its error
	for i := uint64(0); i < nKV; i++ {
		at := p.off
		key, err := p.str(func() string { return fmt.Sprintf("metadata key #%d", i) })
		if err != nil {
			return err
		}
		if key == "" {
			return p.fail(at, "metadata key #%d is empty", i)
		}
		v, err := p.value(key, 0)
		if err != nil {
			return err
		}
		if !f.Meta.add(key, v) {
			return p.fail(at, "duplicate metadata key %q", key)
		}
		if key == "general.alignment" {
			alignAt = at
		}
	}
	if nTensors > uint64(p.left())/24 {
		return p.fail(nTensorsAt, "tensor count %d cannot fit in the %d bytes left", nTensors, p.left())
	}
	f.Alignment = DefaultAlignment
	if v, ok := f.Meta.Get("general.alignment"); ok {
		a, ok := asInt64(v.V)
		if !ok || a <= 0 || a&(a-1) != 0 || a > 1<<30 {
			return p.fail(alignAt, "general.alignment %s is not a power of two up to 2^30", describe(v))
		}
		f.Alignment = uint64(a)
	}
	f.Tensors = make([]TensorInfo, 0, nTensors)
	for i := uint64(0); i < nTensors; i++ {
		at := p.off
		t, err := p.tensorInfo(i)
		if err != nil {
			return err
		}
		if _, dup := f.byName[t.Name]; dup {
			return p.fail(at, "duplicate tensor name %q", t.Name)
		}
		f.byName[t.Name] = len(f.Tensors)
		f.Tensors = append(f.Tensors, t)
		p.offsetAt = append(p.offsetAt, p.off-8)
	}
	dataOff := alignUp(uint64(p.off), f.Alignment)
	if dataOff > uint64(len(p.b)) && len(f.Tensors) > 0 {
		return p.fail(p.off, "truncated: tensor data would start at byte %d, file has %d", dataOff, len(p.b))
	}
	f.DataOffset = int64(dataOff)
	return p.checkExtents(f)
}

// checkExtents verifies every tensor lies inside the file, aligned, with no
// two tensors sharing bytes. Errors are reported at the tensor's offset field.
func (p *parser) checkExtents(f *File) error {
	avail := uint64(len(p.b)) - min(uint64(f.DataOffset), uint64(len(p.b)))
	for i := range f.Tensors {
		t := &f.Tensors[i]
		if t.Offset%f.Alignment != 0 {
			return p.fail(p.offsetAt[i], "tensor %q: data offset %d is not a multiple of the alignment %d", t.Name, t.Offset, f.Alignment)
		}
		if t.Offset > avail {
			return p.fail(p.offsetAt[i], "tensor %q: data offset %d is past the end of the data section (%d bytes from byte %d, file size %d)",
				t.Name, t.Offset, avail, f.DataOffset, len(p.b))
		}
		if uint64(t.nbytes) > avail-t.Offset {
			return p.fail(p.offsetAt[i], "truncated: tensor %q needs bytes %d..%d, the file has %d",
				t.Name, uint64(f.DataOffset)+t.Offset, uint64(f.DataOffset)+t.Offset+uint64(t.nbytes), len(p.b))
		}
	}
	order := make([]int, len(f.Tensors))
	for i := range order {
		order[i] = i
	}
	// Ties broken by size then file order so the reported pair is stable.
	sort.SliceStable(order, func(a, b int) bool {
		ta, tb := &f.Tensors[order[a]], &f.Tensors[order[b]]
		if ta.Offset != tb.Offset {
			return ta.Offset < tb.Offset
		}
		return ta.nbytes < tb.nbytes
	})
	// Sorted by start, any overlap shows up between neighbours.
	for k := 1; k < len(order); k++ {
		prev, cur := &f.Tensors[order[k-1]], &f.Tensors[order[k]]
		if prev.Offset+uint64(prev.nbytes) > cur.Offset {
			return p.fail(p.offsetAt[order[k]], "tensor %q (data bytes %d..%d) overlaps tensor %q (data bytes %d..%d)",
				cur.Name, cur.Offset, cur.Offset+uint64(cur.nbytes), prev.Name, prev.Offset, prev.Offset+uint64(prev.nbytes))
		}
	}
	return nil
}

func (p *parser) tensorInfo(i uint64) (TensorInfo, error) {
	var t TensorInfo
	name, err := p.str(func() string { return fmt.Sprintf("tensor #%d name", i) })
	if err != nil {
		return t, err
	}
	t.Name = name
	at := p.off
	nd, err := p.u32(func() string { return fmt.Sprintf("tensor %q dimension count", name) })
	if err != nil {
		return t, err
	}
	if nd > MaxDims {
		return t, p.fail(at, "tensor %q has %d dimensions, at most %d allowed", name, nd, MaxDims)
	}
	t.Dims = make([]int64, nd)
	n := int64(1)
	for d := range t.Dims {
		dat := p.off
		v, err := p.u64(func() string { return fmt.Sprintf("tensor %q dimension %d", name, d) })
		if err != nil {
			return t, err
		}
		if v > math.MaxInt64 {
			return t, p.fail(dat, "tensor %q dimension %d is %d, too large", name, d, v)
		}
		t.Dims[d] = int64(v)
		if v != 0 && n > math.MaxInt64/int64(v) {
			return t, p.fail(dat, "tensor %q: element count overflows at dimension %d (%v)", name, d, t.Dims[:d+1])
		}
		n *= int64(v)
	}
	tat := p.off
	typ, err := p.u32(func() string { return fmt.Sprintf("tensor %q type", name) })
	if err != nil {
		return t, err
	}
	t.Type = GGMLType(typ)
	if !t.Type.Known() {
		return t, p.fail(tat, "tensor %q has unknown type id %d", name, typ)
	}
	if nd > 0 && t.Dims[0]%int64(t.Type.BlockSize()) != 0 {
		return t, p.fail(tat, "tensor %q: row of %d elements is not a multiple of %s's block size %d", name, t.Dims[0], t.Type, t.Type.BlockSize())
	}
	nb, err := t.Type.RowBytes(n)
	if err != nil {
		return t, p.fail(tat, "tensor %q: %s", name, strings.TrimPrefix(err.Error(), "gguf: "))
	}
	t.nbytes = nb
	off, err := p.u64(func() string { return fmt.Sprintf("tensor %q offset", name) })
	if err != nil {
		return t, err
	}
	t.Offset = off
	return t, nil
}

func (p *parser) value(key string, depth int) (Value, error) {
	at := p.off
	typ, err := p.u32(func() string { return quote(key) + " value type" })
	if err != nil {
		return Value{}, err
	}
	return p.valueOf(key, ValueType(typ), at, depth)
}

func (p *parser) valueOf(key string, t ValueType, at int64, depth int) (Value, error) {
	what := func() string { return quote(key) + " value" }
	if sz := t.scalarSize(); sz > 0 {
		if err := p.need(int64(sz), what); err != nil {
			return Value{}, err
		}
		b := p.b[p.off:]
		p.off += int64(sz)
		switch t {
		case ValUint8:
			return Value{t, b[0]}, nil
		case ValInt8:
			return Value{t, int8(b[0])}, nil
		case ValBool:
			if b[0] > 1 {
				return Value{}, p.fail(p.off-1, "%s: bool byte is %d", what(), b[0])
			}
			return Value{t, b[0] == 1}, nil
		case ValUint16:
			return Value{t, binary.LittleEndian.Uint16(b)}, nil
		case ValInt16:
			return Value{t, int16(binary.LittleEndian.Uint16(b))}, nil
		case ValUint32:
			return Value{t, binary.LittleEndian.Uint32(b)}, nil
		case ValInt32:
			return Value{t, int32(binary.LittleEndian.Uint32(b))}, nil
		case ValFloat32:
			return Value{t, math.Float32frombits(binary.LittleEndian.Uint32(b))}, nil
		case ValUint64:
			return Value{t, binary.LittleEndian.Uint64(b)}, nil
		case ValInt64:
			return Value{t, int64(binary.LittleEndian.Uint64(b))}, nil
		case ValFloat64:
			return Value{t, math.Float64frombits(binary.LittleEndian.Uint64(b))}, nil
		}
	}
	switch t {
	case ValString:
		s, err := p.str(what)
		if err != nil {
			return Value{}, err
		}
		return Value{t, s}, nil
	case ValArray:
		if depth >= maxArrayDepth {
			return Value{}, p.fail(at, "%s: arrays nested deeper than %d", what(), maxArrayDepth)
		}
		a, err := p.array(key, depth)
		if err != nil {
			return Value{}, err
		}
		return Value{t, a}, nil
	}
	return Value{}, p.fail(at, "%s has unknown type id %d", what(), uint32(t))
}

func (p *parser) array(key string, depth int) (Array, error) {
	at := p.off
	et, err := p.u32(func() string { return quote(key) + " array element type" })
	if err != nil {
		return Array{}, err
	}
	elem := ValueType(et)
	cat := p.off
	n, err := p.u64(func() string { return quote(key) + " array length" })
	if err != nil {
		return Array{}, err
	}
	// Smallest encoding of one element bounds the count before allocating.
	minSize := uint64(elem.scalarSize())
	switch elem {
	case ValString:
		minSize = 8
	case ValArray:
		minSize = 12
	}
	if minSize == 0 {
		return Array{}, p.fail(at, "%q: array element type id %d is unknown", key, et)
	}
	if n > uint64(p.left())/minSize {
		return Array{}, p.fail(cat, "%q: array of %d %s cannot fit in the %d bytes left", key, n, elem, p.left())
	}
	cnt := int(n)
	if sz := elem.scalarSize(); sz > 0 && elem != ValBool {
		raw := p.b[p.off : p.off+int64(cnt*sz)]
		p.off += int64(cnt * sz)
		return Array{elem, decodeScalars(elem, raw, cnt)}, nil
	}
	switch elem {
	case ValBool:
		out := make([]bool, cnt)
		for i := range out {
			b := p.b[p.off]
			if b > 1 {
				return Array{}, p.fail(p.off, "%q: bool element %d is byte %d", key, i, b)
			}
			out[i] = b == 1
			p.off++
		}
		return Array{elem, out}, nil
	case ValString:
		return p.stringArray(key, cnt)
	default: // ValArray
		out := make([]Array, cnt)
		for i := range out {
			vat := p.off
			v, err := p.valueOf(key, ValArray, vat, depth+1)
			if err != nil {
				return Array{}, err
			}
			out[i] = v.V.(Array)
		}
		return Array{elem, out}, nil
	}
}

// stringArray reads cnt strings. It validates every length first, then
// copies the whole run in one allocation that the strings share: a
// 150k-entry vocabulary costs one copy instead of 150k small ones.
func (p *parser) stringArray(key string, cnt int) (Array, error) {
	le := binary.LittleEndian
	start, end := p.off, p.off
	for i := 0; i < cnt; i++ {
		left := int64(len(p.b)) - end
		if left < 8 || le.Uint64(p.b[end:]) > uint64(left-8) {
			p.off = end // str reports the exact problem at this element
			_, err := p.str(func() string { return fmt.Sprintf("%q element %d", key, i) })
			return Array{}, err
		}
		end += 8 + int64(le.Uint64(p.b[end:]))
	}
	blob := string(p.b[start:end])
	out := make([]string, cnt)
	at := int64(0)
	for i := range out {
		n := int64(le.Uint64(p.b[start+at:]))
		out[i] = blob[at+8 : at+8+n]
		at += 8 + n
	}
	p.off = end
	return Array{ValString, out}, nil
}

func decodeScalars(t ValueType, raw []byte, n int) any {
	le := binary.LittleEndian
	switch t {
	case ValUint8:
		return append([]uint8(nil), raw...)
	case ValInt8:
		out := make([]int8, n)
		for i := range out {
			out[i] = int8(raw[i])
		}
		return out
	case ValUint16:
		out := make([]uint16, n)
		for i := range out {
			out[i] = le.Uint16(raw[2*i:])
		}
		return out
	case ValInt16:
		out := make([]int16, n)
		for i := range out {
			out[i] = int16(le.Uint16(raw[2*i:]))
		}
		return out
	case ValUint32:
		out := make([]uint32, n)
		for i := range out {
			out[i] = le.Uint32(raw[4*i:])
		}
		return out
	case ValInt32:
		out := make([]int32, n)
		for i := range out {
			out[i] = int32(le.Uint32(raw[4*i:]))
		}
		return out
	case ValFloat32:
		out := make([]float32, n)
		for i := range out {
			out[i] = math.Float32frombits(le.Uint32(raw[4*i:]))
		}
		return out
	case ValUint64:
		out := make([]uint64, n)
		for i := range out {
			out[i] = le.Uint64(raw[8*i:])
		}
		return out
	case ValInt64:
		out := make([]int64, n)
		for i := range out {
			out[i] = int64(le.Uint64(raw[8*i:]))
		}
		return out
	default: // ValFloat64
		out := make([]float64, n)
		for i := range out {
			out[i] = math.Float64frombits(le.Uint64(raw[8*i:]))
		}
		return out
	}
}

func alignUp(x, a uint64) uint64 { return (x + a - 1) / a * a }

func bitsSwap32(v uint32) uint32 {
	return v>>24 | (v>>8)&0xff00 | (v<<8)&0xff0000 | v<<24
}

func quote(s string) string { return fmt.Sprintf("%q", s) }

func printable(b []byte) string {
	var sb strings.Builder
	for _, c := range b {
		if c >= 0x20 && c < 0x7f {
			sb.WriteByte(c)
		} else {
			fmt.Fprintf(&sb, "\\x%02x", c)
		}
	}
	return sb.String()
}
