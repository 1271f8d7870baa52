package gguf

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
)

// WriteVersion is the GGUF version the Builder writes.
const WriteVersion = 3

// MaxTensorName is the longest tensor name ggml accepts (GGML_MAX_NAME is 64
// bytes including the terminating NUL).
const MaxTensorName = 63

// Builder assembles a GGUF v3 file: metadata in the order it was first set,
// tensors in the order they were added, each tensor's data aligned to the
// file's alignment and followed by zero padding, as llama.cpp writes them.
//
// Setters record the first invalid value they see; WriteTo and WriteFile
// report it, so a chain of convenience setters needs no error checks of its
// own. Set also returns the error at once.
type Builder struct {
	meta    Metadata
	tensors []builderTensor
	byName  map[string]int
	err     error
}

type builderTensor struct {
	name   string
	typ    GGMLType
	dims   []int64
	nbytes int64
	data   []byte                // nil when write is set
	write  func(io.Writer) error // streams exactly nbytes
}

// NewBuilder returns an empty Builder with the default alignment.
func NewBuilder() *Builder {
	return &Builder{byName: map[string]int{}}
}

// Err is the first error recorded by a setter, or nil.
func (b *Builder) Err() error { return b.err }

func (b *Builder) record(err error) error {
	if err != nil && b.err == nil {
		b.err = err
	}
	return err
}

// Set stores v under key. A key set again keeps its first position and takes
// the new value. "general.alignment" must hold a power of two up to 2^30 and
// sets the alignment of the tensor data.
func (b *Builder) Set(key string, v Value) error {
	if key == "" {
		return b.record(errors.New("gguf: metadata key is empty"))
	}
	if err := checkValue(v, 0); err != nil {
		return b.record(fmt.Errorf("gguf: metadata %q: %w", key, err))
	}
	if key == "general.alignment" {
		// llama.cpp reads this key only as a uint32.
		if v.Type != ValUint32 {
			return b.record(fmt.Errorf("gguf: metadata %q must be a uint32, not %s", key, v.Type))
		}
		if _, err := alignmentOf(v); err != nil {
			return b.record(fmt.Errorf("gguf: metadata %q: %w", key, err))
		}
	}
	if i, ok := b.meta.index[key]; ok {
		b.meta.KVs[i].Value = v
		return nil
	}
	b.meta.add(key, v)
	return nil
}

// Delete removes key if present.
func (b *Builder) Delete(key string) {
	i, ok := b.meta.index[key]
	if !ok {
		return
	}
	b.meta.KVs = append(b.meta.KVs[:i], b.meta.KVs[i+1:]...)
	delete(b.meta.index, key)
	for k, kv := range b.meta.KVs[i:] {
		b.meta.index[kv.Key] = i + k
	}
}

// Meta is the metadata set so far, in write order. It must not be modified.
func (b *Builder) Meta() *Metadata { return &b.meta }

// SetAlignment sets the alignment of tensor data (a power of two up to 2^30).
// The default, 32, is written by leaving general.alignment out.
func (b *Builder) SetAlignment(a uint32) error {
	if a == DefaultAlignment {
		b.Delete("general.alignment")
		return nil
	}
	return b.Set("general.alignment", Value{ValUint32, a})
}

// Alignment is the tensor data alignment the file will have.
func (b *Builder) Alignment() uint64 {
	v, ok := b.meta.Get("general.alignment")
	if !ok {
		return DefaultAlignment
	}
	a, _ := alignmentOf(v) // Set refused anything invalid
	return a
}

func alignmentOf(v Value) (uint64, error) {
	a, ok := asInt64(v.V)
	if !ok || a <= 0 || a&(a-1) != 0 || a > 1<<30 {
		return 0, fmt.Errorf("alignment %s is not a power of two up to 2^30", describe(v))
	}
	return uint64(a), nil
}

// SetString stores a string.
func (b *Builder) SetString(key, s string) { b.Set(key, Value{ValString, s}) }

// SetUint32 stores a uint32.
func (b *Builder) SetUint32(key string, x uint32) { b.Set(key, Value{ValUint32, x}) }

