package gguf

import (
	"bytes"
	"cmp"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/minfer/minfer/internal/ggtest"
)

// TestOpenModels checks every test model against its own bytes: the parsed
// layout must account for the file exactly.
func TestOpenModels(t *testing.T) {
	for _, path := range ggtest.Models(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			f, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			st, _ := os.Stat(path)
			if f.Size != st.Size() {
				t.Errorf("Size %d, file has %d bytes", f.Size, st.Size())
			}
			raw := readFile(t, path)
			l := scanLayout(t, raw)
			if len(l.kvs) != len(f.Meta.KVs) || len(l.tensors) != len(f.Tensors) {
				t.Fatalf("parsed %d keys/%d tensors, file holds %d/%d", len(f.Meta.KVs), len(f.Tensors), len(l.kvs), len(l.tensors))
			}
			if want := int64(alignUp(uint64(l.infosEnd), f.Alignment)); f.DataOffset != want {
				t.Errorf("DataOffset %d, want %d (tensor infos end at %d, alignment %d)", f.DataOffset, want, l.infosEnd, f.Alignment)
			}
			if !f.Meta.Has("general.architecture") {
				t.Error("no general.architecture")
			}
			if len(f.Tensors) == 0 {
				// Vocab-only files: the index is the whole file.
				if l.infosEnd != f.Size {
					t.Errorf("index ends at %d, file has %d bytes", l.infosEnd, f.Size)
				}
				return
			}
			// Sum of data plus padding fits in the file.
			var padded int64
			for i := range f.Tensors {
				padded += int64(alignUp(uint64(f.Tensors[i].NBytes()), f.Alignment))
			}
			if f.DataOffset+padded > f.Size {
				t.Errorf("data offset %d + padded tensor bytes %d = %d exceeds file size %d", f.DataOffset, padded, f.DataOffset+padded, f.Size)
			}
			// Walking the tensors in offset order, each NBytes is exactly
			// the distance to the next tensor less the alignment padding,
			// and the last one ends the file (llama.cpp pads it too).
			order := make([]*TensorInfo, len(f.Tensors))
			for i := range f.Tensors {
				order[i] = &f.Tensors[i]
			}
			slices.SortFunc(order, func(a, b *TensorInfo) int { return cmp.Compare(a.Offset, b.Offset) })
			for k, ti := range order {
				next := uint64(f.Size - f.DataOffset)
				if k+1 < len(order) {
					next = order[k+1].Offset
				}
				gap := next - ti.Offset
				if want := alignUp(uint64(ti.NBytes()), f.Alignment); gap != want {
					t.Errorf("%s (%s %v): NBytes %d, padded %d, but the next tensor starts %d bytes later", ti.Name, ti.Type, ti.Dims, ti.NBytes(), want, gap)
				}
				data, err := f.TensorData(ti)
				if err != nil {
					t.Fatal(err)
				}
				if int64(len(data)) != ti.NBytes() {
					t.Errorf("%s: TensorData gave %d bytes, NBytes %d", ti.Name, len(data), ti.NBytes())
				}
				start := f.DataOffset + int64(ti.Offset)
				if !bytes.Equal(data, raw[start:start+ti.NBytes()]) {
					t.Errorf("%s: TensorData is not the file's bytes at %d", ti.Name, start)
				}
				if ti.RowElements()*ti.Rows() != ti.NElements() {
					t.Errorf("%s: %d rows of %d != %d elements", ti.Name, ti.Rows(), ti.RowElements(), ti.NElements())
				}
			}
		})
	}
}

// TestRewriteModels rewrites every model with the Builder: the result must
// read back identically and, since the Builder lays files out as llama.cpp
// does, be byte-identical to the original.
func TestRewriteModels(t *testing.T) {
	dir := t.TempDir()
	for _, path := range ggtest.Models(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			orig, err := Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer orig.Close()
			out := filepath.Join(dir, filepath.Base(path))
			if err := rebuild(t, orig).WriteFile(out); err != nil {
				t.Fatal(err)
			}
			again, err := Open(out)
			if err != nil {
				t.Fatal(err)
			}
			defer again.Close()
			if err := sameMeta(&orig.Meta, &again.Meta); err != nil {
				t.Errorf("metadata differs: %v", err)
			}
			if len(again.Tensors) != len(orig.Tensors) {
				t.Fatalf("%d tensors, want %d", len(again.Tensors), len(orig.Tensors))
			}
			for i := range orig.Tensors {
				a, b := &orig.Tensors[i], &again.Tensors[i]
				if a.Name != b.Name || a.Type != b.Type || !slices.Equal(a.Dims, b.Dims) || a.Offset != b.Offset {
					t.Errorf("tensor #%d: %s %s %v @%d became %s %s %v @%d", i, a.Name, a.Type, a.Dims, a.Offset, b.Name, b.Type, b.Dims, b.Offset)
				}
				da, _ := orig.TensorData(a)
				db, _ := again.TensorData(b)
				if !bytes.Equal(da, db) {
					t.Errorf("tensor %s: bytes differ", a.Name)
				}
			}
			if !bytes.Equal(readFile(t, path), readFile(t, out)) {
				t.Errorf("rewritten file is not byte-identical to the original (%d vs %d bytes)", orig.Size, again.Size)
			}
			os.Remove(out)
		})
	}
}

func BenchmarkOpen(b *testing.B) {
	var largest string
	var size int64
	for _, p := range ggtest.Models(b) {
		if st, err := os.Stat(p); err == nil && st.Size() > size {
			largest, size = p, st.Size()
		}
	}
	b.Logf("%s, %d bytes", filepath.Base(largest), size)
	b.ReportAllocs()
	for b.Loop() {
		f, err := Open(largest)
		if err != nil {
			b.Fatal(err)
		}
		f.Close()
	}
}
