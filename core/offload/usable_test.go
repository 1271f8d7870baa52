package offload

import (
	"fmt"
	"math"
	"testing"
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
