package cuda

import (
	"strconv"
	"strings"

	"github.com/minfer/minfer/core/graph"
)

// L2 prefetch of the next mat-vec's weights during a one-token norm chain.
// A decode step is latency-bound: norm_one (one block) leaves the memory
// idle for its few microseconds, and the mat-vec after it then starts
// from nothing, its first loads a full memory round trip and its blocks'
// ramp a large part of its time. With MINFER_CUDA_L2PF=N, norm_one's grid
// gets N more blocks that only ask L2 for lines of the weights of the
// mat-vec it feeds (up to a cap: by default 16 MiB, so the lines
// prefetched first are still there when the mat-vec reads them; the L2 of
// an H100 is 50 MiB), before their wait, so that work overlaps the kernel
// before norm_one too. Prefetches change no value: every output stays
// bit for bit; they only move when the bytes arrive.
//
// (Session 8's prefetch on a side stream forked inside the graph made
// decode 6–7 % slower, bench/results/2026-12-01-s8-l2pf: the fork and
// join were the cost. These blocks ride in a launch the step has anyway.)

// l2Prefetch is MINFER_CUDA_L2PF parsed: blocks (0: off) and the most
// bytes a launch asks for.
type l2Prefetch struct {
	blocks int64
	max    int64
}

const l2PrefetchDefaultMax = 16 << 20

// parseL2Prefetch reads "N" or "N,MiB" (N blocks, at most 1024; MiB
// at least 1); anything else is off.
func parseL2Prefetch(v string) l2Prefetch {
	n, mib, two := strings.Cut(v, ",")
	blocks, err := strconv.Atoi(strings.TrimSpace(n))
	if err != nil || blocks <= 0 || blocks > 1024 {
		return l2Prefetch{}
	}
	p := l2Prefetch{blocks: int64(blocks), max: l2PrefetchDefaultMax}
	if two {
		m, err := strconv.Atoi(strings.TrimSpace(mib))
		if err != nil || m < 1 || m > 1024 {
			return l2Prefetch{}
		}
		p.max = int64(m) << 20
	}
	return p
}

// l2PrefetchAfter returns norm_one's prefetch blocks and range for norm
// chain pl of nodes: the weights of the mat-mul that takes the chain's
// output (nodes[pl.end]) when it runs here and its weights are on this
// device, up to the cap, in 128-byte lines; no blocks otherwise.
func (b *Backend) l2PrefetchAfter(nodes []*graph.Node, pl normPlan) (int64, uintptr, int64) {
	if b.l2pf.blocks == 0 || pl.end >= len(nodes) {
		return 0, 0, 0
	}
	m := nodes[pl.end]
	if m.Op != graph.OpMatMul || m.Src[1] != pl.last || m.Backend != pl.last.Backend {
		return 0, 0, 0
	}
	w := m.Src[0]
	p, err := b.ptrOf(w)
	if err != nil || p == 0 {
		return 0, 0, 0
	}
	bytes := min(w.Bytes(), b.l2pf.max)
	b.l2pfLaunches++
	return b.l2pf.blocks, p, (bytes + 127) / 128
}