// SetInt32 stores an int32.
func (b *Builder) SetInt32(key string, x int32) { b.Set(key, Value{ValInt32, x}) }

// SetUint64 stores a uint64.
func (b *Builder) SetUint64(key string, x uint64) { b.Set(key, Value{ValUint64, x}) }

// SetFloat32 stores a float32.
func (b *Builder) SetFloat32(key string, x float32) { b.Set(key, Value{ValFloat32, x}) }

// SetBool stores a bool.
func (b *Builder) SetBool(key string, x bool) { b.Set(key, Value{ValBool, x}) }

// SetStrings stores an array of strings.
func (b *Builder) SetStrings(key string, s []string) { b.SetArray(key, Array{ValString, s}) }

// SetFloat32s stores an array of float32.
func (b *Builder) SetFloat32s(key string, s []float32) { b.SetArray(key, Array{ValFloat32, s}) }

// SetInt32s stores an array of int32.
func (b *Builder) SetInt32s(key string, s []int32) { b.SetArray(key, Array{ValInt32, s}) }

// SetArray stores an array; Items must be the slice type of ElemType
// ([]Array for nested arrays).
func (b *Builder) SetArray(key string, a Array) { b.Set(key, Value{ValArray, a}) }

// checkValue verifies that v's Go type matches its tag, so WriteTo cannot
// emit a file whose bytes disagree with its type ids.
func checkValue(v Value, depth int) error {
	ok := false
	switch v.Type {
	case ValUint8:
		_, ok = v.V.(uint8)
	case ValInt8:
		_, ok = v.V.(int8)
	case ValUint16:
		_, ok = v.V.(uint16)
	case ValInt16:
		_, ok = v.V.(int16)
	case ValUint32:
		_, ok = v.V.(uint32)
	case ValInt32:
		_, ok = v.V.(int32)
	case ValFloat32:
		_, ok = v.V.(float32)
	case ValBool:
		_, ok = v.V.(bool)
	case ValString:
		_, ok = v.V.(string)
	case ValUint64:
		_, ok = v.V.(uint64)
	case ValInt64:
		_, ok = v.V.(int64)
	case ValFloat64:
		_, ok = v.V.(float64)
	case ValArray:
		a, isArray := v.V.(Array)
		if !isArray {
			break
		}
		return checkArray(a, depth)
	default:
		return fmt.Errorf("unknown value type id %d", uint32(v.Type))
	}
	if !ok {
		return fmt.Errorf("%s value holds Go type %T", v.Type, v.V)
	}
	return nil
}

