package devices

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestParseFakeDevice(t *testing.T) {
	const mi = 1 << 20
	tests := []struct {
		name  string
		value string
		want  DeviceMemory
	}{
		{"reported", "reported:free=8192,total=16384",
			Reported{Kind: KindFake, Name: FakeDeviceEnv, Free: 8192 * mi, Total: 16384 * mi, Used: 8192 * mi}},
		{"reported with name", "reported:free=1,total=2,name=RTX 4090 (bug #12)",
			Reported{Kind: KindFake, Name: "RTX 4090 (bug #12)", Free: mi, Total: 2 * mi, Used: mi}},
		{"reported keys in any order, spaces trimmed", " reported: total = 10 , free = 0 ",
			Reported{Kind: KindFake, Name: FakeDeviceEnv, Free: 0, Total: 10 * mi, Used: 10 * mi}},
		{"reported full", "reported:free=100,total=100",
			Reported{Kind: KindFake, Name: FakeDeviceEnv, Free: 100 * mi, Total: 100 * mi}},
		{"reported largest", "reported:free=0,total=" + strconv.FormatUint(maxMiB, 10),
			Reported{Kind: KindFake, Name: FakeDeviceEnv, Total: maxMiB * mi, Used: maxMiB * mi}},
		{"failed", "failed:ERROR_NO_PERMISSION",
			QueryFailed{Err: &QueryError{Source: FakeDeviceEnv, Name: "ERROR_NO_PERMISSION"}}},
		{"failed keeps any name", "failed:cuMemGetInfo: CUDA_ERROR_OUT_OF_MEMORY",
			QueryFailed{Err: &QueryError{Source: FakeDeviceEnv, Name: "cuMemGetInfo: CUDA_ERROR_OUT_OF_MEMORY"}}},
		{"none", "none", NoDevice{Reason: "MINFER_FAKE_DEVICE=none"}},
		{"none with reason", "none:driver removed", NoDevice{Reason: "driver removed"}},
		{"none with empty reason", "none:", NoDevice{Reason: "MINFER_FAKE_DEVICE=none"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseFakeDevice(tt.value)
			if err != nil {
				t.Fatalf("ParseFakeDevice(%q): %v", tt.value, err)
			}
			if got.String() != tt.want.String() {
				t.Errorf("ParseFakeDevice(%q) = %v, want %v", tt.value, got, tt.want)
			}
			if r, ok := tt.want.(Reported); ok && got.(Reported) != r {
				t.Errorf("ParseFakeDevice(%q) = %#v, want %#v", tt.value, got, r)
			}
		})
	}
}

func TestParseFakeDeviceRejects(t *testing.T) {
	tests := []struct {
		name    string
		value   string
		problem string // part of the message that says what is wrong
	}{
		{"empty", "", "empty"},
		{"unknown kind", "reportd:free=1,total=2", `unknown kind "reportd"`},
		{"capitalised kind", "Reported:free=1,total=2", `unknown kind "Reported"`},
		{"reported without fields", "reported", "needs free= and total="},
		{"missing total", "reported:free=8192", "missing total="},
		{"missing free", "reported:total=8192", "missing free="},
		{"free over total", "reported:free=16384,total=8192", "free 16384 MiB is more than total 8192 MiB"},
		{"zero total", "reported:free=0,total=0", "total=0"},
		{"non-numeric", "reported:free=lots,total=8192", `free="lots" is not a whole number`},
		{"negative", "reported:free=-1,total=8192", `free="-1" is not a whole number`},
		{"fraction", "reported:free=1.5,total=8192", `free="1.5" is not a whole number`},
		{"with unit", "reported:free=8GiB,total=16GiB", `free="8GiB" is not a whole number`},
		{"overflows bytes", "reported:free=1,total=" + strconv.FormatUint(maxMiB+1, 10), "is not a whole number of MiB up to"},
		{"duplicate key", "reported:free=1,free=2,total=3", "free= given twice"},
		{"unknown key", "reported:free=1,total=2,vram=3", `unknown key "vram"`},
		{"field without =", "reported:free=1,total=2,fast", `field "fast" is not key=value`},
		{"trailing comma", "reported:free=1,total=2,", `field "" is not key=value`},
		{"empty name", "reported:free=1,total=2,name=", "name= is empty"},
		{"failed without name", "failed:", "failed needs an error name"},
		{"failed without colon", "failed", "failed needs an error name"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := ParseFakeDevice(tt.value)
			if err == nil {
				t.Fatalf("ParseFakeDevice(%q) = %v, want an error", tt.value, got)
			}
			if !errors.Is(err, ErrBadFakeDevice) {
				t.Errorf("error %q does not wrap ErrBadFakeDevice", err)
			}
			for _, part := range []string{strconv.Quote(tt.value), tt.problem} {
				if !strings.Contains(err.Error(), part) {
					t.Errorf("error %q does not contain %q", err, part)
				}
			}
		})
	}
}

func TestFakeFromEnv(t *testing.T) {
	t.Run("unset", func(t *testing.T) {
		t.Setenv(FakeDeviceEnv, "") // restores the outer value afterwards
		if _, set, err := FakeFromEnv(); set || err != nil {
			t.Errorf("empty %s: set=%v err=%v, want not set", FakeDeviceEnv, set, err)
		}
	})
	t.Run("set", func(t *testing.T) {
		t.Setenv(FakeDeviceEnv, "none:test")
		dm, set, err := FakeFromEnv()
		if !set || err != nil || dm != (NoDevice{Reason: "test"}) {
			t.Errorf("FakeFromEnv() = %v, %v, %v; want NoDevice{test}, true, nil", dm, set, err)
		}
	})
	t.Run("malformed", func(t *testing.T) {
		t.Setenv(FakeDeviceEnv, "reported:free=1")
		if _, set, err := FakeFromEnv(); !set || !errors.Is(err, ErrBadFakeDevice) {
			t.Errorf("FakeFromEnv() set=%v err=%v; want set and ErrBadFakeDevice", set, err)
		}
	})
}

func FuzzParseFakeDevice(f *testing.F) {
	for _, seed := range []string{
		"reported:free=8192,total=16384", "reported:free=1,total=2,name=x", "failed:ERROR_NO_PERMISSION",
		"none", "none:why", "reported:free=9,total=8", "reported:total=18446744073709551615,free=0", "", ":",
		"reported:,", "reported:free==1,total=2",
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, value string) {
		dm, err := ParseFakeDevice(value)
		if err != nil {
			if !errors.Is(err, ErrBadFakeDevice) || !strings.Contains(err.Error(), strconv.Quote(value)) {
				t.Fatalf("error %q must wrap ErrBadFakeDevice and quote the value", err)
			}
			return
		}
		switch m := dm.(type) {
		case Reported:
			if m.Total == 0 || m.Free > m.Total || m.Used != m.Total-m.Free || m.Kind != KindFake || m.Name == "" {
				t.Fatalf("ParseFakeDevice(%q) = %#v breaks Reported's invariants", value, m)
			}
		case QueryFailed:
			if qe, ok := errors.AsType[*QueryError](m.Err); !ok || qe.Name == "" {
				t.Fatalf("ParseFakeDevice(%q) = %#v, want a named QueryError", value, m)
			}
		case NoDevice:
			if m.Reason == "" {
				t.Fatalf("ParseFakeDevice(%q) gave NoDevice without a reason", value)
			}
		default:
			t.Fatalf("ParseFakeDevice(%q) = %T", value, dm)
		}
	})
}
