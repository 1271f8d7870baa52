package alloc

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/devices"
)

// fakeBuffers records every call the allocator makes of a backend.
type fakeBuffers struct {
	name    string
	next    BufID
	allocs  []int64
	frees   int
	weights int64
}

func (f *fakeBuffers) Name() string { return f.name }
func (f *fakeBuffers) AllocBuffer(n int64) (BufID, error) {
	f.next++
	f.allocs = append(f.allocs, n)
	return f.next, nil
}
func (f *fakeBuffers) FreeBuffer(BufID) error { f.frees++; return nil }
func (f *fakeBuffers) WeightsBytes() int64    { return f.weights }

const MiB_ = 1 << 20

func TestClassLadderPowersOfTwoThen16KiBSteps(t *testing.T) {
	for _, c := range []struct{ n, want int64 }{
		{1, 1}, {2, 2}, {3, 4}, {5, 8}, {1000, 1024}, {1025, 2048}, {16383, 16384}, {16384, 16384},
		{16385, 32768}, {32768, 32768}, {32769, 49152}, {100000, 114688}, {1 << 20, 1 << 20}, {1<<20 + 1, 1<<20 + 16384},
	} {
		if got := ClassSize(c.n); got != c.want {
			t.Errorf("ClassSize(%d) = %d, want %d", c.n, got, c.want)
		}
	}
	// Above 16 KiB every class is a multiple of 16 KiB and within one step.
	for n := int64(16385); n < 1<<22; n += 7919 {
		c := ClassSize(n)
		if c%16384 != 0 || c < n || c-n >= 16384 {
			t.Fatalf("ClassSize(%d) = %d", n, c)
		}
	}
}

func TestTwoShapesInOneClassShareABufferAcrossRebuild(t *testing.T) {
	fb := &fakeBuffers{name: "CPU"}
	a := NewGraphAllocator()
	a.AddBackend(fb, Unlimited("test"))
	r1, err := a.AllocInPool(0, 3000) // class 4096
	if err != nil {
		t.Fatal(err)
	}
	a.Release(r1)
	r2, err := a.AllocInPool(0, 4000) // another shape, same class
	if err != nil {
		t.Fatal(err)
	}
	if r2.ID != r1.ID || len(fb.allocs) != 1 {
		t.Errorf("second shape got buffer %d (first %d), %d backend allocations", r2.ID, r1.ID, len(fb.allocs))
	}
	if r1.Len != 3000 || r2.Len != 4000 || r2.Class != 4096 {
		t.Errorf("refs %+v %+v: Len must stay the logical length", r1, r2)
	}
}

func TestAllocInPoolChecksBudgetBeforeAskingThePool(t *testing.T) {
	fb := &fakeBuffers{name: "CUDA0", weights: 600 * MiB_}
	a := NewGraphAllocator()
	a.AddBackend(fb, Limit(1024*MiB_, "test"))
	if _, err := a.AllocInPool(0, 300*MiB_); err != nil {
		t.Fatal(err)
	}
	_, err := a.AllocInPool(0, 200*MiB_)
	var r *Refusal
	if !errors.As(err, &r) || !errors.Is(err, ErrRefused) {
		t.Fatalf("got %v, want a *Refusal", err)
	}
	if len(fb.allocs) != 1 {
		t.Errorf("the backend was asked %d times; the refused request must not reach it", len(fb.allocs))
	}
	want := "weights 600 MiB + pooled 300 MiB + request 200 MiB > budget 1024 MiB"
	if !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "CUDA0") {
		t.Errorf("refusal %q does not name %q", err, want)
	}
	if r.Weights != 600*MiB_ || r.Pooled != 300*MiB_ || r.Request != ClassSize(200*MiB_) || r.Budget != 1024*MiB_ {
		t.Errorf("refusal numbers %+v", r)
	}
	// Staging and persistent regions pass the same gate.
	if _, err := a.AllocStaging(0, 200*MiB_); !errors.Is(err, ErrRefused) {
		t.Errorf("staging over budget: %v", err)
	}
	if _, err := a.AllocPersistent(0, 200*MiB_, "KV"); !errors.Is(err, ErrRefused) {
		t.Errorf("persistent over budget: %v", err)
	}
}

func TestBudgetDecision(t *testing.T) {
	free := uint64(10240 * MiB_)
	cases := []struct {
		name    string
		dm      devices.DeviceMemory
		limited bool
		bytes   int64
		warn    string
	}{
		{"reported holds back a quarter", devices.Reported{Name: "GPU", Free: free, Total: 2 * free}, true, int64(free - free/4), ""},
		{"measured zero refuses", devices.Reported{Name: "GPU", Free: 0, Total: free}, true, 0, ""},
		{"failed query is not a zero budget", devices.QueryFailed{Err: errors.New("ERROR_NO_PERMISSION")}, false, 0, "ERROR_NO_PERMISSION"},
		{"no device holds nothing", devices.NoDevice{Reason: "none"}, true, 0, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := BudgetDecision(c.dm)
			if b.Limited != c.limited || b.Bytes != c.bytes || !strings.Contains(b.Warning, c.warn) {
				t.Errorf("got %+v", b)
			}
		})
	}
}

