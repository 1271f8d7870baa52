package cuda

import (
	"sync/atomic"
	"time"
	"unsafe"
)

// The busy timer measures how long the device spends on the runs between
// two reads: an event before the first run after a read, an event after
// every run, and at the next read (which waits for the stream anyway) the
// time between them. Against the wall time of a decode step it splits the
// step into the device's work and what the host and the copies add (bench
// reports both). Off unless asked for: two event records a step are host
// calls a step otherwise would not make.
//
// A polled read (readpoll.go) does not wait on the owner: it marks the span
// closed by it (closeDue), and the owner's next request closes it first
// (busySettle: by then the end event is long done), before any new span
// can start. Its wait and copy times are the caller's, added atomically.

type busyTimer struct {
	on         bool
	start, end uintptr // CUevent
	pending    bool
	total      time.Duration
	spans      int
	// wait and copy: the reads' time in the stream wait and in the copy
	// out of the pinned staging after it (host clock).
	wait, copy time.Duration
	// closeDue: a polled read ended the pending span (busySettle closes it).
	closeDue bool
	// pollWait and pollCopy: the polled reads' wait and copy (ns), added
	// by their callers.
	pollWait, pollCopy atomic.Int64
}

// SetBusyTiming turns the busy timer on (creating its events) or off, and
// zeroes its totals.
func (b *Backend) SetBusyTiming(on bool) error {
	return b.dv.t.do(func() error {
		bt := &b.busy
		if on && bt.start == 0 {
			const defaultFlags = 0 // timing on, blocking off
			if err := check("cuEventCreate", sys(b.dv.d.eventCreate, uintptr(unsafe.Pointer(&bt.start)), defaultFlags)); err != nil {
				return err
			}
			if err := check("cuEventCreate", sys(b.dv.d.eventCreate, uintptr(unsafe.Pointer(&bt.end)), defaultFlags)); err != nil {
				sys(b.dv.d.eventDestroy, bt.start)
				bt.start = 0
				return err
			}
		}
		bt.on = on && bt.start != 0
		bt.pending, bt.total, bt.spans, bt.wait, bt.copy, bt.closeDue = false, 0, 0, 0, 0, false
		bt.pollWait.Store(0)
		bt.pollCopy.Store(0)
		return nil
	})
}

// DeviceBusy is the device time of the spans measured since SetBusyTiming
// and how many there were (one a decode step: a step's runs up to the read
// of its logits).
func (b *Backend) DeviceBusy() (time.Duration, int) {
	var d time.Duration
	var n int
	b.dv.t.do(func() error { d, n = b.busy.total, b.busy.spans; return nil })
	return d, n
}

// ReadWaitCopy is the time the reads since SetBusyTiming(true) spent
// waiting for the stream and copying out of the pinned staging.
func (b *Backend) ReadWaitCopy() (wait, copy time.Duration) {
	b.dv.t.do(func() error {
		bt := &b.busy
		wait = bt.wait + time.Duration(bt.pollWait.Load())
		copy = bt.copy + time.Duration(bt.pollCopy.Load())
		return nil
	})
	return
}

// busyBefore records the span's start event before a run's first work.
func (b *Backend) busyBefore() {
	if bt := &b.busy; bt.on && !bt.pending {
		if check("cuEventRecord", sys(b.dv.d.eventRecord, bt.start, b.dv.stream)) == nil {
			bt.pending = true
		}
	}
}

// busyAfter records the end event after a run's work.
func (b *Backend) busyAfter() {
	if bt := &b.busy; bt.on && bt.pending {
		if check("cuEventRecord", sys(b.dv.d.eventRecord, bt.end, b.dv.stream)) != nil {
			bt.pending = false
		}
	}
}

// busyRead closes the span after the stream has been waited for.
func (b *Backend) busyRead() {
	bt := &b.busy
	if !bt.on || !bt.pending {
		return
	}
	bt.pending = false
	var ms float32
	if check("cuEventElapsedTime", sys(b.dv.d.eventElapsedTime, uintptr(unsafe.Pointer(&ms)), bt.start, bt.end)) == nil {
		bt.total += time.Duration(float64(ms) * float64(time.Millisecond))
		bt.spans++
	}
}

// busyPollQueued: a polled read was queued after the span's runs; the
// span ends with it.
func (b *Backend) busyPollQueued() {
	if bt := &b.busy; bt.on && bt.pending {
		bt.closeDue = true
	}
}

// busySettle closes a span a polled read ended (first in every request:
// before busyBefore can start a new one).
func (b *Backend) busySettle() {
	bt := &b.busy
	if !bt.closeDue {
		return
	}
	bt.closeDue = false
	if check("cuEventSynchronize", sys(b.dv.d.eventSynchronize, bt.end)) != nil {
		bt.pending = false
		return
	}
	b.busyRead()
}

func (bt *busyTimer) destroy(dv *device) {
	if bt.start != 0 {
		sys(dv.d.eventDestroy, bt.start)
		sys(dv.d.eventDestroy, bt.end)
		bt.start, bt.end, bt.on = 0, 0, false
	}
}
