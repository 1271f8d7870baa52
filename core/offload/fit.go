package offload

import (
	"fmt"
	"math"
)

// FitBlocks is the automatic fit (pure): the largest k such that the first k
// blocks' weights, blockBytes[:k], fit in budget bytes — or len(blockBytes)+1
// ("all blocks + output", see Plan) when every block fits and unblockedBytes
// fits on top of them.
//
// It is a prefix, not a knapsack (docs/memory-policy.md, E5): the plan is blocks 0..k-1, so
// skipping a large block to fit smaller later ones would put a CPU block
// between two device blocks and pay two transfers for nothing. The fit stops
// at the first block that does not fit.
//
// Sizes come from BlockBytes and are non-negative; a negative size is read as
// zero rather than as room gained.
func FitBlocks(blockBytes []int64, unblockedBytes int64, budget uint64) int {
	left := budget
	for k, b := range blockBytes {
		need := uint64(max(b, 0))
		if need > left {
			return k
		}
		left -= need
	}
	if uint64(max(unblockedBytes, 0)) <= left {
		return len(blockBytes) + 1
	}
	return len(blockBytes)
}

// TensorSize is one tensor's registry name and its size in bytes as the
// model file's index states it (the fit is measured before anything loads).
type TensorSize struct {
	Name  string
	Bytes int64
}

// BlockBytes sums tensor sizes per block (index = block, length nLayers) and
// the rest — tensors outside any block — into unblocked. A block index
// ≥ nLayers, a negative size or a sum past int64 is an error: the file
// disagrees with its own hyperparameters, and a fit on it would be wrong.
func BlockBytes(tensors []TensorSize, nLayers int) (perBlock []int64, unblocked int64, err error) {
	if nLayers < 0 {
		return nil, 0, fmt.Errorf("offload: model has %d blocks, want ≥ 0", nLayers)
	}
	perBlock = make([]int64, nLayers)
	for _, t := range tensors {
		if t.Bytes < 0 {
			return nil, 0, fmt.Errorf("offload: tensor %q has %d bytes", t.Name, t.Bytes)
		}
		sum := &unblocked
		if block, ok := BlockOf(t.Name); ok {
			if block >= nLayers {
				return nil, 0, fmt.Errorf("offload: tensor %q is in block %d but the model declares %d blocks",
					t.Name, block, nLayers)
			}
			sum = &perBlock[block]
		}
		if *sum > math.MaxInt64-t.Bytes {
			return nil, 0, fmt.Errorf("offload: tensor %q (%d bytes) overflows its block's byte count", t.Name, t.Bytes)
		}
		*sum += t.Bytes
	}
	return perBlock, unblocked, nil
}