func TestMeasuredZeroRefusesEveryRequest(t *testing.T) {
	a := NewGraphAllocator()
	a.AddBackend(&fakeBuffers{name: "GPU"}, BudgetDecision(devices.Reported{Name: "GPU", Free: 0, Total: 1 << 30}))
	if _, err := a.AllocInPool(0, 1); !errors.Is(err, ErrRefused) {
		t.Errorf("got %v, want a refusal", err)
	}
}

func TestFailedQueryPrintsTheRealErrorOnceAndChargesWeights(t *testing.T) {
	fb := &fakeBuffers{name: "CUDA0", weights: 5 << 30}
	a := NewGraphAllocator()
	var logged []string
	a.Logf = func(f string, args ...any) { logged = append(logged, fmt.Sprintf(f, args...)) }
	a.AddBackend(fb, BudgetDecision(devices.QueryFailed{Err: errors.New("nvml: ERROR_NO_PERMISSION")}))
	for i := 0; i < 5; i++ {
		if _, err := a.AllocInPool(0, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	if len(logged) != 1 || !strings.Contains(logged[0], "ERROR_NO_PERMISSION") {
		t.Errorf("logged %q, want the real error once", logged)
	}
	if r := a.MemoryReport(0); r.WeightsBytes != 5<<30 || r.HeadroomBytes() != -1 {
		t.Errorf("report %+v: weights must be charged, headroom unlimited", r)
	}
}

func TestCPUUnboundedUnlessSetMemoryBudget(t *testing.T) {
	a := NewGraphAllocator()
	a.AddBackend(&fakeBuffers{name: "CPU"}, Unlimited("cpu"))
	if _, err := a.AllocInPool(0, 1<<40); err != nil {
		t.Fatalf("unbounded CPU refused: %v", err)
	}
	a.SetMemoryBudget(0, Limit(1<<20, "test"))
	if _, err := a.AllocInPool(0, 2<<20); !errors.Is(err, ErrRefused) {
		t.Errorf("after SetMemoryBudget: %v", err)
	}
}

func TestMemoryReportPoolGrowsOnlyWhenThePoolCreatesABuffer(t *testing.T) {
	fb := &fakeBuffers{name: "CPU", weights: 123}
	a := NewGraphAllocator()
	a.AddBackend(fb, Limit(1<<30, "test"))
	r1, _ := a.AllocInPool(0, 5000)
	r2, _ := a.AllocInPool(0, 5000)
	rep := a.MemoryReport(0)
	if rep.PoolBytes != 16384 || rep.LiveBytes != 16384 || a.PoolLen(0, 8192) != 2 {
		t.Fatalf("report %+v, pool len %d", rep, a.PoolLen(0, 8192))
	}
	a.Release(r1)
	a.Release(r2)
	for i := 0; i < 4; i++ { // recycled: not charged again
		r, _ := a.AllocInPool(0, 6000)
		a.Release(r)
	}
	rep = a.MemoryReport(0)
	want := MemoryReport{Backend: "CPU", PoolBytes: 16384, LiveBytes: 0, PeakLiveBytes: 16384, WeightsBytes: 123,
		Budget: Limit(1<<30, "test"), IdleSlots: 2, ReservedClasses: 1, AllocCount: 2}
	if rep != want {
		t.Errorf("report\n %+v\nwant\n %+v", rep, want)
	}
	if got := rep.HeadroomBytes(); got != 1<<30-123-16384 {
		t.Errorf("headroom %d", got)
	}
	if a.PoolLen(0, 8192) != 2 {
		t.Errorf("pool len %d after recycling", a.PoolLen(0, 8192))
	}
}

func TestReservationTakesTheSmallestIdleSlotFirst(t *testing.T) {
	fb := &fakeBuffers{name: "CPU"}
	a := NewGraphAllocator()
	a.AddBackend(fb, Unlimited("test"))
	var refs []BufRef
	for i := 0; i < 4; i++ {
		r, _ := a.AllocInPool(0, 1000)
		refs = append(refs, r)
	}
	// Release in a scrambled order; the next takes the smallest id, not the
	// most recently released (a LIFO list would move a rebuilt graph's slots).
	a.Release(refs[2])
	a.Release(refs[0])
	a.Release(refs[3])
	r, _ := a.AllocInPool(0, 1000)
	if r.ID != refs[0].ID {
		t.Errorf("got slot %d, want the smallest idle %d", r.ID, refs[0].ID)
	}
	r, _ = a.AllocInPool(0, 1000)
	if r.ID != refs[2].ID {
		t.Errorf("got slot %d, want %d", r.ID, refs[2].ID)
	}
}

func TestStagingChargedToPoolAtExactSize(t *testing.T) {
	fb := &fakeBuffers{name: "CUDA0"}
	a := NewGraphAllocator()
	a.AddBackend(fb, Unlimited("test"))
	r, err := a.AllocStaging(0, 12345)
	if err != nil {
		t.Fatal(err)
	}
	if fb.allocs[0] != 12345 || a.MemoryReport(0).PoolBytes != 12345 {
		t.Errorf("staging allocated %v, pool %d: want exact 12345 charged", fb.allocs, a.MemoryReport(0).PoolBytes)
	}
	a.Release(r)
	if _, err := a.AllocStaging(0, 12345); err != nil || len(fb.allocs) != 1 {
		t.Errorf("idle staging buffer of the same size not reused: %v, %d allocations", err, len(fb.allocs))
	}
}

func TestCloseFreesEverything(t *testing.T) {
	fb := &fakeBuffers{name: "CPU"}
	a := NewGraphAllocator()
	a.AddBackend(fb, Unlimited("test"))
	a.AllocInPool(0, 10)
	a.AllocStaging(0, 10)
	p, _ := a.AllocPersistent(0, 10, "kv")
	if err := a.FreePersistent(p); err != nil {
		t.Fatal(err)
	}
	a.AllocPersistent(0, 10, "kv")
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	if fb.frees != 4 || a.MemoryReport(0).PoolBytes != 0 {
		t.Errorf("%d frees, pool %d", fb.frees, a.MemoryReport(0).PoolBytes)
	}
}

func TestHostBudgetIsMappedWeightsPlusThreeQuartersOfAvailable(t *testing.T) {
	cases := []struct {
		name    string
		hm      devices.HostMem
		err     error
		limited bool
		bytes   int64
	}{
		{"available memory", devices.HostMem{Total: 8 << 30, Available: 4 << 30}, nil, true, 100 + 3<<30},
		{"odd byte count holds back the quarter rounded down", devices.HostMem{Available: 7}, nil, true, 100 + 6},
		{"unknown host memory sets no limit", devices.HostMem{}, devices.ErrHostMemoryUnknown, false, 0},
		{"nothing available is an unmeasured answer", devices.HostMem{Total: 1 << 30}, nil, false, 0},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			b := HostBudget(100, c.hm, c.err)
			if b.Limited != c.limited || b.Bytes != c.bytes {
				t.Fatalf("HostBudget = %+v, want limited=%v bytes=%d", b, c.limited, c.bytes)
			}
			if b.Limited && b.Bytes != 100+int64(offload.Usable(c.hm.Available)) {
				t.Fatalf("HostBudget %d is not the weights plus offload.Usable(%d)", b.Bytes, c.hm.Available)
			}
		})
	}
}

