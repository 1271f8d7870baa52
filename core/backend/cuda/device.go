package cuda

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"time"
	"unsafe"
)

// device is one CUDA context with what the kernels need: a stream, the
// loaded modules and their functions, pinned host staging and a device
// workspace for quantized activations. All its fields are used on its
// thread only.
type device struct {
	d      *driverAPI
	t      *thread
	ord    int32
	ctx    uintptr
	stream uintptr
	mods   []uintptr
	fns    map[string]uintptr

	name             string
	ccMajor, ccMinor int
	drvVersion       int
	smemOptin        int
	sms              int      // multiprocessors
	pdl              bool     // programmatic dependent launch (pdl.go)
	twice            []string // kernel-name prefixes launched twice (twice.go; a measurement)

	// poll: the polled reads' staging (readpoll.go); nil: reads are plain.
	poll *pollReader
	// gate: the gated runs' words (gate.go); nil: none.
	gate *gate

	// pinned host staging: a ring the copies go through (its first
	// ringSize bytes), then the input block (inputs.go).
	pinned    uintptr
	pinnedBuf []byte
	ringOff   int
	in        inputBlock
	// htodHook, when set, stands in for cuMemcpyHtoDAsync (tests count
	// the copies without a device).
	htodHook func(dst, src uintptr, n int) error

	work     uintptr // device workspace (quantized activations)
	workSize int64   // its bytes the kernels may use from work on
	counters uintptr // the split attention's per-head counters (zeroed; the workspace's tail)
	// usedAt: attn_used's result (the cells in use of a mask), in the
	// usedBytes before the counters, out of the kernels' workspace.
	usedAt uintptr

	// memory measured around the setup (cuMemGetInfo).
	freeAfterCtx, freeAfterSetup, total uint64
}

const (
	pinnedSize    = 64 << 20
	workspaceSize = 64 << 20
	counterBytes  = 4096 // one uint32 per attention head (maxDecodeHeads), then normCounter
	usedBytes     = 256  // attn_used's word, on its own (aligned) span
)

// hostSlice views driver-allocated host memory as a byte slice.
func hostSlice(p uintptr, n int) []byte {
	return unsafe.Slice((*byte)(*(*unsafe.Pointer)(unsafe.Pointer(&p))), n)
}

// openDevice creates the context for device ordinal ord on a new locked
// thread and loads the kernels.
func openDevice(ord int32) (*device, error) {
	d, err := loadDriver()
	if err != nil {
		return nil, err
	}
	dv := &device{d: d, ord: ord, fns: map[string]uintptr{}}
	t, err := startThread(func() error { return dv.setup() }, dv.pollHold)
	if err != nil {
		return nil, err
	}
	dv.t = t
	return dv, nil
}

