package offload

import (
	"strconv"
	"strings"
)

const blockMarker = "blk."

// BlockOf returns the transformer block a tensor belongs to, read from its
// registry name "{ns}blk.{i}.…": ns is an optional namespace ending in '.'
// or '/' ("model.blk.3.attn_q.weight", "enc/blk.12.ffn_up.weight"), and the
// fused concat copies ("blk.{i}.attn_qkv.weight", "blk.{i}.ffn_gu.weight")
// are block tensors like any other. Tensors outside the blocks
// (token_embd.weight, output_norm.weight, output.weight, rope_freqs.weight)
// return ok == false.
//
// The first "blk." that starts the name or follows '.' or '/' decides: if
// what follows it is not a canonical block number and a dot, the name is not
// a block tensor (rather than searching on for a later match, which would
// guess). A canonical number is decimal digits with no sign and no leading
// zero, fitting an int — exactly what llama.cpp writes with "%d" — so that
// two spellings can never name the same block.
func BlockOf(name string) (block int, ok bool) {
	start := markerStart(name)
	if start < 0 {
		return 0, false
	}
	rest := name[start+len(blockMarker):]
	digits := 0
	for digits < len(rest) && rest[digits] >= '0' && rest[digits] <= '9' {
		digits++
	}
	if digits == 0 || digits == len(rest) || rest[digits] != '.' {
		return 0, false // "blk.x.", "blk..", "blk.-1.", "blk.3" (no dot after)
	}
	if digits > 1 && rest[0] == '0' {
		return 0, false // "blk.03." is not how any writer spells block 3
	}
	n, err := strconv.Atoi(rest[:digits])
	if err != nil {
		return 0, false // too large for an int
	}
	return n, true
}

// markerStart is the index of the first "blk." at the start of name or right
// after a namespace separator, or -1.
func markerStart(name string) int {
	from := 0
	for {
		i := strings.Index(name[from:], blockMarker)
		if i < 0 {
			return -1
		}
		i += from
		if i == 0 || name[i-1] == '.' || name[i-1] == '/' {
			return i
		}
		from = i + 1
	}
}
