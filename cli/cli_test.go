package cli

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/minfer/minfer/gguf"
	"github.com/minfer/minfer/internal/coretest"
	"github.com/minfer/minfer/internal/ggtest"
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

// TestRunCommandPrintsReferenceText is the end-to-end check:
// `minfer run -m stories260K.gguf -p "Once upon a time" -n 24 --temp 0`.
func TestRunCommandPrintsReferenceText(t *testing.T) {
	ref := coretest.LoadRef(t, ggtest.Path(t, "models", "stories260K.ref.json"))
	var out, errb bytes.Buffer
	code := runCLI(&out, &errb, "run", "-m", ggtest.Path(t, "models", "stories260K.gguf"), "-p", "Once upon a time", "-n", "24", "--temp", "0")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if got := strings.TrimSuffix(out.String(), "\n"); got != ref.Cases[0].GreedyText {
		t.Errorf("got %q\nwant %q", got, ref.Cases[0].GreedyText)
	}
}

// TestInspectEveryTestModel: every file in the test data inspects cleanly,
// and the per-block numbers add up exactly to the tensor bytes in the file.
func TestInspectEveryTestModel(t *testing.T) {
	for _, path := range ggtest.Models(t) {
		t.Run(filepath.Base(path), func(t *testing.T) {
			var out, errb bytes.Buffer
			if code := runCLI(&out, &errb, "inspect", path, "--json"); code != 0 {
				t.Fatalf("exit %d: %s", code, errb.String())
			}
			var info struct {
				FileSize       int64   `json:"file_size"`
				BlockBytes     []int64 `json:"block_bytes"`
				UnblockedBytes int64   `json:"unblocked_bytes"`
				TensorBytes    int64   `json:"tensor_bytes"`
				Types          []struct {
					Bytes int64 `json:"bytes"`
				} `json:"tensor_types"`
			}
			if err := json.Unmarshal(out.Bytes(), &info); err != nil {
				t.Fatal(err)
			}
			f, err := gguf.Open(path)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			var fileSum int64
			for i := range f.Tensors {
				fileSum += f.Tensors[i].NBytes()
			}
			var blocks, types int64
			for _, b := range info.BlockBytes {
				blocks += b
			}
			for _, ty := range info.Types {
				types += ty.Bytes
			}
			if blocks+info.UnblockedBytes != fileSum || types != fileSum || info.TensorBytes != fileSum || info.FileSize != f.Size {
				t.Errorf("blocks %d + unblocked %d, types %d, tensors %d; the file's tensors hold %d", blocks, info.UnblockedBytes, types, info.TensorBytes, fileSum)
			}
			// Text output works too.
			out.Reset()
			if code := runCLI(&out, &errb, "inspect", path); code != 0 || !strings.Contains(out.String(), "architecture") {
				t.Errorf("text inspect: exit %d, %q", code, out.String())
			}
		})
	}
}

func TestInspectCorruptFileIsOneClearLine(t *testing.T) {
	src, err := os.ReadFile(ggtest.Path(t, "models", "stories260K.gguf"))
	if err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "cut.gguf")
	os.WriteFile(bad, src[:5000], 0o644)
	var out, errb bytes.Buffer
	if code := runCLI(&out, &errb, "inspect", bad); code != 1 || !strings.Contains(errb.String(), "truncated") || strings.Count(errb.String(), "\n") != 1 {
		t.Errorf("exit %d, stderr %q", code, errb.String())
	}
}

