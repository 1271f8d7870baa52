package cuda

import (
	"errors"
	"fmt"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"
)

// Polled reads. A decode step ends with the read of its logits; the plain
// read (device.download) has the owner queue the copy, wait in
// cuStreamSynchronize and copy out while the caller waits for the owner —
// two hand-offs around a blocking driver wait. A read of up to pollSize
// bytes instead has the owner queue the copy into a pinned buffer of its
// own and, after it on the stream, a cuStreamWriteValue32 of a sequence
// number into a pinned flag word, and return at once; the caller (not the
// owner) watches the flag word until it holds its number and copies out of
// the buffer. The write is the stream's next operation after the copy and
// comes with a system-wide fence before it (flags 0), so the buffer holds
// the bytes once the number is seen. After pollLimit without it, the
// caller has the owner synchronize the stream instead, so that a device
// error is reported, never waited on forever.
//
// It needs the driver's stream memory operations (cuStreamWriteValue32_v2,
// CUDA 11.7 and later) and a mapped pinned word: the loader looks the calls
// up, and setup writes a number through them once and reads it back before
// it trusts them (the deprecated V1 attribute says nothing of the v2 calls).
// Without them reads stay plain. MINFER_CUDA_POLLREAD=0 keeps them plain,
// for comparisons.

const (
	// pollSize is the largest polled read: a step's logits (32k–256k
	// vocabulary entries of 4 bytes) and more.
	pollSize = 2 << 20
	// pollLimit is how long a caller polls before it falls back to a
	// stream synchronize.
	pollLimit = 5 * time.Millisecond
	// pollFlagOff: the flag word's offset in the pinned allocation (its
	// own cache line after the buffer).
	pollFlagOff = pollSize
	pollAlloc   = pollSize + 256
)

// pollReadOff reports MINFER_CUDA_POLLREAD=0.
func pollReadOff() bool { return os.Getenv("MINFER_CUDA_POLLREAD") == "0" }

// The copy out of a polled read of helpMin bytes or more is split in two:
// once its number is in, the caller offers the second half to the owner —
// which spins idle while a caller polls (thread.hold, pollHold) — and
// copies the first; whichever of the two claims the second half first
// copies it, so the owner's help is never waited for unless it started.
// The staging is fresh from the device (no cache holds it), so two cores
// read it faster than one: a decode step's logits (128 KiB for a 32k
// vocabulary) took 10 µs of one core, about 1 % of a 1.1B step on an H100,
// the device idle meanwhile. MINFER_CUDA_READHELP=0 keeps the copy the
// caller's, for comparisons.
const helpMin = 64 << 10

// The states of the offered half (pollReader.help).
const (
	helpNone    uint32 = iota
	helpOffered        // the caller offers it (helpDst, helpSrc set)
	helpOwner          // the owner claimed it and is copying
	helpDone           // the owner copied it
	helpCaller         // the caller took it back
)

// readHelpOff reports MINFER_CUDA_READHELP=0.
func readHelpOff() bool { return os.Getenv("MINFER_CUDA_READHELP") == "0" }

// pollReader is the polled reads' staging: a pinned buffer and the flag
// word the stream writes sequence numbers into.
type pollReader struct {
	mu   sync.Mutex // one polled read at a time: the buffer is one
	seq  uint32     // the last number queued (under mu)
	flag *uint32    // the flag word (host view)
	buf  []byte     // the buffer (host view)
	// polling: a caller is waiting for its number (the idle owner keeps
	// spinning meanwhile: thread.hold).
	polling atomic.Bool
	limit   time.Duration
	// helpOn: the copy out is split with the owner (helpMin); help is the
	// offered half's state, helpDst and helpSrc the half (set by the caller
	// before it offers it, read by the owner only once it claimed it).
	helpOn           bool
	help             atomic.Uint32
	helpDst, helpSrc []byte
	// direct: the host ranges registered for direct reads (PinHost; under
	// mu); target: the current read's destination for the device's copy
	// (set by read under mu before it queues: the staging, or dst itself
	// when dst lies in a direct range).
	direct []hostRange
	target uintptr

	// driver side, owner thread only
	host    uintptr // the pinned allocation (cuMemHostAlloc)
	flagDev uintptr // the flag word's device address
}

// reached reports whether flag has got to seq (modulo 2³²: the numbers
// wrap).
func reached(flag, seq uint32) bool { return int32(flag-seq) >= 0 }

// pollFlag waits for the word at flag to reach seq, for up to limit; it
// reports whether it did.
func pollFlag(flag *uint32, seq uint32, limit time.Duration) bool {
	if reached(atomic.LoadUint32(flag), seq) {
		return true
	}
	start := time.Now()
	for i := 1; ; i++ {
		if reached(atomic.LoadUint32(flag), seq) {
			return true
		}
		if i%spinCheck == 0 {
			runtime.Gosched()
			if time.Since(start) > limit {
				return reached(atomic.LoadUint32(flag), seq)
			}
		}
	}
}