func checkArray(a Array, depth int) error {
	if depth >= maxArrayDepth {
		return fmt.Errorf("arrays nested deeper than %d", maxArrayDepth)
	}
	ok := false
	switch a.ElemType {
	case ValUint8:
		_, ok = a.Items.([]uint8)
	case ValInt8:
		_, ok = a.Items.([]int8)
	case ValUint16:
		_, ok = a.Items.([]uint16)
	case ValInt16:
		_, ok = a.Items.([]int16)
	case ValUint32:
		_, ok = a.Items.([]uint32)
	case ValInt32:
		_, ok = a.Items.([]int32)
	case ValFloat32:
		_, ok = a.Items.([]float32)
	case ValBool:
		_, ok = a.Items.([]bool)
	case ValString:
		_, ok = a.Items.([]string)
	case ValUint64:
		_, ok = a.Items.([]uint64)
	case ValInt64:
		_, ok = a.Items.([]int64)
	case ValFloat64:
		_, ok = a.Items.([]float64)
	case ValArray:
		items, isArrays := a.Items.([]Array)
		if !isArrays {
			break
		}
		for i, sub := range items {
			if err := checkArray(sub, depth+1); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		return nil
	default:
		return fmt.Errorf("unknown array element type id %d", uint32(a.ElemType))
	}
	if !ok {
		return fmt.Errorf("array of %s holds Go type %T", a.ElemType, a.Items)
	}
	return nil
}

// AddTensor adds a tensor whose data is held in memory. data must be exactly
// the tensor's size; it is not copied and must not change before WriteTo.
func (b *Builder) AddTensor(name string, typ GGMLType, dims []int64, data []byte) error {
	nb, err := b.checkTensor(name, typ, dims)
	if err != nil {
		return err
	}
	if int64(len(data)) != nb {
		return fmt.Errorf("gguf: tensor %q: %d bytes of data, %s %v needs %d", name, len(data), typ, dims, nb)
	}
	b.addTensor(builderTensor{name: name, typ: typ, dims: dims, nbytes: nb, data: data})
	return nil
}

// AddTensorFunc adds a tensor whose data write produces during WriteTo, so
// that files larger than memory can be generated. write must write exactly
// the tensor's size; more or fewer bytes fail WriteTo. It is called once per
// WriteTo, in tensor order.
func (b *Builder) AddTensorFunc(name string, typ GGMLType, dims []int64, write func(io.Writer) error) error {
	nb, err := b.checkTensor(name, typ, dims)
	if err != nil {
		return err
	}
	if write == nil {
		return fmt.Errorf("gguf: tensor %q: nil write function", name)
	}
	b.addTensor(builderTensor{name: name, typ: typ, dims: dims, nbytes: nb, write: write})
	return nil
}

func (b *Builder) addTensor(t builderTensor) {
	t.dims = append([]int64(nil), t.dims...)
	if b.byName == nil {
		b.byName = map[string]int{}
	}
	b.byName[t.name] = len(b.tensors)
	b.tensors = append(b.tensors, t)
}

// checkTensor applies the reader's rules (and ggml's name limit) and
// returns the tensor's byte size.
func (b *Builder) checkTensor(name string, typ GGMLType, dims []int64) (int64, error) {
	if name == "" {
		return 0, errors.New("gguf: tensor name is empty")
	}
	if len(name) > MaxTensorName {
		return 0, fmt.Errorf("gguf: tensor name %q is %d bytes, ggml allows %d", name, len(name), MaxTensorName)
	}
	if _, dup := b.byName[name]; dup {
		return 0, fmt.Errorf("gguf: duplicate tensor name %q", name)
	}
	if !typ.Known() {
		return 0, fmt.Errorf("gguf: tensor %q: %w: %s", name, ErrUnknownType, typ)
	}
	if len(dims) == 0 || len(dims) > MaxDims {
		return 0, fmt.Errorf("gguf: tensor %q has %d dimensions, want 1..%d", name, len(dims), MaxDims)
	}
	n := int64(1)
	for i, d := range dims {
		if d < 0 {
			return 0, fmt.Errorf("gguf: tensor %q: dimension %d is negative (%d)", name, i, d)
		}
		if d != 0 && n > math.MaxInt64/d {
			return 0, fmt.Errorf("gguf: tensor %q: element count of %v overflows int64", name, dims)
		}
		n *= d
	}
	if dims[0]%int64(typ.BlockSize()) != 0 {
		return 0, fmt.Errorf("gguf: tensor %q: row of %d elements is not a multiple of %s's block size %d", name, dims[0], typ, typ.BlockSize())
	}
	nb, err := typ.RowBytes(n)
	if err != nil {
		return 0, fmt.Errorf("gguf: tensor %q: %w", name, err)
	}
	return nb, nil
}

// Layout reports where each tensor's data will start, relative to the data
// section, in the order tensors were added.
func (b *Builder) Layout() []uint64 {
	align := b.Alignment()
	offs := make([]uint64, len(b.tensors))
	var at uint64
	for i, t := range b.tensors {
		offs[i] = at
		at += alignUp(uint64(t.nbytes), align)
	}
	return offs
}

// WriteTo writes the file to w and returns the number of bytes written.
func (b *Builder) WriteTo(w io.Writer) (int64, error) {
	if b.err != nil {
		return 0, b.err
	}
	cw := &countWriter{w: w}
	bw := bufio.NewWriterSize(cw, 1<<20)
	e := &encoder{w: bw}
	align := b.Alignment()

	e.bytes([]byte(Magic))
	e.u32(WriteVersion)
	e.u64(uint64(len(b.tensors)))
	e.u64(uint64(len(b.meta.KVs)))
	for _, kv := range b.meta.KVs {
		e.str(kv.Key)
		e.u32(uint32(kv.Value.Type))
		e.value(kv.Value)
	}
	offs := b.Layout()
	for i, t := range b.tensors {
		e.str(t.name)
		e.u32(uint32(len(t.dims)))
		for _, d := range t.dims {
			e.u64(uint64(d))
		}
		e.u32(uint32(t.typ))
		e.u64(offs[i])
	}
	// A file without tensors ends after its index, as llama.cpp's
	// vocab-only files do.
	if len(b.tensors) > 0 {
		e.pad(align)
	}
	for _, t := range b.tensors {
		if e.err != nil {
			break
		}
		if t.write == nil {
			e.bytes(t.data)
		} else {
			lw := &exactWriter{w: bw, size: t.nbytes, left: t.nbytes}
			if err := t.write(lw); err != nil {
				e.err = fmt.Errorf("gguf: writing tensor %q: %w", t.name, err)
				break
			}
			if lw.left != 0 || lw.over {
				e.err = fmt.Errorf("gguf: tensor %q: write function produced %d bytes, want %d", t.name, lw.written(t.nbytes), t.nbytes)
				break
			}
			e.n += t.nbytes
		}
		e.pad(align)
	}
	if e.err == nil {
		e.err = bw.Flush()
	}
	return cw.n, e.err
}

// WriteFile writes the file to a temporary name beside path and renames it
// into place, so that a failed write never leaves a partial model at path.
func (b *Builder) WriteFile(path string) (err error) {
	if b.err != nil {
		return b.err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".tmp*")
	if err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	if _, err = b.WriteTo(tmp); err != nil {
		return fmt.Errorf("gguf: writing %s: %w", path, err)
	}
	if err = tmp.Chmod(0o644); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if err = tmp.Sync(); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if err = tmp.Close(); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	if err = os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("gguf: %w", err)
	}
	return nil
}