// TestPlanEveryModelAtSeveralBudgets runs `minfer plan` on every model the
// runtime supports with MINFER_GPU_MEM at several sizes: the auto fit is a
// prefix within the budget, and the JSON agrees with the text.
func TestPlanEveryModelAtSeveralBudgets(t *testing.T) {
	var models []string
	for _, sub := range []string{"models", "synth"} {
		m := ggtest.Glob(t, sub, "*.gguf")
		models = append(models, m...)
	}
	for _, path := range models {
		for _, mib := range []string{"0", "1", "4", "1024"} {
			t.Run(filepath.Base(path)+"/"+mib+"MiB", func(t *testing.T) {
				env := map[string]string{"MINFER_GPU_MEM": mib, "MINFER_FAKE_DEVICE": "none"}
				var out, errb bytes.Buffer
				if code := runCLIEnv(&out, &errb, env, "plan", path, "--json"); code != 0 {
					t.Fatalf("exit %d: %s", code, errb.String())
				}
				var p struct {
					BlockBytes     []int64 `json:"block_bytes"`
					UnblockedBytes int64   `json:"unblocked_bytes"`
					WeightBudget   int64   `json:"weight_budget_bytes"`
					WeightFit      int     `json:"weight_fit_gpu_layers"`
					AutoFit        int     `json:"auto_fit_gpu_layers"`
					Refusal        string  `json:"refusal"`
					GPULayers      int     `json:"gpu_layers"`
					DeviceWeights  int64   `json:"device_weight_bytes"`
					HostKV         int64   `json:"host_kv_bytes"`
					DeviceKV       int64   `json:"device_kv_bytes"`
				}
				if err := json.Unmarshal(out.Bytes(), &p); err != nil {
					t.Fatal(err)
				}
				prefix := func(n int) int64 {
					var used int64
					for i := 0; i < min(n, len(p.BlockBytes)); i++ {
						used += p.BlockBytes[i]
					}
					if n > len(p.BlockBytes) {
						used += p.UnblockedBytes
					}
					return used
				}
				used := prefix(p.WeightFit)
				if used > p.WeightBudget {
					t.Errorf("weight fit %d uses %d of a %d budget", p.WeightFit, used, p.WeightBudget)
				}
				if p.WeightFit < len(p.BlockBytes) && used+p.BlockBytes[p.WeightFit] <= p.WeightBudget {
					t.Errorf("weight fit %d stops although the next block fits", p.WeightFit)
				}
				if p.AutoFit > p.WeightFit || p.GPULayers != p.AutoFit || p.DeviceWeights != prefix(p.AutoFit) || p.Refusal != "" {
					t.Errorf("auto %d (weight fit %d), plan %d, device weights %d, refusal %q", p.AutoFit, p.WeightFit, p.GPULayers, p.DeviceWeights, p.Refusal)
				}
				if p.HostKV+p.DeviceKV <= 0 {
					t.Error("no KV cache bytes in the plan")
				}
				out.Reset()
				if code := runCLIEnv(&out, &errb, env, "plan", path); code != 0 || !strings.Contains(out.String(), "weight budget") {
					t.Errorf("text plan: exit %d %q", code, out.String())
				}
			})
		}
	}
}

func TestPlanRefusesBadSpellings(t *testing.T) {
	path := ggtest.Path(t, "models", "stories260K.gguf")
	for _, c := range []struct {
		env  map[string]string
		args []string
		want string
	}{
		{nil, []string{"--gpu-layers", "lots"}, `"lots"`},
		{map[string]string{"MINFER_GPU_LAYERS": "-1"}, nil, `"-1"`},
		{map[string]string{"MINFER_GPU_MEM": "4GB"}, nil, `"4GB"`},
		{map[string]string{"MINFER_FAKE_DEVICE": "failed:ERROR_NO_PERMISSION"}, nil, "ERROR_NO_PERMISSION"},
	} {
		var out, errb bytes.Buffer
		args := append([]string{"plan", path}, c.args...)
		if code := runCLIEnv(&out, &errb, c.env, args...); code == 0 || !strings.Contains(errb.String(), c.want) {
			t.Errorf("%v %v: exit %d, stderr %q, want it to name %s", c.env, c.args, code, errb.String(), c.want)
		}
	}
	// A failed query still allows an explicit count.
	var out, errb bytes.Buffer
	env := map[string]string{"MINFER_FAKE_DEVICE": "failed:ERROR_NO_PERMISSION"}
	if code := runCLIEnv(&out, &errb, env, "plan", path, "--gpu-layers", "2"); code != 0 {
		t.Errorf("explicit count after a failed query: exit %d %s", code, errb.String())
	}
}

