package quant

import (
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// TestParseLevel: every level's name parses back to it, in any case; other
// names are ErrUnknownLevel.
func TestParseLevel(t *testing.T) {
	for l := Generic; l <= maxLevel; l++ {
		for _, s := range []string{l.String(), strings.ToUpper(l.String())} {
			if got, err := ParseLevel(s); err != nil || got != l {
				t.Errorf("ParseLevel(%q) = %s, %v", s, got, err)
			}
		}
	}
	for _, s := range []string{"", "avx", "sse4", "level(9)"} {
		if _, err := ParseLevel(s); !errors.Is(err, ErrUnknownLevel) {
			t.Errorf("ParseLevel(%q) error %v, want ErrUnknownLevel", s, err)
		}
	}
}

// TestEnvLevel: with MINFER_CPU_LEVEL naming an available level, a fresh
// process starts at that level (checked in a child run of this test
// binary); an unknown name leaves the best level.
func TestEnvLevel(t *testing.T) {
	if want := os.Getenv("QUANT_TEST_WANT_LEVEL"); want != "" {
		if got := CurrentLevel().String(); got != want {
			t.Fatalf("%s=%q: level %s, want %s (levels %v)", EnvLevel, os.Getenv(EnvLevel), got, want, Levels())
		}
		return
	}
	ls := Levels()
	best := ls[len(ls)-1]
	cases := map[string]string{"bogus": best.String()}
	for _, l := range ls {
		cases[strings.ToUpper(l.String())] = l.String()
	}
	for env, want := range cases {
		cmd := exec.Command(os.Args[0], "-test.run=^TestEnvLevel$", "-test.count=1")
		cmd.Env = append(os.Environ(), EnvLevel+"="+env, "QUANT_TEST_WANT_LEVEL="+want)
		out, err := cmd.CombinedOutput()
		var exit *exec.ExitError
		if err != nil && !errors.As(err, &exit) {
			// The child could not start: under qemu-user without binfmt
			// (the arm64 runs in CI) an arm64 binary cannot exec itself.
			t.Skipf("cannot run this test binary as a child here: %v", err)
		}
		if err != nil {
			t.Errorf("%s=%s: %v\n%s", EnvLevel, env, err, out)
		}
	}
}