// read fills dst (at most pollSize bytes) through the staging: queue, run
// on the owner, puts the device-to-host copy into r.buf and the write of
// seq into the flag word on the stream; sync, on the owner, waits for the
// stream when the poll runs past the limit. It returns the time spent
// waiting for the number (and any synchronize) and copying out.
func (r *pollReader) read(dst []byte, queue func(seq uint32) error, sync func() error) (wait, cp time.Duration, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(dst) > len(r.buf) {
		return 0, 0, fmt.Errorf("cuda: polled read of %d bytes (staging of %d)", len(dst), len(r.buf))
	}
	r.seq++
	seq := r.seq
	direct := r.directFor(dst)
	r.target = r.host
	if direct {
		r.target = uintptr(unsafe.Pointer(unsafe.SliceData(dst)))
	}
	r.polling.Store(true)
	defer r.polling.Store(false)
	if err := queue(seq); err != nil {
		return 0, 0, err
	}
	t0 := time.Now()
	if !pollFlag(r.flag, seq, r.limit) {
		if err := sync(); err != nil {
			return time.Since(t0), 0, err
		}
		if f := atomic.LoadUint32(r.flag); !reached(f, seq) {
			return time.Since(t0), 0, fmt.Errorf("cuda: polled read: the stream is idle and its flag at %d, not %d", f, seq)
		}
	}
	t1 := time.Now()
	if !direct {
		r.copyOut(dst)
	}
	return t1.Sub(t0), time.Since(t1), nil
}

// hostRange is a host memory range registered with the driver (PinHost).
type hostRange struct {
	p uintptr
	n int
}

// directFor reports whether dst lies wholly in a direct range (under mu).
func (r *pollReader) directFor(dst []byte) bool {
	if len(dst) == 0 {
		return false
	}
	p := uintptr(unsafe.Pointer(unsafe.SliceData(dst)))
	for _, h := range r.direct {
		if p >= h.p && p+uintptr(len(dst)) <= h.p+uintptr(h.n) {
			return true
		}
	}
	return false
}

// copyOut copies the staging into dst once the read's number is in: with
// the owner's help (helpOn) when dst is long enough.
func (r *pollReader) copyOut(dst []byte) {
	if !r.helpOn || len(dst) < helpMin {
		copy(dst, r.buf[:len(dst)])
		return
	}
	half := r.offer(dst)
	copy(dst[:half], r.buf[:half])
	r.settle()
}

// offer offers the owner the second half of dst's copy; it returns where
// that half starts.
func (r *pollReader) offer(dst []byte) int {
	half := len(dst) / 2 &^ 63
	r.helpDst, r.helpSrc = dst[half:], r.buf[half:len(dst)]
	r.help.Store(helpOffered)
	return half
}

// settle returns once the offered half is copied: by the caller, when the
// owner has not claimed it, else by the owner (whose copy it waits for).
func (r *pollReader) settle() {
	for st := r.help.Load(); st != helpDone; st = r.help.Load() {
		if st == helpOffered && r.help.CompareAndSwap(helpOffered, helpCaller) {
			copy(r.helpDst, r.helpSrc)
			break
		}
	}
	r.helpDst, r.helpSrc = nil, nil
	r.help.Store(helpNone)
}

// ownerHelp copies an offered half (on the owner, from pollHold); it
// reports whether it did.
func (r *pollReader) ownerHelp() bool {
	if r.help.Load() != helpOffered || !r.help.CompareAndSwap(helpOffered, helpOwner) {
		return false
	}
	copy(r.helpDst, r.helpSrc)
	r.help.Store(helpDone)
	return true
}

// setupPoll creates the polled reads' staging and checks the stream
// memory operations on it (setup, on the owner). Any failure leaves reads
// plain (dv.poll nil); it is no error of the setup's.
func (dv *device) setupPoll() {
	d := dv.d
	if pollReadOff() || d.streamWriteValue32 == 0 || d.memHostAlloc == 0 || d.memHostGetDevicePointer == 0 {
		return
	}
	const deviceMap = 2 // CU_MEMHOSTALLOC_DEVICEMAP
	var host uintptr
	if check("cuMemHostAlloc", sys(d.memHostAlloc, uintptr(unsafe.Pointer(&host)), pollAlloc, deviceMap)) != nil {
		return
	}
	r := &pollReader{host: host, limit: pollLimit, helpOn: !readHelpOff()}
	all := hostSlice(host, pollAlloc)
	r.buf = all[:pollSize:pollSize]
	r.flag = (*uint32)(unsafe.Pointer(&all[pollFlagOff]))
	if check("cuMemHostGetDevicePointer", sys(d.memHostGetDevicePointer, uintptr(unsafe.Pointer(&r.flagDev)), host+pollFlagOff, 0)) != nil {
		sys(d.memFreeHost, host)
		return
	}
	// The probe: a number written through the stream must be there once
	// the stream is done.
	const probe = 0x6d696e66
	atomic.StoreUint32(r.flag, 0)
	if check("cuStreamWriteValue32", sys(d.streamWriteValue32, dv.stream, r.flagDev, probe, 0)) != nil ||
		check("cuStreamSynchronize", sys(d.streamSynchronize, dv.stream)) != nil ||
		atomic.LoadUint32(r.flag) != probe {
		sys(d.memFreeHost, host)
		return
	}
	r.seq = probe
	dv.poll = r
}

