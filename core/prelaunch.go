package core

import (
	"context"
	"os"

	"github.com/minfer/minfer/core/backend"
	"github.com/minfer/minfer/core/graph"
	"github.com/minfer/minfer/core/model"
	"github.com/minfer/minfer/internal/memview"
)

// The next decode step, queued early. A decode step's logits come back to
// the host, which samples the next token and only then builds, fills and
// issues the next step: on a GPU that runs a 1B model's step in about a
// millisecond, that host work (50 µs) is time the device idles. But every
// input of the next step save its token is known once this step is queued
// (position nPast+1, its mask and cache row). So when a one-token step runs
// wholly on a backend that can gate runs (backend.Gater: CUDA), the session
// queues the next one-token step right after this step's logits read is
// queued (backend.ThenReader) — its graph, buffers and inputs, the token
// left to a gate — and then waits for the logits. The next Eval of one
// token at that position opens the gate with its token (OpenGate) and only
// reads (and checks the model file, checkFile, while the step runs: a
// step wholly on the device reads no mapped weight); anything else lets
// the queued step go (dropPrelaunch: the gate opened with token 0 and
// waited for), and its writes are harmless: the cache row at that
// position is written again by whatever step next covers the position,
// before any attention reads it, and its logits are never read. Blocks of sliding-window attention are left out (their cache rows
// are a ring: the queued step's row would overwrite an older position's).
//
// MINFER_PRELAUNCH=0 turns it off. The step phase timing (SetStepTiming,
// the bench's timed run) turns it off too, so its phases stay one step's.

// prelaunchState is the session's: the queued step (pre), the switch,
// each graph's gating backend (be, memoized), the run's node slice, the
// token placeholder and the token a dropped step runs with, the counts of
// queued steps taken and run anew (tests), whether eval left this step's
// file check to step (lateCheck: the queued step at this position may
// take it, session.go), and the read callback's state
// and function (then, thenFn: no closure over a step's locals, which would
// then live on the heap).
type prelaunchState struct {
	pre        prelaunch
	off        bool
	be         map[*graph.Graph]int
	run        []*graph.Node
	tok        [1]int32
	zero       [4]byte
	used, anew int
	lateCheck  bool
	then       prelaunchThen
	thenFn     func()
}

// prelaunch is a step queued behind its backend's gate (g nil: none).
type prelaunch struct {
	g     *graph.Graph
	p     graph.Params
	nPast int // its position
	gater backend.Gater
}

func prelaunchOff() bool { return os.Getenv("MINFER_PRELAUNCH") == "0" }

// prelaunchGater is the backend that may queue the step after g (a step
// of p) early, else nil: one token, no logits of every token, room for one
// more position, no ring caches, no timing, and every node g runs on one
// backend that gates runs (that backend).
func (s *Session) prelaunchGater(g *graph.Graph, p graph.Params) backend.Gater {
	if s.pl.off || s.phases != nil || p.Tokens != 1 || p.AllLogits || s.nPast+2 > s.nCtx {
		return nil
	}
	if _, swa := g.Input(model.InMaskSWA); swa {
		return nil
	}
	return s.gaterOf(g)
}

// gaterOf is the backend that runs all of g's nodes when it gates runs,
// else nil (memoized per graph: the assignment is the graph's).
func (s *Session) gaterOf(g *graph.Graph) backend.Gater {
	if s.pl.be == nil {
		s.pl.be = map[*graph.Graph]int{}
	}
	be, ok := s.pl.be[g]
	if !ok {
		be = -1
		for _, n := range g.Nodes {
			if n.Op.IsLeaf() || n.Op == graph.OpView {
				continue
			}
			if n.Op == graph.OpCopy || (be >= 0 && n.Backend != be) {
				be = -1
				break
			}
			be = n.Backend
		}
		if tok, ok := g.Input(model.InTokens); !ok || tok.Backend != be {
			be = -1
		}
		s.pl.be[g] = be
	}
	if be < 0 {
		return nil
	}
	gt, ok := s.bes[be].(backend.Gater)
	if !ok || !gt.Gating() {
		return nil
	}
	return gt
}

