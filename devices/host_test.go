package devices

import (
	"errors"
	"runtime"
	"strings"
	"testing"
)

// meminfoLinux618 is /proc/meminfo as read on a Linux 6.18 machine.
const meminfoLinux618 = `MemTotal:       24683620 kB
MemFree:        18237356 kB
MemAvailable:   18828384 kB
Buffers:            7872 kB
Cached:           756416 kB
SwapCached:            0 kB
Active:           404368 kB
Inactive:        5800056 kB
Active(anon):       1588 kB
Inactive(anon):  5447500 kB
Active(file):     402780 kB
Inactive(file):   352556 kB
Unevictable:       14200 kB
Mlocked:           13236 kB
SwapTotal:             0 kB
SwapFree:              0 kB
Zswap:                 0 kB
Zswapped:              0 kB
Dirty:             58400 kB
Writeback:            88 kB
AnonPages:       5454428 kB
Mapped:            33280 kB
Shmem:              8952 kB
KReclaimable:     124888 kB
Slab:             151384 kB
SReclaimable:     124888 kB
SUnreclaim:        26496 kB
KernelStack:        2208 kB
PageTables:        13308 kB
SecPageTables:         0 kB
NFS_Unstable:          0 kB
Bounce:                0 kB
WritebackTmp:          0 kB
CommitLimit:    12341808 kB
Committed_AS:   10694340 kB
VmallocTotal:   34359738367 kB
VmallocUsed:       14988 kB
VmallocChunk:          0 kB
Percpu:              712 kB
AnonHugePages:      8192 kB
ShmemHugePages:        0 kB
ShmemPmdMapped:        0 kB
FileHugePages:         0 kB
FilePmdMapped:         0 kB
Balloon:               0 kB
HugePages_Total:       0
HugePages_Free:        0
HugePages_Rsvd:        0
HugePages_Surp:        0
Hugepagesize:       2048 kB
Hugetlb:               0 kB
DirectMap4k:       28672 kB
DirectMap2M:    25137152 kB
`

// meminfoLinux310 is the head of /proc/meminfo in the layout of Linux 3.10,
// which predates MemAvailable.
const meminfoLinux310 = `MemTotal:        8009624 kB
MemFree:          302348 kB
Buffers:          186384 kB
Cached:          5713632 kB
SwapCached:         1508 kB
Active:          3934236 kB
Inactive:        3089932 kB
HugePages_Total:       0
Hugepagesize:       2048 kB
`

func TestParseMeminfo(t *testing.T) {
	got, err := parseMeminfo([]byte(meminfoLinux618))
	if err != nil {
		t.Fatal(err)
	}
	want := HostMem{Total: 24683620 << 10, Available: 18828384 << 10, Source: meminfoSource}
	if got != want {
		t.Errorf("parseMeminfo = %+v, want %+v", got, want)
	}
}

func TestParseMeminfoRejects(t *testing.T) {
	tests := []struct {
		name, text, problem string
	}{
		{"before Linux 3.14", meminfoLinux310, "no MemAvailable line (Linux older than 3.14)"},
		{"no MemTotal", "MemFree: 1 kB\nMemAvailable: 1 kB\n", "no MemTotal line"},
		{"empty", "", "no MemTotal line"},
		{"no unit", "MemTotal: 100\nMemAvailable: 50 kB\n", `line "MemTotal: 100": want "<number> kB"`},
		{"other unit", "MemTotal: 100 MB\nMemAvailable: 50 kB\n", `want "<number> kB"`},
		{"not a number", "MemTotal: 1 kB\nMemAvailable: x kB\n", `"x" is not a whole number`},
		{"too large", "MemTotal: 18014398509481984 kB\nMemAvailable: 1 kB\n", "does not fit in 64 bits"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := parseMeminfo([]byte(tt.text))
			if err == nil {
				t.Fatalf("parseMeminfo = %+v, want an error", got)
			}
			if !strings.Contains(err.Error(), tt.problem) {
				t.Errorf("error %q does not contain %q", err, tt.problem)
			}
		})
	}
	t.Run("missing field is ErrHostMemoryUnknown", func(t *testing.T) {
		if _, err := parseMeminfo([]byte(meminfoLinux310)); !errors.Is(err, ErrHostMemoryUnknown) {
			t.Errorf("error %v does not wrap ErrHostMemoryUnknown", err)
		}
	})
}

func FuzzParseMeminfo(f *testing.F) {
	f.Add([]byte(meminfoLinux618))
	f.Add([]byte(meminfoLinux310))
	f.Add([]byte("MemTotal: 1 kB\nMemAvailable: 2 kB"))
	f.Add([]byte("MemTotal:\nMemAvailable: kB kB\n"))
	f.Fuzz(func(t *testing.T, data []byte) {
		got, err := parseMeminfo(data)
		if err != nil {
			return
		}
		if got.Source != meminfoSource || got.Total%1024 != 0 || got.Available%1024 != 0 {
			t.Fatalf("parseMeminfo(%q) = %+v", data, got)
		}
	})
}

// TestHostMemory reads this machine's memory. Where the OS is supported it
// must answer; elsewhere it must say it does not know.
func TestHostMemory(t *testing.T) {
	got, err := HostMemory()
	switch runtime.GOOS {
	case "linux", "darwin", "windows":
		if err != nil {
			t.Fatalf("HostMemory: %v", err)
		}
		if got.Total == 0 || got.Available > got.Total || got.Source == "" {
			t.Errorf("HostMemory = %+v", got)
		}
		t.Log(got)
	default:
		if !errors.Is(err, ErrHostMemoryUnknown) {
			t.Errorf("HostMemory on %s = %+v, %v; want ErrHostMemoryUnknown", runtime.GOOS, got, err)
		}
	}
}
