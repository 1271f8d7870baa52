package cuda

import (
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"time"
)

// MINFER_CUDA_TRACE=1 prints to stderr how the host time of Compute and of
// the reads splits, as means over every 1000 Computes (MINFER_CUDA_TRACE=N:
// every N) and over the rest at Close:
//
//   - hand-off: from the call to the owner starting on it;
//   - inputs: the deferred input writes uploaded first (thread.pre), or
//     gathered into the input block for the run to carry (inputs.go);
//   - lookup: the run's signature and graph cache lookup;
//   - launch: the graph launch (or the kernels encoded, or the capture);
//   - return: from the owner done to the caller running again;
//
// and of the reads, polled (readpoll.go) or plain: queue (the polled
// read's request to the owner, hand-offs included), wait (for the flag, or
// the stream synchronize after the poll limit), copy (out of the staging),
// or a plain read's whole time. Off, it costs Compute one nil check.

// hostTrace aggregates the samples (any goroutine; mu guards all).
type hostTrace struct {
	mu    sync.Mutex
	w     io.Writer
	every int
	s     traceSums
}

// traceSums are the sums since the last print.
type traceSums struct {
	computes, replays                       int
	handIn, inputs, lookup, launch, handOut time.Duration

	reads, polled, fellBack  int
	queue, wait, copy, plain time.Duration
}

// computeTrace is one Compute's time stamps.
type computeTrace struct {
	call, preStart, preEnd, looked, end time.Time
	replay                              bool
}

// traceFromEnv is the trace MINFER_CUDA_TRACE asks for, or nil.
func traceFromEnv() *hostTrace { return parseTrace(os.Getenv("MINFER_CUDA_TRACE"), os.Stderr) }

func parseTrace(v string, w io.Writer) *hostTrace {
	n, err := strconv.Atoi(v)
	if err != nil || n <= 0 {
		return nil
	}
	if n == 1 {
		n = 1000
	}
	return &hostTrace{w: w, every: n}
}

// addCompute adds one Compute (done is when the caller got its result).
func (h *hostTrace) addCompute(c *computeTrace, done time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := &h.s
	s.computes++
	if c.replay {
		s.replays++
	}
	s.handIn += c.preStart.Sub(c.call)
	s.inputs += c.preEnd.Sub(c.preStart)
	s.lookup += c.looked.Sub(c.preEnd)
	s.launch += c.end.Sub(c.looked)
	s.handOut += done.Sub(c.end)
	if s.computes >= h.every {
		h.flush()
	}
}

// addPolled adds a polled read; addPlain a plain one.
func (h *hostTrace) addPolled(queue, wait, cp time.Duration, fellBack bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := &h.s
	s.reads++
	s.polled++
	if fellBack {
		s.fellBack++
	}
	s.queue += queue
	s.wait += wait
	s.copy += cp
}

func (h *hostTrace) addPlain(d time.Duration) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.s.reads++
	h.s.plain += d
}

// close prints what is left.
func (h *hostTrace) close() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.flush()
}

// flush prints the means and zeroes the sums (under mu).
func (h *hostTrace) flush() {
	s := &h.s
	if s.computes == 0 && s.reads == 0 {
		return
	}
	us := func(d time.Duration, n int) float64 {
		if n == 0 {
			return 0
		}
		return float64(d) / float64(n) / 1e3
	}
	var sb strings.Builder
	n := s.computes
	fmt.Fprintf(&sb, "cuda trace: %d computes (%d replays), µs each: hand-off %.1f, inputs %.1f, lookup %.1f, launch %.1f, return %.1f = %.1f",
		n, s.replays, us(s.handIn, n), us(s.inputs, n), us(s.lookup, n), us(s.launch, n), us(s.handOut, n),
		us(s.handIn+s.inputs+s.lookup+s.launch+s.handOut, n))
	if p := s.polled; p > 0 {
		fmt.Fprintf(&sb, "; %d polled reads (%d fell back), µs each: queue %.1f, wait %.1f, copy %.1f",
			p, s.fellBack, us(s.queue, p), us(s.wait, p), us(s.copy, p))
	}
	if p := s.reads - s.polled; p > 0 {
		fmt.Fprintf(&sb, "; %d plain reads, µs each %.1f", p, us(s.plain, p))
	}
	fmt.Fprintln(h.w, sb.String())
	h.s = traceSums{}
}
