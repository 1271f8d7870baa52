// Package ggtest locates Minfer's test data for tests in any package.
//
// Two sets exist. The compact set travels with the repository in
// `testdata/` at its root (tiny real models, the small llama in every weight
// type, the architecture models in Q8_0, four vocabularies, the templates;
// testdata/README.md lists it). The larger set — the 32000-token synth
// models and the rest of the vocabularies and architecture files — lives
// outside: `$MINFER_TESTDATA` when set, else `../shared/testdata` beside the
// repository. Both use the same folder layout (models/, small/, arch/,
// synth/, vocab/, templates/), so a test names a file by its place in that
// layout and Path finds it in whichever set holds it.
//
// A file only the larger set holds skips its test with one line saying where
// to get it when that set is absent (a fresh clone). When MINFER_TESTDATA is
// set but missing, tests fail instead: CI sets it, and a CI run must never
// pass by skipping.
package ggtest

import (
	"errors"
	"os"
	"path/filepath"
	"sort"
	"sync"
	"testing"
)

// EnvTestData names the folder of the larger test set.
const EnvTestData = "MINFER_TESTDATA"

// ErrNoLargeSet is returned by Large when the larger set cannot be found.
var ErrNoLargeSet = errors.New("ggtest: the larger test set is not here: set " + EnvTestData +
	" to a copy of it, or place it at ../shared/testdata beside the repository")

var (
	rootOnce sync.Once
	root     string
	rootErr  error
)

// RepoRoot is the folder holding go.mod, found upwards from the working
// directory (go test runs each package in its own folder).
func RepoRoot() (string, error) {
	rootOnce.Do(func() {
		wd, err := os.Getwd()
		if err != nil {
			rootErr = err
			return
		}
		for dir := wd; ; dir = filepath.Dir(dir) {
			if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
				root = dir
				return
			}
			if filepath.Dir(dir) == dir {
				rootErr = errors.New("ggtest: no go.mod above " + wd)
				return
			}
		}
	})
	return root, rootErr
}

// Repo is the compact set that travels with the code: <root>/testdata.
func Repo(t testing.TB) string {
	t.Helper()
	r, err := RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(r, "testdata")
}

// Large resolves the larger set without a testing.TB: $MINFER_TESTDATA
// (an error when set but missing), else ../shared/testdata beside the
// repository, else ErrNoLargeSet.
func Large() (string, error) {
	if d := os.Getenv(EnvTestData); d != "" {
		if _, err := os.Stat(d); err != nil {
			return "", err
		}
		return d, nil
	}
	r, err := RepoRoot()
	if err != nil {
		return "", err
	}
	d := filepath.Clean(filepath.Join(r, "..", "shared", "testdata"))
	if _, err := os.Stat(d); err != nil {
		return "", ErrNoLargeSet
	}
	return d, nil
}

// LargeDir is the larger set's folder; the test skips (or, with
// MINFER_TESTDATA set but missing, fails) when it is absent.
func LargeDir(t testing.TB) string {
	t.Helper()
	d, err := Large()
	if err != nil {
		missing(t, err)
	}
	return d
}

func missing(t testing.TB, err error) {
	t.Helper()
	if os.Getenv(EnvTestData) != "" {
		t.Fatal(err)
	}
	t.Skip(err)
}

// Path finds elem (e.g. "models", "stories260K.gguf") in the compact set,
// then in the larger one. When neither holds it the test skips saying where
// to get the larger set (or fails when MINFER_TESTDATA is set: a file the
// sets should hold is missing).
func Path(t testing.TB, elem ...string) string {
	t.Helper()
	rel := filepath.Join(elem...)
	p := filepath.Join(Repo(t), rel)
	if _, err := os.Stat(p); err == nil {
		return p
	}
	d, err := Large()
	if err != nil {
		missing(t, errors.New(rel+" is only in the larger test set: "+err.Error()))
	}
	p = filepath.Join(d, rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("ggtest: %s is in neither test set: %v", rel, err)
	}
	return p
}

// Glob matches pattern inside sub of both sets, the compact set's copy
// first; a file in both is listed once (by base name). The larger set is
// optional here: without it only the compact set's matches are returned.
func Glob(t testing.TB, sub, pattern string) []string {
	t.Helper()
	seen := map[string]bool{}
	var out []string
	add := func(dir string) {
		m, _ := filepath.Glob(filepath.Join(dir, sub, pattern))
		sort.Strings(m)
		for _, p := range m {
			if b := filepath.Base(p); !seen[b] {
				seen[b] = true
				out = append(out, p)
			}
		}
	}
	add(Repo(t))
	if d, err := Large(); err == nil {
		add(d)
	} else if os.Getenv(EnvTestData) != "" {
		t.Fatal(err)
	}
	return out
}

// ModelDirs are the folders holding model files.
var ModelDirs = []string{"models", "small", "arch", "synth", "vocab"}

// Models lists every .gguf file of both sets (see Glob).
func Models(t testing.TB) []string {
	t.Helper()
	var out []string
	for _, sub := range ModelDirs {
		out = append(out, Glob(t, sub, "*.gguf")...)
	}
	if len(out) == 0 {
		t.Fatal("ggtest: no .gguf files in the test data")
	}
	return out
}
