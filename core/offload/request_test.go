package offload

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/minfer/minfer/devices"
)

// envOf is a fixed environment for ParseRequest/WeightBudget.
func envOf(vars map[string]string) func(string) (string, bool) {
	return func(k string) (string, bool) {
		v, ok := vars[k]
		return v, ok
	}
}

func TestRequestFlagWinsOverEnvAndUnsetIsAuto(t *testing.T) {
	cases := []struct {
		name      string
		flagValue string
		flagSet   bool
		env       map[string]string
		want      Request
	}{
		{"neither set is auto", "", false, nil, Request{Auto: true, Source: SourceDefault}},
		{"nil env is auto", "", false, nil, Request{Auto: true, Source: SourceDefault}},
		{"env count", "", false, map[string]string{SourceEnv: "12"}, Request{Layers: 12, Source: SourceEnv}},
		{"env auto", "", false, map[string]string{SourceEnv: "AUTO"}, Request{Auto: true, Source: SourceEnv}},
		{"flag count beats env", "3", true, map[string]string{SourceEnv: "12"}, Request{Layers: 3, Source: SourceFlag}},
		{"flag beats malformed env", "3", true, map[string]string{SourceEnv: "lots"}, Request{Layers: 3, Source: SourceFlag}},
		{"flag auto beats env count", "auto", true, map[string]string{SourceEnv: "12"}, Request{Auto: true, Source: SourceFlag}},
		{"flag zero is CPU only", "0", true, nil, Request{Layers: 0, Source: SourceFlag}},
		{"mixed-case auto", "Auto", true, nil, Request{Auto: true, Source: SourceFlag}},
		{"surrounding blanks ignored", " \t7 ", true, nil, Request{Layers: 7, Source: SourceFlag}},
		{"blanks around auto ignored", " auto ", false, map[string]string{SourceEnv: " auto "}, Request{Auto: true, Source: SourceEnv}},
		{"leading zeros are still a count", "007", true, nil, Request{Layers: 7, Source: SourceFlag}},
		{"huge count parses, Resolve clamps", "1000000", true, nil, Request{Layers: 1000000, Source: SourceFlag}},
		{"unrelated env ignored", "", false, map[string]string{"MINFER_GPU_MEM": "4096"}, Request{Auto: true, Source: SourceDefault}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			var env func(string) (string, bool)
			if c.env != nil {
				env = envOf(c.env)
			}
			got, err := ParseRequest(c.flagValue, c.flagSet, env)
			if err != nil {
				t.Fatalf("ParseRequest(%q, %v, %v): %v", c.flagValue, c.flagSet, c.env, err)
			}
			if got != c.want {
				t.Fatalf("ParseRequest(%q, %v, %v) = %+v, want %+v", c.flagValue, c.flagSet, c.env, got, c.want)
			}
		})
	}
}

func TestRequestRejectsBadSpellingQuotingValue(t *testing.T) {
	bad := []string{"-1", "1.5", "all", "", " ", "0x10", "+3", "lots", "1e3", "12 blocks", "9223372036854775808", "99999999999999999999", "３", "auto!", "au to"}
	for _, source := range []string{SourceFlag, SourceEnv} {
		for _, v := range bad {
			t.Run(fmt.Sprintf("%s=%q", source, v), func(t *testing.T) {
				var got Request
				var err error
				if source == SourceFlag {
					got, err = ParseRequest(v, true, nil)
				} else {
					got, err = ParseRequest("", false, envOf(map[string]string{SourceEnv: v}))
				}
				if err == nil {
					t.Fatalf("accepted %q as %+v; a spelling that is not a block count must refuse the load", v, got)
				}
				if !errors.Is(err, ErrBadRequest) {
					t.Errorf("error %v does not wrap ErrBadRequest", err)
				}
				var re *RequestError
				if !errors.As(err, &re) || re.Source != source || re.Value != v {
					t.Fatalf("error %#v is not a *RequestError{Source: %q, Value: %q}", err, source, v)
				}
				want := fmt.Sprintf(`offload: %s=%q is not a block count (use a number 0..N or "auto")`, source, v)
				if err.Error() != want {
					t.Fatalf("message\n got %s\nwant %s", err, want)
				}
			})
		}
	}
}

func TestRequestErrorMessageExample(t *testing.T) {
	_, err := ParseRequest("", false, envOf(map[string]string{SourceEnv: "lots"}))
	want := `offload: MINFER_GPU_LAYERS="lots" is not a block count (use a number 0..N or "auto")`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v, want %s", err, want)
	}
}