func (dv *device) setup() (err error) {
	d := dv.d
	defer func() {
		if err != nil {
			dv.teardown()
		}
	}()
	var n int32
	if err := check("cuDeviceGetCount", sys(d.deviceGetCount, uintptr(unsafe.Pointer(&n)))); err != nil {
		return err
	}
	if dv.ord >= n {
		return fmt.Errorf("cuda: device %d of %d: %w", dv.ord, n, ErrNoDevice)
	}
	var dev int32
	if err := check("cuDeviceGet", sys(d.deviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(dv.ord))); err != nil {
		return err
	}
	dv.name = d.deviceName(dev)
	if dv.ccMajor, err = d.attribute(attrComputeMajor, dev); err != nil {
		return err
	}
	if dv.ccMinor, err = d.attribute(attrComputeMinor, dev); err != nil {
		return err
	}
	if dv.smemOptin, err = d.attribute(attrMaxSharedPerBlock, dev); err != nil {
		return err
	}
	if dv.sms, err = d.attribute(attrMultiprocessors, dev); err != nil {
		return err
	}
	if dv.drvVersion, err = d.driverVersion(); err != nil {
		return err
	}
	if !computeOK(dv.ccMajor, dv.ccMinor) {
		return fmt.Errorf("cuda: %s has compute capability %d.%d; the kernels need 6.1 (dp4a): %w", dv.name, dv.ccMajor, dv.ccMinor, ErrNotSupported)
	}
	dv.pdl = pdlUsable(dv.ccMajor, d.launchKernelEx) && !pdlOff()
	dv.twice = twiceFromEnv()
	if err := check("cuDevicePrimaryCtxRetain", sys(d.primaryCtxRetain, uintptr(unsafe.Pointer(&dv.ctx)), uintptr(dev))); err != nil {
		return err
	}
	if err := check("cuCtxSetCurrent", sys(d.ctxSetCurrent, dv.ctx)); err != nil {
		return err
	}
	if dv.freeAfterCtx, dv.total, err = d.memInfo(); err != nil {
		return err
	}
	if err := check("cuStreamCreate", sys(d.streamCreate, uintptr(unsafe.Pointer(&dv.stream)), 1 /* non-blocking */)); err != nil {
		return err
	}
	names := make([]string, 0, len(ptxFiles))
	for name := range ptxFiles {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		text := ptxFiles[name]
		if dv.pdl {
			if text, err = pdlPTX(text); err != nil {
				return fmt.Errorf("%w (module %s)", err, name)
			}
		}
		src := append([]byte(text), 0)
		var mod uintptr
		if err := check("cuModuleLoadData("+name+")", sys(d.moduleLoadData, uintptr(unsafe.Pointer(&mod)), uintptr(unsafe.Pointer(&src[0])))); err != nil {
			return err
		}
		dv.mods = append(dv.mods, mod)
		for _, fn := range kernelNames(ptxFiles[name]) {
			cname := append([]byte(fn), 0)
			var f uintptr
			if err := check("cuModuleGetFunction("+fn+")", sys(d.moduleGetFunction, uintptr(unsafe.Pointer(&f)), mod, uintptr(unsafe.Pointer(&cname[0])))); err != nil {
				return err
			}
			dv.fns[fn] = f
		}
	}
	// Attention keeps its scores in shared memory, flash attention and the
	// pipelined mat-muls their tiles: allow the device's most.
	for fn, f := range dv.fns {
		if fn == "attention_f16" || fn == "attention_f32" || strings.HasPrefix(fn, "attn_x_values_") || strings.HasPrefix(fn, "attn_x_vals_") || strings.HasPrefix(fn, "attn_x_one_") || wantsLargeShared(fn) {
			const maxDynamicShared = 8 // CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES
			if err := check("cuFuncSetAttribute", sys(d.funcSetAttribute, f, maxDynamicShared, uintptr(dv.smemOptin-attentionStaticShared))); err != nil {
				return err
			}
		}
	}
	if err := check("cuMemAllocHost", sys(d.memAllocHost, uintptr(unsafe.Pointer(&dv.pinned)), pinnedSize)); err != nil {
		return err
	}
	dv.pinnedBuf = hostSlice(dv.pinned, pinnedSize)
	dv.setupPoll()
	dv.setupGate()
	if err := check("cuMemAlloc(workspace)", sys(d.memAlloc, uintptr(unsafe.Pointer(&dv.work)), workspaceSize)); err != nil {
		return err
	}
	// The workspace's last counterBytes hold the split attention's
	// per-head completion counters: zero now, and each use leaves them
	// zero; the usedBytes before them attn_used's result.
	dv.workSize = workspaceSize - counterBytes - usedBytes
	dv.usedAt = dv.work + uintptr(dv.workSize)
	dv.counters = dv.usedAt + usedBytes
	if err := dv.memset(dv.counters, counterBytes); err != nil {
		return err
	}
	if dv.freeAfterSetup, _, err = d.memInfo(); err != nil {
		return err
	}
	return nil
}

// attentionStaticShared is what the attention kernels declare statically
// (two 32-entry reduction arrays), kept out of the dynamic allowance.
const attentionStaticShared = 32*4 + 32*8

// kernelNames lists the .entry names of a PTX text.
func kernelNames(ptx string) []string {
	var out []string
	for _, line := range strings.Split(ptx, "\n") {
		line = strings.TrimSpace(line)
		i := strings.Index(line, ".entry ")
		if i < 0 {
			continue
		}
		name := strings.TrimSpace(line[i+len(".entry "):])
		if j := strings.IndexAny(name, "( "); j >= 0 {
			name = name[:j]
		}
		out = append(out, name)
	}
	return out
}

// teardown releases what setup created (on the owner thread).
func (dv *device) teardown() {
	d := dv.d
	if dv.work != 0 {
		sys(d.memFree, dv.work)
		dv.work = 0
	}
	dv.freePoll()
	dv.freeGate(dv.gate)
	if dv.pinned != 0 {
		sys(d.memFreeHost, dv.pinned)
		dv.pinned, dv.pinnedBuf = 0, nil
	}
	for _, m := range dv.mods {
		sys(d.moduleUnload, m)
	}
	dv.mods = nil
	if dv.stream != 0 {
		sys(d.streamDestroy, dv.stream)
		dv.stream = 0
	}
	if dv.ctx != 0 {
		var dev int32
		sys(d.deviceGet, uintptr(unsafe.Pointer(&dev)), uintptr(dv.ord))
		sys(d.primaryCtxRelease, uintptr(dev))
		dv.ctx = 0
	}
}

func (dv *device) sync() error {
	err := check("cuStreamSynchronize", sys(dv.d.streamSynchronize, dv.stream))
	dv.ringOff = 0
	dv.in.busy = false
	return err
}

// stage takes n bytes of the pinned ring, waiting for the stream when the
// ring is full (the copies queued from it have then finished).
func (dv *device) stage(n int) (uintptr, []byte, error) {
	if dv.ringOff+n > ringSize {
		if err := dv.sync(); err != nil {
			return 0, nil, err
		}
	}
	off := dv.ringOff
	dv.ringOff = (off + n + 255) &^ 255
	return dv.pinned + uintptr(off), dv.pinnedBuf[off : off+n], nil
}

