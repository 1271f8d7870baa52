package cpu

import "github.com/minfer/minfer/core/quant"

// The prefill GEMM's eight-token path: the quantized activations of each
// whole group of eight tokens are packed once per mat-mul into a tile
// (quant.Kernel.PackTile8), then each chunk of rows runs four rows at a
// time against the tiles (quant.Kernel.Dot4RowsTiles8), so a weight block
// is read from memory once per mat-mul and each broadcast weight chunk
// serves eight or sixteen tokens. Tiles (about 1.2× the quantized
// activations) and the prepared rows are backend-internal scratch, reused
// from call to call, like the quantized activations: no copy of the
// weights is made.

// packTiles8 packs the first groups·8 quantized activation rows of xq into
// c.tiles (tb bytes each), the groups spread over the pool, and hands them
// to c.mt.
func (c *CPU) packTiles8(k quant.Kernel, xq []byte, groups, tb int) {
	if cap(c.tiles) < groups*tb {
		c.tiles = make([]byte, groups*tb)
	}
	c.pt = tileTask{k: k, xq: xq, tiles: c.tiles[:groups*tb], tb: tb, xrb: k.ActRowBytes()}
	c.w.run(groups, 1, &c.pt)
	c.pt = tileTask{}
	c.mt.tiles, c.mt.tb8 = c.tiles[:groups*tb], tb
}

// tileTask packs tiles lo..hi-1.
type tileTask struct {
	k       quant.Kernel // a copy: a pointer to matMul's would escape
	xq      []byte
	tiles   []byte
	tb, xrb int
}

func (t *tileTask) run(_, lo, hi int) {
	for g := lo; g < hi; g++ {
		t.k.PackTile8(t.xq[8*g*t.xrb:8*(g+1)*t.xrb], t.tiles[g*t.tb:(g+1)*t.tb])
	}
}

// tileBlockBytes bounds the tiles one pass of runTiles8 runs against, so
// they stay in L2 while every row quad of the chunk uses them.
const tileBlockBytes = 256 << 10

// runTiles8 computes rows lo..hi-1 (a multiple of four of them; row i is
// row i−wb of w, as in runRows) for the t.t8 tiled tokens. A block of tiles at a time, every row quad runs
// against the block's tiles in one call: a quad's rows stay in L1 while
// the tiles stream past, and the block stays in L2 for the next quad. Each
// quad is prepared once (Kernel.Prep4, into the worker's scratch), just
// before its first call; the preparation is the first read of its rows
// from memory, so the next quad's rows are prefetched first, to arrive
// while this quad computes.
func (t *matTask) runTiles8(worker int, w []byte, wb, lo, hi int) {
	wrb, rows := t.k.WeightRowBytes(), t.rows
	ws := &t.c.ws[worker]
	groups := t.t8 / 8
	quads := (hi - lo) / 4
	pb, tb := t.k.Prep4Bytes(), t.k.Tile8Bytes()
	if cap(ws.prep) < quads*pb {
		ws.prep = make([]byte, quads*pb)
	}
	per := max(2, tileBlockBytes/tb) &^ 1 // whole pairs of tiles
	if cap(ws.tileOut) < 64*per {
		ws.tileOut = make([]float32, 64*per)
	}
	prep := ws.prep[:quads*pb]
	oct := t.k.HasOct()
	for g0 := 0; g0 < groups; g0 += per {
		g1 := min(groups, g0+per)
		n := g1 - g0
		// A block of an odd number of tiles may run its last one as a
		// pair with itself (Dot4RowsTiles8X8, Dot8RowsTiles8): per is
		// even, so the room for it is there.
		m := n + n%2
		o, o2 := ws.tileOut[:32*m], ws.tileOut[32*per:32*per+32*m]
		tiles := t.tiles[g0*tb : g1*tb]
		for q := 0; q < quads; {
			i := lo + 4*q
			if oct && q+1 < quads {
				// Two quads at once: each tile chunk loaded once for
				// eight rows.
				if g0 == 0 {
					t.prepQuad(w, wb, q, i, quads, prep)
					t.prepQuad(w, wb, q+1, i+4, quads, prep)
				}
				t.k.Dot8RowsTiles8(prep[q*pb:(q+1)*pb], prep[(q+1)*pb:(q+2)*pb], tiles, n, o, o2)
				for g := g0; g < g1; g++ {
					quant.Scatter4x8((*[32]float32)(o[32*(g-g0):]), t.out[8*g*rows+i:8*(g+1)*rows], rows)
					quant.Scatter4x8((*[32]float32)(o2[32*(g-g0):]), t.out[8*g*rows+i+4:8*(g+1)*rows], rows)
				}
				q += 2
				continue
			}
			if g0 == 0 {
				t.prepQuad(w, wb, q, i, quads, prep)
			}
			if t.groupQuad(w, i) {
				gr := t.lay.GroupRows()
				g := i - i%gr
				t.k.Dot4RowsTiles8X8(w[g*wrb:(g+gr)*wrb], prep[q*pb:(q+1)*pb], tiles, n, o)
			} else {
				t.k.Dot4RowsTiles8(w[(i-wb)*wrb:(i-wb+4)*wrb], prep[q*pb:(q+1)*pb], tiles, n, o)
			}
			for g := g0; g < g1; g++ {
				quant.Scatter4x8((*[32]float32)(o[32*(g-g0):]), t.out[8*g*rows+i:8*(g+1)*rows], rows)
			}
			q++
		}
	}
}