func TestDevicesWithoutAGPUExitsZero(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runCLIEnv(&out, &errb, map[string]string{}, "devices"); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	if !strings.Contains(out.String(), "host:") {
		t.Errorf("output %q", out.String())
	}
}

func TestLogitsCommandWritesReferenceShape(t *testing.T) {
	out := filepath.Join(t.TempDir(), "l.f32")
	var so, se bytes.Buffer
	code := runCLI(&so, &se, "logits", "-m", ggtest.Path(t, "models", "stories260K.gguf"), "--tokens", "1,403,407,261,378", "--out", out)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, se.String())
	}
	st, err := os.Stat(out)
	if err != nil || st.Size() != 5*512*4 {
		t.Errorf("wrote %v bytes, want %d", st, 5*512*4)
	}
}

func TestTokenizeCommand(t *testing.T) {
	ref := coretest.LoadRef(t, ggtest.Path(t, "models", "stories260K.ref.json"))
	model := ggtest.Path(t, "models", "stories260K.gguf")
	var out, errb bytes.Buffer
	if code := runCLI(&out, &errb, "tokenize", "-m", model, ref.Cases[0].Prompt); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var want []string
	for _, id := range ref.Cases[0].Tokens {
		want = append(want, strconv.Itoa(int(id)))
	}
	if got := strings.TrimSpace(out.String()); got != strings.Join(want, " ") {
		t.Errorf("got %q want %q", got, strings.Join(want, " "))
	}
	out.Reset()
	if code := runCLI(&out, &errb, "tokenize", "-m", model, "--ids", strings.Join(want[1:], ",")); code != 0 || strings.TrimSpace(out.String()) != ref.Cases[0].Prompt {
		t.Errorf("--ids: exit %d, %q", code, out.String())
	}
}

func TestUnknownCommandAndHelp(t *testing.T) {
	var out, errb bytes.Buffer
	if code := runCLI(&out, &errb, "frobnicate"); code != 2 {
		t.Errorf("unknown command exit %d", code)
	}
	for name := range commands {
		out.Reset()
		errb.Reset()
		if code := runCLI(&out, &errb, name, "--help"); code != 0 || !strings.Contains(errb.String(), "usage: minfer "+name) {
			t.Errorf("%s --help: exit %d, %q", name, code, errb.String())
		}
	}
}

// TestChatCommandScriptedSession pipes two turns into `minfer chat`: both
// stream a reply, and the second turn's prefill covers only its new tokens.
func TestChatCommandScriptedSession(t *testing.T) {
	model := coretest.WithChatML(t, ggtest.Path(t, "models", "stories260K.gguf"))
	var out, errb bytes.Buffer
	e := Env{Stdin: strings.NewReader("Tell me a story.\nAnother one.\n"), Stdout: &out, Stderr: &errb, LookupEnv: func(string) (string, bool) { return "", false }}
	if code := Main(e, []string{"chat", "-m", model, "--temp", "0", "-n", "16", "--system", "You tell stories."}); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var stats []string
	for _, line := range strings.Split(errb.String(), "\n") {
		if strings.Contains(line, "prompt tokens") {
			stats = append(stats, line)
		}
	}
	t.Logf("stderr:\n%s", errb.String())
	if len(stats) != 2 || !strings.Contains(errb.String(), "template: model") {
		t.Fatalf("want two turns with the model's template, got:\n%s", errb.String())
	}
	var p1, r1, e1, p2, r2, e2 int
	fmt.Sscanf(stats[0], "[%d prompt tokens (%d reused, %d evaluated", &p1, &r1, &e1)
	fmt.Sscanf(stats[1], "[%d prompt tokens (%d reused, %d evaluated", &p2, &r2, &e2)
	if r1 != 0 || e1 != p1 || r2 < p1 || e2 != p2-r2 {
		t.Errorf("turn 1: %d prompt, %d reused, %d evaluated; turn 2: %d, %d, %d", p1, r1, e1, p2, r2, e2)
	}
	// Each turn's line says where the blocks ran.
	for _, l := range stats {
		if !regexp.MustCompile(`· 5/5 blocks (\+ output )?on \S`).MatchString(l) {
			t.Errorf("stats line %q does not say where the blocks ran", l)
		}
	}
	if strings.Count(out.String(), "> ") < 3 {
		t.Errorf("stdout %q", out.String())
	}
}