// upload copies src to device address dst through the pinned ring; it
// returns once src may be reused (the copies may still be in flight).
func (dv *device) upload(dst uintptr, src []byte) error {
	for len(src) > 0 {
		n := min(len(src), ringSize/2)
		p, buf, err := dv.stage(n)
		if err != nil {
			return err
		}
		copy(buf, src[:n])
		if err := dv.htod(dst, p, n); err != nil {
			return err
		}
		src, dst = src[n:], dst+uintptr(n)
	}
	return nil
}

// download copies device bytes at src into dst after the queued work.
// With wc set, it adds the time spent waiting for the stream (wc[0]) and
// copying out of the staging (wc[1]).
func (dv *device) download(dst []byte, src uintptr, wc *[2]time.Duration) error {
	for len(dst) > 0 {
		n := min(len(dst), ringSize/2)
		p, buf, err := dv.stage(n)
		if err != nil {
			return err
		}
		if err := check("cuMemcpyDtoHAsync", sys(dv.d.memcpyDtoHAsync, p, src, uintptr(n), dv.stream)); err != nil {
			return err
		}
		var t0 time.Time
		if wc != nil {
			t0 = time.Now()
		}
		if err := dv.sync(); err != nil {
			return err
		}
		if wc != nil {
			t1 := time.Now()
			wc[0] += t1.Sub(t0)
			copy(dst[:n], buf)
			wc[1] += time.Since(t1)
		} else {
			copy(dst[:n], buf)
		}
		dst, src = dst[n:], src+uintptr(n)
	}
	return nil
}

func (dv *device) memset(p uintptr, n int64) error {
	return check("cuMemsetD8Async", sys(dv.d.memsetD8Async, p, 0, uintptr(n), dv.stream))
}

// launcher packs kernel arguments: each value in its own 8-byte slot, and
// the pointer array cuLaunchKernel reads. Reused across launches.
type launcher struct {
	slots []uint64
	ptrs  []uintptr
	// counts, when not nil, counts the launches of each kernel (tests:
	// which mat-vec family ran).
	counts map[string]int
	// cfg: cuLaunchKernelEx's configuration (PDL launches).
	cfg cuLaunchConfig
	// launched counts the launches (Backend.encodeStart: this Compute's).
	launched uint64
}

func (l *launcher) reset(n int) {
	if cap(l.slots) < n {
		l.slots = make([]uint64, n)
		l.ptrs = make([]uintptr, n)
	}
	l.slots, l.ptrs = l.slots[:n], l.ptrs[:n]
}

// arg kinds accepted by launch.
type (
	i32 = int32
	i64 = int64
	f32 = float32
	ptr = uintptr
)

func (dv *device) launch(l *launcher, fn string, grid, block [3]uint32, smem uint32, args ...any) error {
	f, ok := dv.fns[fn]
	if !ok {
		return fmt.Errorf("cuda: no kernel %q in the embedded PTX", fn)
	}
	l.reset(len(args))
	l.launched++
	if l.counts != nil {
		l.counts[fn]++
	}
	for i, a := range args {
		switch v := a.(type) {
		case int32:
			*(*int32)(unsafe.Pointer(&l.slots[i])) = v
		case int64:
			*(*int64)(unsafe.Pointer(&l.slots[i])) = v
		case float32:
			*(*float32)(unsafe.Pointer(&l.slots[i])) = v
		case uintptr:
			*(*uintptr)(unsafe.Pointer(&l.slots[i])) = v
		default:
			// reflect.TypeOf, not %T: handing a to fmt would make every
			// boxed argument escape, one allocation each per launch.
			return fmt.Errorf("cuda: kernel %s: argument %d of type %s", fn, i, reflect.TypeOf(a))
		}
		l.ptrs[i] = uintptr(unsafe.Pointer(&l.slots[i]))
	}
	var params uintptr
	if len(args) > 0 {
		params = uintptr(unsafe.Pointer(&l.ptrs[0]))
	}
	r := dv.launchPacked(l, f, grid, block, smem, params)
	if int32(r) == 0 && len(dv.twice) > 0 && launchTwice(dv.twice, fn) {
		r = dv.launchPacked(l, f, grid, block, smem, params)
	}
	if int32(r) == 0 {
		return nil // the call's name is built only on failure: this runs per kernel
	}
	return check("cuLaunchKernel("+fn+")", r)
}

// launchPacked issues one launch of f with the packed params.
func (dv *device) launchPacked(l *launcher, f uintptr, grid, block [3]uint32, smem uint32, params uintptr) uintptr {
	var r uintptr
	if dv.pdl {
		l.cfg = cuLaunchConfig{gridX: grid[0], gridY: grid[1], gridZ: grid[2], blockX: block[0], blockY: block[1], blockZ: block[2],
			smem: smem, stream: dv.stream, attrs: uintptr(unsafe.Pointer(pdlAttr)), nattrs: 1}
		r = sys(dv.d.launchKernelEx, uintptr(unsafe.Pointer(&l.cfg)), f, params, 0)
	} else {
		r = sys(dv.d.launchKernel, f, uintptr(grid[0]), uintptr(grid[1]), uintptr(grid[2]),
			uintptr(block[0]), uintptr(block[1]), uintptr(block[2]), uintptr(smem), dv.stream, params, 0)
	}
	return r
}