// groupQuad reports whether rows i..i+3 (i a multiple of four) of the
// repacked weight w are a quad of a whole group that a prompt step reads
// as it lies (direct; rows past the last whole group are in the file
// layout).
func (t *matTask) groupQuad(w []byte, i int) bool {
	if !t.direct {
		return false
	}
	wrb, gr := t.k.WeightRowBytes(), t.lay.GroupRows()
	return i+4 <= len(w)/(gr*wrb)*gr
}

// prepQuad prepares quad q (rows i..i+3; row i is row i−wb of w) of the
// quads of a runTiles8 chunk into its place in prep.
func (t *matTask) prepQuad(w []byte, wb, q, i, quads int, prep []byte) {
	wrb, pb := t.k.WeightRowBytes(), t.k.Prep4Bytes()
	u := prep[q*pb : (q+1)*pb]
	switch {
	case t.rowsFree:
		// No scan to run: the kernel's own first read of the rows
		// overlaps its compute.
		t.k.Prep4Free(w[(i-wb)*wrb:(i-wb+4)*wrb], u)
	case t.groupQuad(w, i):
		// w is the repacked weight; rows i..i+3 are a quad of a group.
		// col16, whose first quad's preparation reads the whole group:
		// a quarter of the next group prefetched per quad (the chunks
		// take two groups: promptGrain). x8 reads its groups in stream
		// order and runs without: prefetching the next quad's rows cost
		// Q8_0 prompt steps ~2 % (bench/results/2026-12-03-s13-cpu-xpf).
		gr := t.lay.GroupRows()
		if gr == 16 && q+4 < quads {
			quant.Prefetch(w[(i+16)*wrb : (i+20)*wrb])
		}
		g := i - i%gr
		t.k.PrepGroup(t.lay, w[g*wrb:(g+gr)*wrb], (i-g)/4, u)
	default:
		if q+1 < quads {
			quant.Prefetch(w[(i-wb+4)*wrb : (i-wb+8)*wrb])
		}
		t.k.Prep4(w[(i-wb)*wrb:(i-wb+4)*wrb], u)
	}
}

// rowsFree reports whether weight w (rows of k) holds no −128 quant, for
// kernels that scan their row quads (Kernel.ScansRows): the whole weight
// is scanned the first time a prompt step uses it and the answer kept, so
// later prompt steps skip the per-quad scans.
func (c *CPU) rowsFree(k quant.Kernel, w []byte) bool {
	if !k.ScansRows() || len(w) == 0 {
		return false
	}
	key := weightKey{&w[0], len(w)}
	if free, ok := c.freeRows[key]; ok {
		return free
	}
	ws := &c.ws[0]
	if pb := k.Prep4Bytes(); cap(ws.prep) < pb {
		ws.prep = make([]byte, pb)
	}
	free := k.RowsFree(w, ws.prep[:k.Prep4Bytes()])
	if c.freeRows == nil {
		c.freeRows = map[weightKey]bool{}
	}
	c.freeRows[key] = free
	return free
}

// weightKey names a weight's bytes: where they start and how many.
type weightKey struct {
	p *byte
	n int
}