// readQueueNext reads g's logits through tr, queuing the one-token step at
// position next once the read is queued (prelaunchThen releases g's
// buffers first: the read's copy and the next step's work queue after
// this step's, on one stream). It reports whether g's buffers are still
// held (the callback did not run).
func (s *Session) readQueueNext(ctx context.Context, tr backend.ThenReader, g *graph.Graph, logits []float32, next int) (bool, error) {
	s.pl.then = prelaunchThen{g: g, ctx: ctx, next: next}
	if s.pl.thenFn == nil {
		s.pl.thenFn = s.prelaunchThen // (once: a method value allocates)
	}
	err := tr.ReadHostWindowThen(g.Outputs[0].Buf, memview.Bytes(logits), s.pl.thenFn)
	held := s.pl.then.g != nil
	s.pl.then = prelaunchThen{}
	return held, err
}

// prelaunchThen is the step's read callback's state: its graph (nil once
// released), context and the next position.
type prelaunchThen struct {
	g    *graph.Graph
	ctx  context.Context
	next int
}

// prelaunchThen runs inside a step's read once its copy is queued: the
// step's buffers released, the next step queued.
func (s *Session) prelaunchThen() {
	graph.Release(s.pl.then.g, s.ga)
	s.pl.then.g = nil
	s.prelaunchNext(s.pl.then.ctx, s.pl.then.next)
}

// prelaunchNext queues the one-token step at position next behind a gate
// (inside this step's read: its copy is queued, its buffers released).
// Any failure only means no queued step: the next Eval runs as usual.
func (s *Session) prelaunchNext(ctx context.Context, next int) {
	p := graph.Params{Tokens: 1, KVLen: s.kvClass(next + 1), GPULayers: s.plan.GPULayers, Arch: s.H.Arch}
	g, err := s.graphFor(p)
	if err != nil {
		return
	}
	gt := s.prelaunchGater(g, p)
	if gt == nil {
		return
	}
	tok, _ := g.Input(model.InTokens)
	if err := graph.Allocate(g, s.ga, s.kvLookup); err != nil {
		return
	}
	// The token's own write (zeros) goes too: the gate's copy replaces it.
	if err := s.fillInputs(g, s.pl.tok[:], p.KVLen, next); err != nil {
		graph.Release(g, s.ga)
		return
	}
	run := s.pl.run[:0]
	for _, n := range g.Nodes {
		if !n.Op.IsLeaf() && n.Op != graph.OpView {
			run = append(run, n)
		}
	}
	s.pl.run = run
	err = gt.ComputeGated(ctx, run, tok.Buf)
	clear(run)
	if err != nil {
		graph.Release(g, s.ga)
		return
	}
	s.pl.pre = prelaunch{g: g, p: p, nPast: next, gater: gt}
}

// takePrelaunch returns the queued step's graph, its gate opened with
// tokens, when it is the step of p for tokens at nPast (its buffers stay
// allocated: the caller releases them); else it lets any queued step go
// and returns nil.
func (s *Session) takePrelaunch(tokens []int32, p graph.Params) *graph.Graph {
	pre := s.pl.pre
	if pre.g == nil {
		return nil
	}
	if pre.nPast != s.nPast || pre.p != p {
		s.dropPrelaunch()
		return nil
	}
	s.pl.pre = prelaunch{}
	if err := pre.gater.OpenGate(memview.Bytes(tokens)); err != nil {
		// Opened by another request (token 0 ran): this step runs anew.
		s.pl.anew++
		s.settle(pre.gater)
		graph.Release(pre.g, s.ga)
		return nil
	}
	s.pl.used++
	return pre.g
}

// dropPrelaunch lets a queued step go (its gate opened with token 0) and
// waits for it, so that nothing of it runs into what comes next (a timed
// prefill, say), and releases its buffers.
func (s *Session) dropPrelaunch() {
	pre := s.pl.pre
	if pre.g == nil {
		return
	}
	s.pl.pre = prelaunch{}
	// Any error leaves the gate open too (ErrGateOpened: another request
	// opened it; a size mismatch: the backend opens it with zeros).
	_ = pre.gater.OpenGate(s.pl.zero[:])
	s.settle(pre.gater)
	graph.Release(pre.g, s.ga)
}

// settle waits for the backend's queued work where it can say so.
func (s *Session) settle(b backend.Gater) {
	if sy, ok := b.(interface{ Synchronize() error }); ok {
		sy.Synchronize()
	}
}