// freePoll releases the staging and any direct range still registered
// (teardown, on the owner; Close holds poll.mu, so no read is copying out
// of it).
func (dv *device) freePoll() {
	if r := dv.poll; r != nil && r.host != 0 {
		for _, h := range r.direct {
			sys(dv.d.memHostUnregister, h.p)
		}
		r.direct = nil
		sys(dv.d.memFreeHost, r.host)
		r.host, r.buf, r.flag = 0, nil, nil
	}
}

// Direct reads. A polled read copies the device's bytes into the pinned
// staging and then out into dst: 10 µs of one core for a 32k vocabulary's
// logits, every decode step, the device idle meanwhile. A caller that
// keeps one buffer for its reads (the session's logits row) registers it
// with PinHost (cuMemHostRegister: the driver page-locks it), and a read
// into it has the device copy straight there: no copy out. The buffer must
// stay alive and in place until UnpinHost (Go's heap does not move
// objects, and a live object's pages are never returned to the system).
// MINFER_CUDA_DIRECTREAD=0 makes PinHost fail, for comparisons.

// directReadOff reports MINFER_CUDA_DIRECTREAD=0.
func directReadOff() bool { return os.Getenv("MINFER_CUDA_DIRECTREAD") == "0" }

// errNoDirect: PinHost where reads are not polled, the driver lacks the
// register calls, or MINFER_CUDA_DIRECTREAD=0.
var errNoDirect = errors.New("cuda: no direct reads (no polled reads, no cuMemHostRegister, or MINFER_CUDA_DIRECTREAD=0)")

// PinHost registers p for direct reads (backend.HostPinner): a later read
// whose dst lies in p goes from the device into it.
func (b *Backend) PinHost(p []byte) error {
	pr, d := b.dv.poll, b.dv.d
	if pr == nil || len(p) == 0 || d.memHostRegister == 0 || d.memHostUnregister == 0 || directReadOff() {
		return errNoDirect
	}
	ptr := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	if err := b.dv.t.do(func() error {
		if err := b.alive(); err != nil {
			return err
		}
		return check("cuMemHostRegister", sys(d.memHostRegister, ptr, uintptr(len(p)), 0))
	}); err != nil {
		return err
	}
	pr.mu.Lock()
	pr.direct = append(pr.direct, hostRange{ptr, len(p)})
	pr.mu.Unlock()
	return nil
}

// UnpinHost unregisters p (PinHost's): once it returns no read goes into
// p, and p is plain memory again.
func (b *Backend) UnpinHost(p []byte) error {
	pr := b.dv.poll
	if pr == nil || len(p) == 0 {
		return errNoDirect
	}
	ptr := uintptr(unsafe.Pointer(unsafe.SliceData(p)))
	pr.mu.Lock()      // (no read in flight)
	if pr.host == 0 { // torn down: freePoll unregistered every range
		pr.mu.Unlock()
		return nil
	}
	i := slices.Index(pr.direct, hostRange{ptr, len(p)})
	if i >= 0 {
		pr.direct = slices.Delete(pr.direct, i, i+1)
	}
	pr.mu.Unlock()
	if i < 0 {
		return fmt.Errorf("cuda: UnpinHost of %d bytes that PinHost did not register", len(p))
	}
	return b.dv.t.do(func() error {
		return check("cuMemHostUnregister", sys(b.dv.d.memHostUnregister, ptr))
	})
}

// queuePolled puts the copy of n bytes at device address src into the
// read's target (the staging, or a direct read's dst) and the flag write
// of seq on the stream (owner thread).
func (dv *device) queuePolled(src uintptr, n int, seq uint32) error {
	r := dv.poll
	if r.host == 0 {
		return ErrClosed
	}
	if err := check("cuMemcpyDtoHAsync", sys(dv.d.memcpyDtoHAsync, r.target, src, uintptr(n), dv.stream)); err != nil {
		return err
	}
	const writeValueDefault = 0 // CU_STREAM_WRITE_VALUE_DEFAULT: fenced after what precedes it
	if err := check("cuStreamWriteValue32", sys(dv.d.streamWriteValue32, dv.stream, r.flagDev, uintptr(seq), writeValueDefault)); err != nil {
		return err
	}
	dv.in.pollQueued(seq)
	return nil
}

// pollHold is the owner's thread.hold: a caller is polling a read (and
// may offer half of its copy: ownerHelp).
func (dv *device) pollHold() bool {
	r := dv.poll
	if r == nil || !r.polling.Load() {
		return false
	}
	r.ownerHelp()
	return true
}
