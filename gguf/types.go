package gguf

import "fmt"

// GGMLType is a tensor element type as numbered by ggml (ggml.h, enum ggml_type).
type GGMLType uint32

const (
	TypeF32     GGMLType = 0
	TypeF16     GGMLType = 1
	TypeQ4_0    GGMLType = 2
	TypeQ4_1    GGMLType = 3
	TypeQ5_0    GGMLType = 6
	TypeQ5_1    GGMLType = 7
	TypeQ8_0    GGMLType = 8
	TypeQ8_1    GGMLType = 9
	TypeQ2_K    GGMLType = 10
	TypeQ3_K    GGMLType = 11
	TypeQ4_K    GGMLType = 12
	TypeQ5_K    GGMLType = 13
	TypeQ6_K    GGMLType = 14
	TypeQ8_K    GGMLType = 15
	TypeIQ2_XXS GGMLType = 16
	TypeIQ2_XS  GGMLType = 17
	TypeIQ3_XXS GGMLType = 18
	TypeIQ1_S   GGMLType = 19
	TypeIQ4_NL  GGMLType = 20
	TypeIQ3_S   GGMLType = 21
	TypeIQ2_S   GGMLType = 22
	TypeIQ4_XS  GGMLType = 23
	TypeI8      GGMLType = 24
	TypeI16     GGMLType = 25
	TypeI32     GGMLType = 26
	TypeI64     GGMLType = 27
	TypeF64     GGMLType = 28
	TypeIQ1_M   GGMLType = 29
	TypeBF16    GGMLType = 30
	TypeTQ1_0   GGMLType = 34
	TypeTQ2_0   GGMLType = 35
	TypeMXFP4   GGMLType = 39
)

// QK_K is the super-block size of the K-quants and IQ types.
const QK_K = 256

type typeTraits struct {
	name      string
	blockSize int // elements per block
	typeSize  int // bytes per block
}

// typeTable holds block layouts as defined by ggml's block_* structs
// (ggml-common.h). Removed ids (4, 5: Q4_2/Q4_3; 31-33: Q4_0_4_4 repacks;
// 36-38: IQ4_NL_x_y repacks) are absent on purpose: no GGUF file holds them.
var typeTable = map[GGMLType]typeTraits{
	TypeF32:     {"F32", 1, 4},
	TypeF16:     {"F16", 1, 2},
	TypeQ4_0:    {"Q4_0", 32, 2 + 16},
	TypeQ4_1:    {"Q4_1", 32, 2 + 2 + 16},
	TypeQ5_0:    {"Q5_0", 32, 2 + 4 + 16},
	TypeQ5_1:    {"Q5_1", 32, 2 + 2 + 4 + 16},
	TypeQ8_0:    {"Q8_0", 32, 2 + 32},
	TypeQ8_1:    {"Q8_1", 32, 2 + 2 + 32},
	TypeQ2_K:    {"Q2_K", QK_K, QK_K/16 + QK_K/4 + 2 + 2},
	TypeQ3_K:    {"Q3_K", QK_K, QK_K/8 + QK_K/4 + 12 + 2},
	TypeQ4_K:    {"Q4_K", QK_K, 2 + 2 + 12 + QK_K/2},
	TypeQ5_K:    {"Q5_K", QK_K, 2 + 2 + 12 + QK_K/8 + QK_K/2},
	TypeQ6_K:    {"Q6_K", QK_K, QK_K/2 + QK_K/4 + QK_K/16 + 2},
	TypeQ8_K:    {"Q8_K", QK_K, 4 + QK_K + QK_K/16*2},
	TypeIQ2_XXS: {"IQ2_XXS", QK_K, 2 + QK_K/8*2},
	TypeIQ2_XS:  {"IQ2_XS", QK_K, 2 + QK_K/8*2 + QK_K/32},
	TypeIQ3_XXS: {"IQ3_XXS", QK_K, 2 + 3*(QK_K/8)},
	TypeIQ1_S:   {"IQ1_S", QK_K, 2 + QK_K/8 + QK_K/16},
	TypeIQ4_NL:  {"IQ4_NL", 32, 2 + 16},
	TypeIQ3_S:   {"IQ3_S", QK_K, 2 + QK_K/4 + QK_K/8 + QK_K/32 + 4},
	TypeIQ2_S:   {"IQ2_S", QK_K, 2 + QK_K/4 + QK_K/16},
	TypeIQ4_XS:  {"IQ4_XS", QK_K, 2 + 2 + QK_K/64 + QK_K/2},
	TypeI8:      {"I8", 1, 1},
	TypeI16:     {"I16", 1, 2},
	TypeI32:     {"I32", 1, 4},
	TypeI64:     {"I64", 1, 8},
	TypeF64:     {"F64", 1, 8},
	TypeIQ1_M:   {"IQ1_M", QK_K, QK_K/8 + QK_K/16 + QK_K/32},
	TypeBF16:    {"BF16", 1, 2},
	TypeTQ1_0:   {"TQ1_0", QK_K, 2 + (QK_K-4*QK_K/64)/5 + QK_K/64},
	TypeTQ2_0:   {"TQ2_0", QK_K, 2 + QK_K/4},
	TypeMXFP4:   {"MXFP4", 32, 1 + 16},
}