func TestResolveAutoTakesFitAndClampsExplicitCount(t *testing.T) {
	const n = 22
	cases := []struct {
		name     string
		req      Request
		fit      int
		want     Plan
		wantNote string
	}{
		{"auto takes the fit", Request{Auto: true, Source: SourceDefault}, 18, Plan{18, n}, ""},
		{"auto fitting everything keeps output", Request{Auto: true, Source: SourceDefault}, n + 1, Plan{n + 1, n}, ""},
		{"auto fitting nothing is CPU only", Request{Auto: true, Source: SourceEnv}, 0, Plan{0, n}, ""},
		{"explicit count ignores the fit", Request{Layers: 5, Source: SourceFlag}, 18, Plan{5, n}, ""},
		{"explicit count may exceed the fit", Request{Layers: 20, Source: SourceFlag}, 3, Plan{20, n}, ""},
		{"explicit n keeps output on CPU", Request{Layers: n, Source: SourceFlag}, 0, Plan{n, n}, ""},
		{"explicit n+1 is all + output", Request{Layers: n + 1, Source: SourceFlag}, 0, Plan{n + 1, n}, ""},
		{"explicit above n+1 clamps with a note", Request{Layers: 99, Source: SourceEnv}, 0, Plan{n + 1, n},
			"offload: MINFER_GPU_LAYERS=99 is more than the model's 22 blocks + output; using 23 (all blocks + output)"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got, note := c.req.Resolve(n, c.fit)
			if got != c.want || note != c.wantNote {
				t.Fatalf("%+v.Resolve(%d, %d) = (%+v, %q), want (%+v, %q)", c.req, n, c.fit, got, note, c.want, c.wantNote)
			}
		})
	}
}

func TestFailedQueryRefusesAutoNamingError(t *testing.T) {
	nvmlErr := &devices.QueryError{Source: "NVML", Call: "nvmlDeviceGetMemoryInfo_v2", Target: "GPU 0", Name: "ERROR_NO_PERMISSION"}
	_, budgetErr := WeightBudget(devices.QueryFailed{Err: nvmlErr}, nil)
	if budgetErr == nil {
		t.Fatal("a failed query gave a budget; it must not read as 0 bytes free")
	}

	t.Run("auto refused naming the device error", func(t *testing.T) {
		err := Request{Auto: true, Source: SourceDefault}.BudgetRefusal(budgetErr)
		if err == nil {
			t.Fatal("auto proceeded without a device answer")
		}
		if !errors.Is(err, ErrDeviceQuery) || !errors.Is(err, nvmlErr) {
			t.Errorf("refusal %v does not wrap both ErrDeviceQuery and the device's error", err)
		}
		for _, want := range []string{"NVML nvmlDeviceGetMemoryInfo_v2 on GPU 0: ERROR_NO_PERMISSION", "MINFER_GPU_MEM", "--gpu-layers"} {
			if !strings.Contains(err.Error(), want) {
				t.Errorf("refusal %q does not mention %q", err, want)
			}
		}
	})
	t.Run("explicit count proceeds", func(t *testing.T) {
		for _, req := range []Request{{Layers: 0, Source: SourceFlag}, {Layers: 12, Source: SourceEnv}} {
			if err := req.BudgetRefusal(budgetErr); err != nil {
				t.Errorf("%v refused by a failed query: %v", req, err)
			}
		}
	})
	t.Run("malformed MINFER_GPU_MEM refuses explicit counts too", func(t *testing.T) {
		_, memErr := WeightBudget(devices.Reported{Kind: devices.KindCUDA, Name: "X", Free: 1 << 30}, envOf(map[string]string{EnvGPUMem: "4G"}))
		for _, req := range []Request{{Auto: true, Source: SourceDefault}, {Layers: 3, Source: SourceFlag}} {
			if err := req.BudgetRefusal(memErr); !errors.Is(err, ErrBadRequest) {
				t.Errorf("%v: BudgetRefusal = %v, want the ErrBadRequest refusal", req, err)
			}
		}
	})
	t.Run("no error proceeds", func(t *testing.T) {
		if err := (Request{Auto: true}).BudgetRefusal(nil); err != nil {
			t.Errorf("BudgetRefusal(nil) = %v", err)
		}
	})
}
