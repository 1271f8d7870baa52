package cuda

import (
	"strings"
	"testing"
	"time"
)

func TestTraceMeans(t *testing.T) {
	for _, v := range []string{"", "0", "x", "-1"} {
		if parseTrace(v, nil) != nil {
			t.Errorf("MINFER_CUDA_TRACE=%q turned it on", v)
		}
	}
	if h := parseTrace("1", nil); h == nil || h.every != 1000 {
		t.Fatalf("MINFER_CUDA_TRACE=1: %+v", h)
	}
	var sb strings.Builder
	h := parseTrace("2", &sb)
	t0 := time.Unix(0, 0)
	at := func(us int) time.Time { return t0.Add(time.Duration(us) * time.Microsecond) }
	h.addPolled(4*time.Microsecond, 900*time.Microsecond, 20*time.Microsecond, false)
	h.addCompute(&computeTrace{call: at(0), preStart: at(10), preEnd: at(14), looked: at(15), end: at(25), replay: true}, at(27))
	if sb.Len() != 0 {
		t.Fatalf("printed before %d computes: %q", h.every, sb.String())
	}
	h.addCompute(&computeTrace{call: at(0), preStart: at(20), preEnd: at(24), looked: at(27), end: at(37)}, at(41))
	want := "cuda trace: 2 computes (1 replays), µs each: hand-off 15.0, inputs 4.0, lookup 2.0, launch 10.0, return 3.0 = 34.0; 1 polled reads (0 fell back), µs each: queue 4.0, wait 900.0, copy 20.0\n"
	if sb.String() != want {
		t.Fatalf("got  %q\nwant %q", sb.String(), want)
	}
	sb.Reset()
	h.close()
	if sb.Len() != 0 {
		t.Fatalf("close after a print with nothing new printed %q", sb.String())
	}
	h.addPlain(50 * time.Microsecond)
	h.close()
	if !strings.Contains(sb.String(), "1 plain reads, µs each 50.0") {
		t.Fatalf("plain read: %q", sb.String())
	}
}