// Known reports whether t is a type this table can size.
func (t GGMLType) Known() bool { _, ok := typeTable[t]; return ok }

func (t GGMLType) String() string {
	if tr, ok := typeTable[t]; ok {
		return tr.name
	}
	return fmt.Sprintf("type(%d)", uint32(t))
}

// BlockSize is the number of elements in one block (1 for plain types).
// It is 0 for an unknown type.
func (t GGMLType) BlockSize() int { return typeTable[t].blockSize }

// TypeSize is the number of bytes in one block. It is 0 for an unknown type.
func (t GGMLType) TypeSize() int { return typeTable[t].typeSize }

// IsQuantized reports whether t stores elements in blocks of more than one.
func (t GGMLType) IsQuantized() bool { return typeTable[t].blockSize > 1 }

// TypeByName returns the type with the given ggml name ("Q4_K", "F16", ...).
func TypeByName(name string) (GGMLType, bool) {
	for t, tr := range typeTable {
		if tr.name == name {
			return t, true
		}
	}
	return 0, false
}

// RowBytes is the byte size of n elements of type t. n must be a multiple of
// the block size; overflow is refused.
func (t GGMLType) RowBytes(n int64) (int64, error) {
	tr, ok := typeTable[t]
	if !ok {
		return 0, fmt.Errorf("%w: %s", ErrUnknownType, t)
	}
	if n < 0 {
		return 0, fmt.Errorf("gguf: negative element count %d", n)
	}
	if n%int64(tr.blockSize) != 0 {
		return 0, fmt.Errorf("gguf: %d elements of %s is not a whole number of %d-element blocks", n, tr.name, tr.blockSize)
	}
	blocks := n / int64(tr.blockSize)
	if blocks > (1<<62)/int64(tr.typeSize) {
		return 0, fmt.Errorf("gguf: %d elements of %s overflow a byte size", n, tr.name)
	}
	return blocks * int64(tr.typeSize), nil
}

// FileType names general.file_type values (llama_ftype) for display.
func FileTypeName(ft uint32) string {
	names := map[uint32]string{
		0: "ALL_F32", 1: "MOSTLY_F16", 2: "MOSTLY_Q4_0", 3: "MOSTLY_Q4_1",
		7: "MOSTLY_Q8_0", 8: "MOSTLY_Q5_0", 9: "MOSTLY_Q5_1", 10: "MOSTLY_Q2_K",
		11: "MOSTLY_Q3_K_S", 12: "MOSTLY_Q3_K_M", 13: "MOSTLY_Q3_K_L",
		14: "MOSTLY_Q4_K_S", 15: "MOSTLY_Q4_K_M", 16: "MOSTLY_Q5_K_S",
		17: "MOSTLY_Q5_K_M", 18: "MOSTLY_Q6_K", 19: "MOSTLY_IQ2_XXS",
		20: "MOSTLY_IQ2_XS", 21: "MOSTLY_Q2_K_S", 22: "MOSTLY_IQ3_XS",
		23: "MOSTLY_IQ3_XXS", 24: "MOSTLY_IQ1_S", 25: "MOSTLY_IQ4_NL",
		26: "MOSTLY_IQ3_S", 27: "MOSTLY_IQ3_M", 28: "MOSTLY_IQ2_S",
		29: "MOSTLY_IQ2_M", 30: "MOSTLY_IQ4_XS", 31: "MOSTLY_IQ1_M",
		32: "MOSTLY_BF16", 36: "MOSTLY_TQ1_0", 37: "MOSTLY_TQ2_0",
		38: "MOSTLY_MXFP4_MOE",
	}
	if n, ok := names[ft]; ok {
		return n
	}
	return fmt.Sprintf("file_type(%d)", ft)
}
