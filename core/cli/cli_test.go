package cli

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/minfer/minfer/gguf/ggtest"
)

func runCLI(stdout, stderr *bytes.Buffer, args ...string) int {
	return runCLIEnv(stdout, stderr, nil, args...)
}

func runCLIEnv(stdout, stderr *bytes.Buffer, env map[string]string, args ...string) int {
	e := Env{Stdin: strings.NewReader(""), Stdout: stdout, Stderr: stderr, LookupEnv: func(k string) (string, bool) {
		v, ok := env[k]
		return v, ok
	}}
	return Main(e, args)
}

type refFile struct {
	Cases []struct {
		Prompt     string  `json:"prompt"`
		Tokens     []int32 `json:"tokens"`
		GreedyText string  `json:"greedy_text"`
	} `json:"cases"`
}

func loadRef(t *testing.T, path string) refFile {
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var r refFile
	if err := json.Unmarshal(b, &r); err != nil {
		t.Fatal(err)
	}
	return r
}

// TestRunCommandPrintsReferenceText is the end-to-end check:
// `minfer run -m stories260K.gguf -p "Once upon a time" -n 24 --temp 0`.
func TestRunCommandPrintsReferenceText(t *testing.T) {
	ref := loadRef(t, filepath.Join(ggtest.Dir(t), "models", "stories260K.ref.json"))
	var out, errb bytes.Buffer
	code := runCLI(&out, &errb, "run", "-m", filepath.Join(ggtest.Dir(t), "models", "stories260K.gguf"), "-p", "Once upon a time", "-n", "24", "--temp", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if got := strings.TrimSuffix(out.String(), "\n"); got != ref.Cases[0].GreedyText {
		t.Errorf("got %q\nwant %q", got, ref.Cases[0].GreedyText)
	}
}
