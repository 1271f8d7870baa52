package cli

import (
	"strconv"
	"testing"
)

// FuzzParseTokens: token lists parse to non-negative ids or a usage error.
func FuzzParseTokens(f *testing.F) {
	for _, s := range []string{"1,2,3", "1 2 3", "", ",,", "-1", "99999999999", "1,a"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		ids, err := parseTokens(s)
		if err != nil {
			return
		}
		if len(ids) == 0 {
			t.Fatalf("%q: no ids and no error", s)
		}
		for _, id := range ids {
			if id < 0 {
				t.Fatalf("%q gave %d", s, id)
			}
			_ = strconv.Itoa(int(id))
		}
	})
}
