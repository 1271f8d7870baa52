// Package ggtest locates Minfer's shared test data for tests in any package.
package ggtest

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir is the test data folder: $MINFER_TESTDATA, else ../shared/testdata
// beside the repository root. A test that needs it fails (not skips) when it
// is missing, because CI always has it.
func Dir(t testing.TB) string {
	t.Helper()
	d, err := Find()
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// Find resolves the test data folder without a testing.TB.
func Find() (string, error) {
	if d := os.Getenv("MINFER_TESTDATA"); d != "" {
		if _, err := os.Stat(d); err != nil {
			return "", err
		}
		return d, nil
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			d := filepath.Join(dir, "..", "shared", "testdata")
			if _, err := os.Stat(d); err != nil {
				return "", err
			}
			return filepath.Clean(d), nil
		}
		if filepath.Dir(dir) == dir {
			return "", os.ErrNotExist
		}
	}
}

// Path joins elem onto Dir.
func Path(t testing.TB, elem ...string) string {
	return filepath.Join(append([]string{Dir(t)}, elem...)...)
}

// Models lists every .gguf file in the test data (models/, synth/, vocab/).
func Models(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, sub := range []string{"models", "synth", "vocab"} {
		m, _ := filepath.Glob(filepath.Join(Dir(t), sub, "*.gguf"))
		out = append(out, m...)
	}
	if len(out) == 0 {
		t.Fatal("no .gguf files in the test data folder")
	}
	return out
}
