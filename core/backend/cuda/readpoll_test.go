package cuda

import (
	"bytes"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"
)

func TestReached(t *testing.T) {
	for _, c := range []struct {
		flag, seq uint32
		want      bool
	}{{5, 5, true}, {6, 5, true}, {4, 5, false}, {0, math.MaxUint32, true}, {math.MaxUint32, 0, false}, {2, math.MaxUint32 - 1, true}} {
		if got := reached(c.flag, c.seq); got != c.want {
			t.Errorf("reached(%d, %d) = %v", c.flag, c.seq, got)
		}
	}
}

// fakePoll is a pollReader over Go memory, the "stream" a goroutine.
func fakePoll(limit time.Duration) (*pollReader, *uint32) {
	var flag uint32
	return &pollReader{flag: &flag, buf: make([]byte, 64), limit: limit}, &flag
}

// TestPolledReadWaitsForItsNumber: the caller copies out only once the
// flag holds its number; the bytes are those written before it.
func TestPolledReadWaitsForItsNumber(t *testing.T) {
	r, flag := fakePoll(time.Second)
	for i := 0; i < 200; i++ {
		want := bytes.Repeat([]byte{byte(i)}, 48)
		queued := make(chan struct{})
		queue := func(seq uint32) error {
			go func() {
				<-queued
				if i%2 == 0 {
					time.Sleep(20 * time.Microsecond)
				}
				copy(r.buf, want) // the "copy", then the "flag write"
				atomic.StoreUint32(flag, seq)
			}()
			close(queued)
			return nil
		}
		sync := func() error { t.Fatal("fell back to a synchronize"); return nil }
		dst := make([]byte, 48)
		if _, _, err := r.read(dst, queue, sync); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(dst, want) {
			t.Fatalf("read %d: got %v", i, dst[:4])
		}
		if r.polling.Load() {
			t.Fatal("polling left set")
		}
	}
	if got := atomic.LoadUint32(flag); got != r.seq {
		t.Fatalf("flag %d, seq %d", got, r.seq)
	}
}

// TestPolledReadFallsBack: past the poll limit the caller has the stream
// synchronized: its error is the read's; a synchronize that leaves the
// flag short is an error too; one that brings it copies out. A queue error
// is the read's at once, and the next read's number still works.
func TestPolledReadFallsBack(t *testing.T) {
	r, flag := fakePoll(2 * time.Millisecond)
	devErr := &CallError{Call: "cuStreamSynchronize", Result: ErrIllegalAddress}
	dst := make([]byte, 8)
	start := time.Now()
	_, _, err := r.read(dst, func(uint32) error { return nil }, func() error { return devErr })
	if !errors.Is(err, ErrIllegalAddress) {
		t.Fatalf("device error: got %v", err)
	}
	if d := time.Since(start); d < 2*time.Millisecond {
		t.Fatalf("fell back after %v, before the limit", d)
	}
	if _, _, err := r.read(dst, func(uint32) error { return nil }, func() error { return nil }); err == nil {
		t.Fatal("flag short after the synchronize: no error")
	}
	var syncs int
	wait, _, err := r.read(dst, func(uint32) error { return nil }, func() error {
		syncs++
		copy(r.buf, "abcdefgh")
		atomic.StoreUint32(flag, r.seq)
		return nil
	})
	if err != nil || syncs != 1 || string(dst) != "abcdefgh" || wait < 2*time.Millisecond {
		t.Fatalf("synchronize bringing the flag: err %v, %d syncs, %q, wait %v", err, syncs, dst, wait)
	}
	qErr := &CallError{Call: "cuStreamWriteValue32", Result: ErrNotSupported}
	if _, _, err := r.read(dst, func(uint32) error { return qErr }, nil); !errors.Is(err, ErrNotSupported) {
		t.Fatalf("queue error: got %v", err)
	}
	if _, _, err := r.read(dst, func(seq uint32) error { atomic.StoreUint32(flag, seq); return nil }, nil); err != nil {
		t.Fatalf("after a queue error: %v", err)
	}
	if _, _, err := r.read(make([]byte, 65), nil, nil); err == nil {
		t.Fatal("read larger than the staging: no error")
	}
}

// TestPollFlagWraps: the numbers wrap at 2³² and the poll does not
// mistake an older number for a newer one.
func TestPollFlagWraps(t *testing.T) {
	flag := uint32(math.MaxUint32)
	if !pollFlag(&flag, math.MaxUint32, time.Millisecond) {
		t.Fatal("flag at its number not seen")
	}
	if pollFlag(&flag, 0, time.Millisecond) {
		t.Fatal("older number taken for 0")
	}
	flag = 1
	if !pollFlag(&flag, 0, time.Millisecond) {
		t.Fatal("newer number not taken for 0")
	}
}