// TestReacquire: idle pool and staging buffers are taken back as their
// allocations gave them (busy, live bytes counted, Gen moved); a list with
// one buffer still busy, or unknown, is refused and changes nothing.
func TestReacquire(t *testing.T) {
	a := NewGraphAllocator()
	a.AddBackend(&fakeBuffers{name: "CPU"}, Unlimited("test"))
	p1, err := a.AllocInPool(0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := a.AllocInPool(0, 5000)
	if err != nil {
		t.Fatal(err)
	}
	st, err := a.AllocStaging(0, 777)
	if err != nil {
		t.Fatal(err)
	}
	live := a.MemoryReport(0).LiveBytes
	a.Release(p1)
	a.Release(st)
	g := a.Gen()
	if a.Reacquire([]BufRef{p1, p2}) {
		t.Fatal("took back a buffer that is still busy")
	}
	if a.Gen() != g || a.MemoryReport(0).LiveBytes != live-p1.Class-777 {
		t.Fatalf("a refused Reacquire changed the pools (gen %d→%d)", g, a.Gen())
	}
	if a.Reacquire([]BufRef{{Backend: 0, ID: 999, Class: p1.Class, Len: 4}}) {
		t.Fatal("took back an unknown buffer")
	}
	if !a.Reacquire([]BufRef{p1, st}) {
		t.Fatal("idle buffers refused")
	}
	if a.Gen() == g || a.MemoryReport(0).LiveBytes != live {
		t.Fatalf("after Reacquire: gen %d (was %d), live %d, want %d", a.Gen(), g, a.MemoryReport(0).LiveBytes, live)
	}
	// Busy again: a new request gets another buffer, not p1's.
	p3, err := a.AllocInPool(0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	if p3.ID == p1.ID {
		t.Fatal("AllocInPool handed out a reacquired buffer")
	}
}