// encoder writes little-endian fields, keeping the first error and the
// running offset (for padding).
type encoder struct {
	w   io.Writer
	n   int64
	err error
	buf [8]byte
}

func (e *encoder) bytes(p []byte) {
	if e.err != nil {
		return
	}
	var k int
	k, e.err = e.w.Write(p)
	e.n += int64(k)
}

func (e *encoder) u8(x uint8) { e.buf[0] = x; e.bytes(e.buf[:1]) }

func (e *encoder) u16(x uint16) {
	binary.LittleEndian.PutUint16(e.buf[:], x)
	e.bytes(e.buf[:2])
}

func (e *encoder) u32(x uint32) {
	binary.LittleEndian.PutUint32(e.buf[:], x)
	e.bytes(e.buf[:4])
}

func (e *encoder) u64(x uint64) {
	binary.LittleEndian.PutUint64(e.buf[:], x)
	e.bytes(e.buf[:8])
}

func (e *encoder) str(s string) {
	e.u64(uint64(len(s)))
	if e.err == nil {
		var k int
		k, e.err = io.WriteString(e.w, s)
		e.n += int64(k)
	}
}

var zeros [4096]byte

func (e *encoder) pad(align uint64) {
	k := int64(alignUp(uint64(e.n), align)) - e.n
	for k > 0 && e.err == nil {
		c := min(k, int64(len(zeros)))
		e.bytes(zeros[:c])
		k -= c
	}
}

// value writes v's payload; the type tag is written by the caller because
// array elements carry none.
func (e *encoder) value(v Value) {
	switch x := v.V.(type) {
	case uint8:
		e.u8(x)
	case int8:
		e.u8(uint8(x))
	case uint16:
		e.u16(x)
	case int16:
		e.u16(uint16(x))
	case uint32:
		e.u32(x)
	case int32:
		e.u32(uint32(x))
	case float32:
		e.u32(math.Float32bits(x))
	case bool:
		if x {
			e.u8(1)
		} else {
			e.u8(0)
		}
	case string:
		e.str(x)
	case uint64:
		e.u64(x)
	case int64:
		e.u64(uint64(x))
	case float64:
		e.u64(math.Float64bits(x))
	case Array:
		e.array(x)
	}
}