// TestPolledReadHelpSteps: an offered half is copied by the owner when it
// claims it first (settle then only waits) and by the caller otherwise
// (the owner's later claim then fails); either way every byte lands and
// the state is back to none.
func TestPolledReadHelpSteps(t *testing.T) {
	for _, ownerFirst := range []bool{true, false} {
		r := &pollReader{buf: make([]byte, 2*helpMin+200), helpOn: true}
		for k := range r.buf {
			r.buf[k] = byte(k * 13)
		}
		dst := make([]byte, len(r.buf)-5)
		half := r.offer(dst)
		if half == 0 || half%64 != 0 || half > len(dst)/2 {
			t.Fatalf("half at %d of %d", half, len(dst))
		}
		copy(dst[:half], r.buf[:half])
		if ownerFirst && !r.ownerHelp() {
			t.Fatal("the owner could not claim an offered half")
		}
		r.settle()
		if !ownerFirst && r.ownerHelp() {
			t.Fatal("the owner claimed a half the caller took back")
		}
		if !bytes.Equal(dst, r.buf[:len(dst)]) {
			t.Fatalf("owner first %v: the bytes differ", ownerFirst)
		}
		if r.help.Load() != helpNone || r.helpDst != nil || r.helpSrc != nil {
			t.Fatalf("owner first %v: help state %d left", ownerFirst, r.help.Load())
		}
	}
}

// TestPolledReadOwnerHelps: reads of helpMin bytes or more (odd lengths,
// and shorter ones, which offer nothing) with an owner spinning on
// ownerHelp, and without one: dst holds every byte of the staging and the
// state is back to none after each; without an owner no half is taken by
// it. (Whether a spinning owner wins any claim depends on the scheduler:
// logged, not asserted; TestPolledReadHelpSteps takes each path.)
func TestPolledReadOwnerHelps(t *testing.T) {
	for _, owner := range []bool{true, false} {
		var flag uint32
		r := &pollReader{flag: &flag, buf: make([]byte, 3*helpMin), limit: time.Second, helpOn: true}
		var helped atomic.Int64
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			for owner {
				select {
				case <-stop:
					return
				default:
				}
				if r.polling.Load() && r.ownerHelp() {
					helped.Add(1)
				}
			}
		}()
		sizes := []int{helpMin - 1, helpMin, helpMin + 3, 2*helpMin + 100, 3 * helpMin}
		reads := 0
		for i := 0; i < 300; i++ {
			n := sizes[i%len(sizes)]
			want := make([]byte, n)
			for k := range want {
				want[k] = byte(k*7 + i)
			}
			queue := func(seq uint32) error {
				copy(r.buf, want)
				atomic.StoreUint32(&flag, seq)
				return nil
			}
			dst := make([]byte, n)
			if _, _, err := r.read(dst, queue, func() error { return nil }); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(dst, want) {
				t.Fatalf("owner %v, read %d of %d bytes: the bytes differ", owner, i, n)
			}
			if st := r.help.Load(); st != helpNone || r.helpDst != nil {
				t.Fatalf("owner %v, read %d: help state %d left", owner, i, st)
			}
			if n >= helpMin {
				reads++
			}
		}
		close(stop)
		<-done
		if !owner && helped.Load() != 0 {
			t.Errorf("%d halves taken without an owner", helped.Load())
		}
		t.Logf("owner %v: %d of %d halves copied by it", owner, helped.Load(), reads)
	}
}

// TestPolledReadHelpOff: without helpOn nothing is offered.
func TestPolledReadHelpOff(t *testing.T) {
	var flag uint32
	r := &pollReader{flag: &flag, buf: make([]byte, 2*helpMin), limit: time.Second}
	queue := func(seq uint32) error {
		if r.help.Load() != helpNone {
			t.Error("offered before the copy")
		}
		atomic.StoreUint32(&flag, seq)
		return nil
	}
	if _, _, err := r.read(make([]byte, 2*helpMin), queue, func() error { return nil }); err != nil {
		t.Fatal(err)
	}
	if r.ownerHelp() {
		t.Fatal("the owner copied with help off")
	}
}

// TestPolledReadDirect: a read whose dst lies wholly in a direct range
// (PinHost's) has the device copy straight into dst (its target) and no
// copy out of the staging; one outside, or only partly inside, goes
// through the staging as before.
func TestPolledReadDirect(t *testing.T) {
	var flag uint32
	r := &pollReader{flag: &flag, buf: make([]byte, 3*helpMin), limit: time.Second, helpOn: true, host: 0x1000}
	pinned := make([]byte, 2*helpMin)
	base := uintptr(unsafe.Pointer(unsafe.SliceData(pinned)))
	r.direct = []hostRange{{base, len(pinned) - 100}}
	for i, c := range []struct {
		dst    []byte
		direct bool
	}{
		{pinned[:helpMin], true},
		{pinned[8 : 8+2*helpMin-200], true},
		{pinned[len(pinned)-200:], false}, // past the range's end
		{make([]byte, helpMin+5), false},
		{make([]byte, 40), false},
	} {
		want := make([]byte, len(c.dst))
		for k := range want {
			want[k] = byte(k*5 + i)
		}
		for k := range r.buf {
			r.buf[k] = 0xee
		}
		queue := func(seq uint32) error {
			dp := uintptr(unsafe.Pointer(unsafe.SliceData(c.dst)))
			switch {
			case c.direct && r.target != dp:
				t.Errorf("case %d: target %#x, want dst %#x", i, r.target, dp)
			case !c.direct && r.target != r.host:
				t.Errorf("case %d: target %#x, want the staging %#x", i, r.target, r.host)
			}
			if c.direct {
				copy(c.dst, want) // the device's copy, straight into dst
			} else {
				copy(r.buf, want)
			}
			atomic.StoreUint32(&flag, seq)
			return nil
		}
		if _, _, err := r.read(c.dst, queue, func() error { return nil }); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(c.dst, want) {
			t.Errorf("case %d (direct %v): the bytes differ (a copy out of the staging over a direct read?)", i, c.direct)
		}
	}
}
