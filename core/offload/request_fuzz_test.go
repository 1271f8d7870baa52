package offload

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

// FuzzParseRequest: any spelling either parses to auto or a non-negative
// count that prints back as digits of the input, or is refused with a
// *RequestError quoting the value; never a panic, never a guess.
func FuzzParseRequest(f *testing.F) {
	for _, s := range []string{"auto", "AUTO", " 12 ", "0", "-1", "+3", "1.5", "0x10", "", "all", "99999999999999999999999"} {
		f.Add(s, true)
		f.Add(s, false)
	}
	f.Fuzz(func(t *testing.T, v string, viaFlag bool) {
		env := func(string) (string, bool) { return v, true }
		r, err := ParseRequest(v, viaFlag, env)
		if err != nil {
			var re *RequestError
			if !errors.As(err, &re) || !errors.Is(err, ErrBadRequest) || re.Value != v {
				t.Fatalf("%q: error %v is not a RequestError quoting the value", v, err)
			}
			return
		}
		if r.Auto {
			if !strings.EqualFold(strings.Trim(v, " \t"), "auto") {
				t.Fatalf("%q parsed as auto", v)
			}
			return
		}
		if r.Layers < 0 || !strings.Contains(v, strings.TrimLeft(strconv.Itoa(r.Layers), "0")) {
			t.Fatalf("%q parsed as %d", v, r.Layers)
		}
		p, _ := r.Resolve(10, 3)
		if p.GPULayers < 0 || p.GPULayers > 11 {
			t.Fatalf("%q resolved to %v", v, p)
		}
	})
}