func (e *encoder) array(a Array) {
	e.u32(uint32(a.ElemType))
	e.u64(uint64(a.Len()))
	switch s := a.Items.(type) {
	case []uint8:
		e.bytes(s)
	case []int8:
		for _, x := range s {
			e.u8(uint8(x))
		}
	case []uint16:
		for _, x := range s {
			e.u16(x)
		}
	case []int16:
		for _, x := range s {
			e.u16(uint16(x))
		}
	case []uint32:
		for _, x := range s {
			e.u32(x)
		}
	case []int32:
		for _, x := range s {
			e.u32(uint32(x))
		}
	case []float32:
		for _, x := range s {
			e.u32(math.Float32bits(x))
		}
	case []bool:
		for _, x := range s {
			e.value(Value{ValBool, x})
		}
	case []string:
		for _, x := range s {
			e.str(x)
		}
	case []uint64:
		for _, x := range s {
			e.u64(x)
		}
	case []int64:
		for _, x := range s {
			e.u64(uint64(x))
		}
	case []float64:
		for _, x := range s {
			e.u64(math.Float64bits(x))
		}
	case []Array:
		for _, x := range s {
			e.array(x)
		}
	}
}

type countWriter struct {
	w io.Writer
	n int64
}

func (c *countWriter) Write(p []byte) (int, error) {
	k, err := c.w.Write(p)
	c.n += int64(k)
	return k, err
}

// exactWriter passes at most size bytes on and refuses the rest, so a
// streaming tensor that writes too much cannot shift the tensors after it.
type exactWriter struct {
	w     io.Writer
	size  int64
	left  int64
	over  bool
	extra int64
}

func (x *exactWriter) Write(p []byte) (int, error) {
	if int64(len(p)) <= x.left {
		k, err := x.w.Write(p)
		x.left -= int64(k)
		return k, err
	}
	x.over = true
	x.extra += int64(len(p)) - x.left
	k, err := x.w.Write(p[:x.left])
	x.left -= int64(k)
	if err != nil {
		return k, err
	}
	return k, fmt.Errorf("gguf: %d more bytes than the tensor's %d", x.extra, x.size)
}

func (x *exactWriter) written(want int64) int64 { return want - x.left + x.extra }

// BuilderFrom starts a Builder holding f's metadata (in file order) and
// tensors (views of f's data, so f must stay open until the Builder has
// written): the way to copy a model with a few edits.
func BuilderFrom(f *File) (*Builder, error) {
	b := NewBuilder()
	for _, kv := range f.Meta.KVs {
		if err := b.Set(kv.Key, kv.Value); err != nil {
			return nil, err
		}
	}
	for i := range f.Tensors {
		ti := &f.Tensors[i]
		data, err := f.TensorData(ti)
		if err != nil {
			return nil, err
		}
		if err := b.AddTensor(ti.Name, ti.Type, ti.Dims, data); err != nil {
			return nil, err
		}
	}
	return b, nil
}

// ReplaceTensor gives an added tensor a new type, shape and data, keeping
// its place in the file. data must be exactly the new size.
func (b *Builder) ReplaceTensor(name string, typ GGMLType, dims []int64, data []byte) error {
	i, ok := b.byName[name]
	if !ok {
		return fmt.Errorf("gguf: no tensor %q to replace", name)
	}
	delete(b.byName, name) // checkTensor refuses duplicate names
	nb, err := b.checkTensor(name, typ, dims)
	b.byName[name] = i
	if err != nil {
		return err
	}
	if int64(len(data)) != nb {
		return fmt.Errorf("gguf: tensor %q: %d bytes of data, %s %v needs %d", name, len(data), typ, dims, nb)
	}
	b.tensors[i] = builderTensor{name: name, typ: typ, dims: append([]int64(nil), dims...), nbytes: nb, data: data}
	return nil
}
