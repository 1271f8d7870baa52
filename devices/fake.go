package devices

import (
	"errors"
	"fmt"
	"math"
	"os"
	"strconv"
	"strings"
)

// FakeDeviceEnv names the simulation switch. Tests use it to drive the memory
// policy through every outcome, and users reporting a bug use it to replay
// what their device said. Its values:
//
//	reported:free=8192,total=16384[,name=My GPU]   (MiB; name may not hold a comma)
//	failed:ERROR_NO_PERMISSION                     (anything after "failed:" is the error name)
//	none[:reason]
const FakeDeviceEnv = "MINFER_FAKE_DEVICE"

// ErrBadFakeDevice is wrapped by every parse error of a MINFER_FAKE_DEVICE
// value; the message quotes the value and says what is wrong with it.
var ErrBadFakeDevice = errors.New("devices: malformed " + FakeDeviceEnv)

const fakeSyntax = "want reported:free=<MiB>,total=<MiB>[,name=<text>], failed:<ERROR_NAME> or none[:<reason>]"

// maxMiB is the largest MiB count whose byte count fits in a uint64.
const maxMiB = math.MaxUint64 >> 20

// FakeFromEnv reads MINFER_FAKE_DEVICE. set is false when the variable is
// unset or empty; err is non-nil when it is set but malformed, so a CLI can
// refuse to start on a typo instead of silently querying the real device.
func FakeFromEnv() (dm DeviceMemory, set bool, err error) {
	value, ok := os.LookupEnv(FakeDeviceEnv)
	if !ok || value == "" {
		return nil, false, nil
	}
	dm, err = ParseFakeDevice(value)
	return dm, true, err
}

// ParseFakeDevice turns a MINFER_FAKE_DEVICE value into the outcome it
// simulates.
func ParseFakeDevice(value string) (DeviceMemory, error) {
	bad := func(format string, args ...any) error {
		return fmt.Errorf("%w=%q: %s (%s)", ErrBadFakeDevice, value, fmt.Sprintf(format, args...), fakeSyntax)
	}
	kind, rest, hasRest := strings.Cut(strings.TrimSpace(value), ":")
	switch kind {
	case "reported":
		if !hasRest {
			return nil, bad("reported needs free= and total=")
		}
		return parseFakeReported(rest, bad)
	case "failed":
		name := strings.TrimSpace(rest)
		if name == "" {
			return nil, bad("failed needs an error name after the colon")
		}
		return QueryFailed{Err: &QueryError{Source: FakeDeviceEnv, Name: name}}, nil
	case "none":
		reason := strings.TrimSpace(rest)
		if reason == "" {
			reason = FakeDeviceEnv + "=none"
		}
		return NoDevice{Reason: reason}, nil
	case "":
		return nil, bad("empty")
	default:
		return nil, bad("unknown kind %q", kind)
	}
}

func parseFakeReported(fields string, bad func(string, ...any) error) (DeviceMemory, error) {
	r := Reported{Kind: KindFake, Name: FakeDeviceEnv}
	seen := map[string]bool{}
	for field := range strings.SplitSeq(fields, ",") {
		key, val, ok := strings.Cut(field, "=")
		key, val = strings.TrimSpace(key), strings.TrimSpace(val)
		if !ok {
			return nil, bad("field %q is not key=value", field)
		}
		if seen[key] {
			return nil, bad("%s= given twice", key)
		}
		seen[key] = true
		switch key {
		case "free", "total":
			n, err := strconv.ParseUint(val, 10, 64)
			if err != nil || n > maxMiB {
				return nil, bad("%s=%q is not a whole number of MiB up to %d", key, val, uint64(maxMiB))
			}
			if key == "free" {
				r.Free = n << 20
			} else {
				r.Total = n << 20
			}
		case "name":
			if val == "" {
				return nil, bad("name= is empty")
			}
			r.Name = val
		default:
			return nil, bad("unknown key %q", key)
		}
	}
	switch {
	case !seen["free"]:
		return nil, bad("missing free=")
	case !seen["total"]:
		return nil, bad("missing total=")
	case r.Total == 0:
		return nil, bad("total=0: a device has some memory")
	case r.Free > r.Total:
		return nil, bad("free %d MiB is more than total %d MiB", mib(r.Free), mib(r.Total))
	}
	r.Used = r.Total - r.Free
	return r, nil
}