func TestPlanKVTypeFlag(t *testing.T) {
	path := ggtest.Path(t, "models", "stories260K.gguf")
	kv := map[string]int64{}
	for _, typ := range []string{"f16", "f32"} {
		var out, errb bytes.Buffer
		if code := runCLIEnv(&out, &errb, map[string]string{"MINFER_FAKE_DEVICE": "none"}, "plan", path, "--kv-type", typ, "--json"); code != 0 {
			t.Fatalf("%s: exit %d %s", typ, code, errb.String())
		}
		var p struct {
			HostKV int64  `json:"host_kv_bytes"`
			KVType string `json:"kv_type"`
		}
		json.Unmarshal(out.Bytes(), &p)
		if p.KVType != strings.ToUpper(typ) {
			t.Errorf("--kv-type %s planned %s", typ, p.KVType)
		}
		kv[typ] = p.HostKV
	}
	if kv["f32"] != 2*kv["f16"] || kv["f16"] == 0 {
		t.Errorf("KV bytes %v: F32 must be twice F16", kv)
	}
	var out, errb bytes.Buffer
	if code := runCLI(&out, &errb, "plan", path, "--kv-type", "q8_0"); code != 2 {
		t.Errorf("--kv-type q8_0: exit %d", code)
	}
}

// TestDamagedTokenizerInInspectRunAndChat: for every damaged copy of
// stories260K, `inspect` shows the damage on one line and exits 0 (the card
// is readable), `run` and `chat` exit 1 with one line naming it, or, for
// damage llama.cpp tolerates, generate; a broken template is one line in
// inspect and in chat's header, and chat goes on without it.
func TestDamagedTokenizerInInspectRunAndChat(t *testing.T) {
	src := ggtest.Path(t, "models", "stories260K.gguf")
	for _, tc := range coretest.DamagedTokenizers() {
		t.Run(tc.Name, func(t *testing.T) {
			path := coretest.Rewrite(t, src, tc.Edit)
			var out, errb bytes.Buffer
			if code := runCLI(&out, &errb, "inspect", path); code != 0 {
				t.Fatalf("inspect: exit %d: %s", code, errb.String())
			}
			want := tc.Problem + tc.Template
			lines := 0
			for _, l := range strings.Split(out.String(), "\n") {
				if want != "" && strings.Contains(l, want) {
					lines++
				}
			}
			if want != "" && lines != 1 {
				t.Errorf("inspect: %d lines say %q:\n%s", lines, want, out.String())
			}
			for _, args := range [][]string{
				{"run", "-m", path, "-p", "Once upon a time", "-n", "4", "--temp", "0"},
				{"chat", "-m", path, "-n", "4", "--temp", "0"},
			} {
				out.Reset()
				errb.Reset()
				e := Env{Stdin: strings.NewReader("Hello.\n"), Stdout: &out, Stderr: &errb, LookupEnv: func(string) (string, bool) { return "", false }}
				code := Main(e, args)
				stderr := strings.TrimLeft(errb.String(), "\r ")
				if tc.Problem != "" {
					if code != 1 || strings.Count(stderr, tc.Problem) != 1 || strings.Count(stderr, "\n") != 1 {
						t.Errorf("%s: exit %d, stderr %q, want one line saying %q", args[0], code, errb.String(), tc.Problem)
					}
					continue
				}
				if code != 0 {
					t.Errorf("%s: exit %d: %s", args[0], code, errb.String())
				}
				if args[0] == "chat" && tc.Template != "" && !strings.Contains(stderr, "chat template cannot be used") {
					t.Errorf("chat does not say the template is unusable: %s", stderr)
				}
			}
		})
	}
}
