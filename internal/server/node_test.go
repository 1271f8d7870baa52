package server

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/internal/engine/enginetest"
	"github.com/minfer/minfer/internal/ggtest"
)

// TestOpenAINodeClient runs testdata/openai-node/serve.test.mjs: the
// official OpenAI Node client against a `minfer serve` built here, on a
// free loopback port. It needs node and the folder's node_modules
// (`npm ci` there; .ci/run does it) and skips with one line without them.
func TestOpenAINodeClient(t *testing.T) {
	if testing.Short() {
		t.Skip("builds minfer and drives it with node: not in -short")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the OpenAI Node client test is skipped")
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "openai-node"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai")); err != nil {
		t.Skipf("no node_modules in %s: run `npm ci` there to enable the OpenAI Node client test", dir)
	}
	model := ggtest.Path(t, "models", "stories260K.gguf")
	bin := filepath.Join(t.TempDir(), "minfer")
	if runtime.GOOS == "windows" {
		bin += ".exe"
	}
	goBin := filepath.Join(runtime.GOROOT(), "bin", "go")
	build := exec.Command(goBin, "build", "-tags", "nogui", "-o", bin, ".")
	if build.Dir, err = ggtest.RepoRoot(); err != nil {
		t.Fatal(err)
	}
	build.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building minfer: %v\n%s", err, out)
	}
	cmd := exec.Command(node, "--test", "--test-reporter=spec", "serve.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MINFER_BIN="+bin, "MINFER_MODEL="+model)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}

// TestOpenAINodeClientTools runs testdata/openai-node/tools.test.mjs: the
// official OpenAI Node client against this package's server on a loopback
// port, serving a scripted engine whose replies are written in the Hermes
// tool-call format and parsed as a local model's are (stories260K cannot
// call tools). The second leg of a round trip is answered from the tool
// result it was sent. Skips like TestOpenAINodeClient.
func TestOpenAINodeClientTools(t *testing.T) {
	if testing.Short() {
		t.Skip("drives the server with node: not in -short")
	}
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed: the OpenAI Node client test is skipped")
	}
	dir, _ := filepath.Abs(filepath.Join("testdata", "openai-node"))
	if _, err := os.Stat(filepath.Join(dir, "node_modules", "openai")); err != nil {
		t.Skipf("no node_modules in %s: run `npm ci` there to enable the OpenAI Node client test", dir)
	}
	eng := &enginetest.ToolEngine{Format: chat.ToolFormatHermes,
		Script: "Let me check.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>",
		Answer: func(msgs []chat.Message) string {
			res := msgs[len(msgs)-1]
			return fmt.Sprintf("%s (call %s) said: %s", res.Name, res.ToolCallID, res.Content)
		}}
	_, url := toolServer(t, eng)
	cmd := exec.Command(node, "--test", "--test-reporter=spec", "tools.test.mjs")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "MINFER_TOOLS_URL="+url+"/v1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("node --test: %v\n%s", err, out)
	}
	t.Logf("%s", out)
}
