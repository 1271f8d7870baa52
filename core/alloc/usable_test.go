package alloc

import (
	"fmt"
	"math"
	"testing"

	"github.com/minfer/minfer/devices"
)

func TestUsableHoldsBackAQuarter(t *testing.T) {
	cases := []struct {
		free, want uint64
	}{
		{0, 0},
		{1, 1}, // a quarter of 1 byte rounds down to nothing held back
		{3, 3},
		{4, 3},
		{5, 4},
		{7, 6},
		{8, 6},
		{10240 << 20, 7680 << 20},
		{143155 << 20, 143155<<20 - (143155<<20)/4},
		{math.MaxUint64, math.MaxUint64 - math.MaxUint64/4}, // no overflow, unlike free*3/4
	}
	for _, c := range cases {
		t.Run(fmt.Sprint(c.free), func(t *testing.T) {
			got := Usable(c.free)
			if got != c.want {
				t.Fatalf("Usable(%d) = %d, want %d", c.free, got, c.want)
			}
			if held := c.free - got; held != c.free/4 {
				t.Fatalf("Usable(%d) held back %d, want a quarter rounded down (%d)", c.free, held, c.free/4)
			}
		})
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
			if b.Limited && b.Bytes != 100+int64(Usable(c.hm.Available)) {
				t.Fatalf("HostBudget %d is not the weights plus Usable(%d)", b.Bytes, c.hm.Available)
			}
		})
	}
}
