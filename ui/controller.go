//go:build !nogui

package ui

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/minfer/minfer/core"
	"github.com/minfer/minfer/core/alloc"
	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/devices"
)

// The controller is the window's state and logic in plain Go: no widget
// lives here, so it can be read and driven in tests without Fyne. It is
// used from one goroutine only (the UI's); the worker's answers reach it
// through Config.Post.

// Phase is where the window is in the open → plan → load → chat path.
type Phase int

const (
	PhaseEmpty   Phase = iota // nothing opened
	PhasePlanned              // a file is inspected and planned, not loaded
	PhaseLoading              // the worker is loading it
	PhaseReady                // loaded: chat is possible
)

func (p Phase) String() string {
	return [...]string{"empty", "planned", "loading", "ready"}[p]
}

// Change says which parts of the window need refreshing.
type Change uint

const (
	ChangeModel    Change = 1 << iota // file, card, device
	ChangePlan                        // slider, context, plan, readout
	ChangeLoad                        // phase, progress, offload report
	ChangeChat                        // the open conversation
	ChangeStream                      // the last reply grew
	ChangeChats                       // the sidebar list
	ChangeRecent                      // recent models
	ChangeSampling                    // sampling settings
)

// Problem is something the user must be told in a dialog.
type Problem interface{ isProblem() }

// FileProblem: the file could not be opened or is not a usable model.
type FileProblem struct {
	Path string
	Err  error
}

// RefusalProblem: the plan does not fit the device budget.
type RefusalProblem struct {
	Refusal *alloc.Refusal
	Fitting int // PlanView.LargestFitting(): what "Use N blocks" offers
}

// DeviceQueryProblem: the device could not say how much memory it has.
type DeviceQueryProblem struct{ Err error }

// LoadProblem: the load failed for another reason.
type LoadProblem struct{ Err error }

// FileChangedProblem: the loaded model's file was truncated or rewritten
// under it; the model was unloaded and the window offers to reload it.
type FileChangedProblem struct {
	Path string
	Err  error
}

// StoreProblem: conversation files were damaged (and set aside) or could
// not be written.
type StoreProblem struct {
	Damaged []DamagedFile
	Err     error
}

func (FileProblem) isProblem()        {}
func (RefusalProblem) isProblem()     {}
func (DeviceQueryProblem) isProblem() {}
func (LoadProblem) isProblem()        {}
func (StoreProblem) isProblem()       {}
func (FileChangedProblem) isProblem() {}

// Prefs is the slice of fyne.Preferences the controller uses.
type Prefs interface {
	StringList(key string) []string
	SetStringList(key string, value []string)
}

// ConfigDirEnv points the conversation store and settings elsewhere (tests,
// portable installs).
const ConfigDirEnv = "MINFER_CONFIG_DIR"

// Config is what the controller needs from outside.
type Config struct {
	ConfigDir string                                                                                // "": $MINFER_CONFIG_DIR, else os.UserConfigDir()/minfer
	Device    func() devices.DeviceMemory                                                           // nil: devices.QueryGPU
	Env       func(string) (string, bool)                                                           // nil: os.LookupEnv (MINFER_GPU_MEM)
	Post      func(func())                                                                          // runs a function on the UI goroutine (fyne.Do)
	Prefs     Prefs                                                                                 // recent models; nil: not kept
	Threads   int                                                                                   // CPU threads for the model; 0: all
	Now       func() time.Time                                                                      // nil: time.Now
	Interval  time.Duration                                                                         // stream refresh; 0: streamInterval
	Load      func(context.Context, string, core.LoadOptions, core.Progress) (*core.Session, error) // nil: core.Load
}

// ResolveConfigDir applies Config.ConfigDir's rule.
func ResolveConfigDir(dir string) (string, error) {
	if dir != "" {
		return dir, nil
	}
	if d := os.Getenv(ConfigDirEnv); d != "" {
		return d, nil
	}
	base, err := os.UserConfigDir()
	if err != nil {
		return "", fmt.Errorf("no config folder for conversations (set %s): %w", ConfigDirEnv, err)
	}
	return filepath.Join(base, "minfer"), nil
}

// Sampling is the user's generation settings.
type Sampling struct {
	Sampler    chat.SamplerSettings `json:"sampler"`
	RandomSeed bool                 `json:"random_seed"` // a fresh seed per reply (else Sampler.Seed)
	MaxTokens  int                  `json:"max_tokens"`  // 0: until the end of the turn
}

// DefaultSampling: the core defaults, a fresh seed per reply (so
// Regenerate gives a different answer) and 1024 tokens at most.
func DefaultSampling() Sampling {
	return Sampling{Sampler: chat.DefaultSamplerSettings(), RandomSeed: true, MaxTokens: 1024}
}

// Validate checks the settings before they are used or kept.
func (s Sampling) Validate() error {
	if s.MaxTokens < 0 {
		return fmt.Errorf("max tokens is %d, want 0 (no limit) or more", s.MaxTokens)
	}
	return s.Sampler.Validate()
}

// LoadedModel is what the worker reported after a load.
type LoadedModel struct {
	Path string
	// Planned is the plan the load was asked for; Report says where the
	// blocks actually run (all on the CPU when it fell back).
	Planned  offload.Plan
	Report   offload.Report
	Memory   []alloc.MemoryReport
	NCtx     int
	Template bool
	Source   chat.Source
	// the choices it was loaded with, to offer Reload when they change
	auto      bool
	layers    int
	ctx       int
	budgetMiB int
}

// ReadoutLevel colours the plan readout.
type ReadoutLevel int

const (
	ReadoutOK ReadoutLevel = iota
	ReadoutWarn
	ReadoutOver
)

// Controller holds the window's state.
type Controller struct {
	cfg       Config
	configDir string
	store     *ChatStore
	worker    *worker
	post      func(func())

	// OnChange and OnProblem are the view's hooks (called on the UI goroutine).
	OnChange  func(Change)
	OnProblem func(Problem)

	// model and plan
	info      *core.ModelInfo
	device    devices.DeviceMemory
	auto      bool
	layers    int // the slider's count when !auto
	ctxLen    int
	budgetMiB int // "Set a budget…" (MINFER_GPU_MEM semantics); 0: none
	view      *core.PlanView
	planErr   error

	// load
	phase         Phase
	loadID        int
	loadCancel    context.CancelFunc
	progressDone  int64
	progressTotal int64
	loaded        *LoadedModel
	loadingPlan   offload.Plan // the plan of the load in flight
	loadLog       []string
	// PanelExpanded: in Ready the offload panel is one line unless expanded.
	PanelExpanded bool

	// chat
	chat       *Chat
	chats      []ChatSummary
	sampling   Sampling
	genID      int
	genChat    *Chat
	genCancel  context.CancelFunc
	generating bool
	// systemDirty: the system prompt changed since the chat was saved.
	systemDirty bool
}

// NewController opens the conversation store and starts the model worker.
func NewController(cfg Config) (*Controller, error) {
	dir, err := ResolveConfigDir(cfg.ConfigDir)
	if err != nil {
		return nil, err
	}
	store, err := NewChatStore(filepath.Join(dir, "chats"))
	if err != nil {
		return nil, err
	}
	if cfg.Device == nil {
		cfg.Device = devices.QueryGPU
	}
	if cfg.Env == nil {
		cfg.Env = os.LookupEnv
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Interval <= 0 {
		cfg.Interval = streamInterval
	}
	if cfg.Post == nil {
		return nil, errors.New("ui: Config.Post is required (it moves worker events onto the UI goroutine)")
	}
	c := &Controller{cfg: cfg, configDir: dir, store: store, post: cfg.Post, sampling: DefaultSampling(), auto: true}
	store.now = cfg.Now
	c.chat = c.newChat()
	c.loadSampling()
	c.worker = startWorker()
	if cfg.Load != nil {
		c.worker.load = cfg.Load
	}
	go pump(c.worker.events, c.post, c.apply, cfg.Interval)
	return c, nil
}

// Start lists the saved conversations and reports damaged ones. Call it
// once the view's hooks are set.
func (c *Controller) Start() {
	c.refreshChats()
}

// Close stops any work and frees the model.
func (c *Controller) Close() {
	c.saveIfEdited()
	c.cancelGeneration()
	if c.loadCancel != nil {
		c.loadCancel()
	}
	c.worker.close()
}

func (c *Controller) changed(ch Change) {
	if c.OnChange != nil {
		c.OnChange(ch)
	}
}

func (c *Controller) problem(p Problem) {
	if c.OnProblem != nil {
		c.OnProblem(p)
	}
}

// ---- open and plan ----

// Phase is the current step.
func (c *Controller) Phase() Phase { return c.phase }

// Info is the inspected model (nil in the empty state).
func (c *Controller) Info() *core.ModelInfo { return c.info }

// Device is the device's answer for the open model.
func (c *Controller) Device() devices.DeviceMemory { return c.device }

// PlanView is the current plan (nil when auto could not plan).
func (c *Controller) PlanView() *core.PlanView { return c.view }

// PlanErr is why there is no plan (a failed device query with auto).
func (c *Controller) PlanErr() error { return c.planErr }

// Auto reports whether the block count follows the auto-fit.
func (c *Controller) Auto() bool { return c.auto }

// BudgetMiB is the user's budget from "Set a budget…" (0: none).
func (c *Controller) BudgetMiB() int { return c.budgetMiB }

// OpenFile inspects a file and plans it. A file that is not a usable model
// is reported as a FileProblem and leaves everything as it was.
func (c *Controller) OpenFile(path string) {
	info, err := core.Inspect(path)
	if err == nil && info.Problem != "" {
		err = fmt.Errorf("%s (%s, architecture %q) cannot be run: %s", info.Name, filepath.Base(path), info.Arch, info.Problem)
	}
	if err != nil {
		c.problem(FileProblem{Path: path, Err: err})
		return
	}
	// A new model replaces the old one: stop its work and free it.
	c.cancelGeneration()
	if c.loadCancel != nil {
		c.loadCancel()
		c.loadCancel = nil
	}
	if c.loaded != nil || c.phase == PhaseLoading {
		c.worker.send(unloadRequest{})
	}
	c.loadID++
	c.loaded, c.loadLog = nil, nil
	c.progressDone, c.progressTotal = 0, 0
	c.info = info
	c.phase = PhasePlanned
	c.PanelExpanded = true
	c.auto, c.layers, c.budgetMiB = true, 0, 0
	// MINFER_GPU_LAYERS sets the starting point, as it does for the CLI; a
	// spelling that is not a block count is reported, and auto is kept.
	req, reqErr := offload.ParseRequest("", false, c.cfg.Env)
	if reqErr == nil && !req.Auto {
		c.auto, c.layers = false, min(req.Layers, info.NLayers+1)
	}
	c.ctxLen = defaultCtx(info.NCtxTrain)
	c.device = c.cfg.Device()
	c.addRecent(path)
	c.replan()
	c.changed(ChangeModel | ChangePlan | ChangeLoad | ChangeRecent)
	if c.planErr != nil && errors.Is(c.planErr, offload.ErrDeviceQuery) {
		c.problem(DeviceQueryProblem{Err: c.deviceErr()})
	}
	if reqErr != nil {
		c.problem(LoadProblem{Err: reqErr})
	}
}

// deviceErr is the device's own error (NVML's), not the wrapped plan error.
func (c *Controller) deviceErr() error {
	if q, ok := c.device.(devices.QueryFailed); ok && q.Err != nil {
		return q.Err
	}
	return c.planErr
}

func defaultCtx(trained int) int {
	choices := ContextChoices(trained)
	want := core.DefaultCtx
	if trained > 0 {
		want = min(trained, core.DefaultCtx)
	}
	best := choices[0]
	for _, n := range choices {
		if n <= want {
			best = n
		}
	}
	return best
}

// ContextChoices are the context lengths offered: powers of two from 512 up
// to the trained length, and the trained length itself.
func ContextChoices(trained int) []int {
	if trained <= 0 {
		trained = core.DefaultCtx
	}
	if trained <= 512 {
		return []int{trained}
	}
	var out []int
	for n := 512; n < trained; n *= 2 {
		out = append(out, n)
	}
	return append(out, trained)
}

func (c *Controller) planOptions() core.PlanOptions {
	req := offload.Request{Auto: true, Source: "auto"}
	if !c.auto {
		req = offload.Request{Layers: c.layers, Source: "slider"}
	}
	dev := c.device
	budget := c.budgetMiB
	env := c.cfg.Env
	return core.PlanOptions{
		GPULayers: req,
		Ctx:       c.ctxLen,
		Device:    func() devices.DeviceMemory { return dev },
		Env: func(k string) (string, bool) {
			if k == offload.EnvGPUMem && budget > 0 {
				return strconv.Itoa(budget), true
			}
			return env(k)
		},
	}
}

func (c *Controller) replan() {
	if c.info == nil {
		return
	}
	v, err := core.Plan(c.info, c.planOptions())
	c.planErr = err
	if err != nil {
		c.view = nil
		return
	}
	c.view = v
}

// SliderMax is the slider's top: every block and the output (NLayers+1).
func (c *Controller) SliderMax() int {
	if c.info == nil {
		return 0
	}
	return c.info.NLayers + 1
}

// SliderEnabled: no GPU means nothing to choose (the slider sits at 0);
// while loading the plan is locked.
func (c *Controller) SliderEnabled() bool {
	if c.info == nil || c.phase == PhaseLoading {
		return false
	}
	_, none := c.device.(devices.NoDevice)
	return !none || c.budgetMiB > 0
}

// GPULayers is what the slider shows: the plan's count (the fit when auto).
func (c *Controller) GPULayers() int {
	if c.view != nil {
		return c.view.Plan.GPULayers
	}
	if c.auto {
		return 0
	}
	return c.layers
}

// SetGPULayers is the slider: an explicit count, which plans even when the
// device query failed.
func (c *Controller) SetGPULayers(n int) {
	if c.info == nil || !c.SliderEnabled() {
		return
	}
	n = min(max(n, 0), c.SliderMax())
	if !c.auto && c.layers == n {
		return
	}
	if c.auto && c.view != nil && c.view.Plan.GPULayers == n {
		return // the slider echoing the fit is not a choice
	}
	c.auto, c.layers = false, n
	c.replan()
	c.changed(ChangePlan)
}

// AutoFit returns to the auto-fit, asking the device afresh.
func (c *Controller) AutoFit() {
	if c.info == nil || c.phase == PhaseLoading {
		return
	}
	c.auto = true
	c.device = c.cfg.Device()
	c.replan()
	c.changed(ChangeModel | ChangePlan)
	if c.planErr != nil && errors.Is(c.planErr, offload.ErrDeviceQuery) {
		c.problem(DeviceQueryProblem{Err: c.deviceErr()})
	}
}

// RunOnCPU plans zero blocks on the device (the device-query dialog).
func (c *Controller) RunOnCPU() {
	if c.info == nil {
		return
	}
	c.auto, c.layers = false, 0
	c.replan()
	c.changed(ChangePlan)
}

// SetBudget sets a budget in MiB like MINFER_GPU_MEM and returns to auto.
func (c *Controller) SetBudget(mib int) error {
	if mib <= 0 {
		return fmt.Errorf("budget %d MiB: want a whole number of MiB above 0", mib)
	}
	if c.info == nil {
		return errors.New("no model is open")
	}
	c.budgetMiB = mib
	c.auto = true
	c.replan()
	c.changed(ChangeModel | ChangePlan)
	return nil
}

// CtxLen is the chosen context length.
func (c *Controller) CtxLen() int { return c.ctxLen }

// SetCtx chooses the context length.
func (c *Controller) SetCtx(n int) {
	if c.info == nil || n <= 0 || n == c.ctxLen || c.phase == PhaseLoading {
		return
	}
	c.ctxLen = n
	c.replan()
	c.changed(ChangePlan)
}

// ---- texts the view shows ----

// CardLines are the model card: title and two lines of facts.
func (c *Controller) CardLines() (title, line1, line2 string) {
	i := c.info
	if i == nil {
		return "", "", ""
	}
	tmpl := "no chat template (plain completion)"
	if i.ChatTemplate {
		tmpl = "chat template: yes"
	}
	line1 = fmt.Sprintf("%s · %s params · %s · %s · %d blocks", i.Arch, humanCount(i.Params), i.Quant, humanBytes(i.FileSize), i.NLayers)
	line2 = fmt.Sprintf("trained ctx %d · %s · tokenizer %s, %d tokens · file type %s", i.NCtxTrain, tmpl, i.TokenizerModel, i.VocabSize, i.FileType)
	return i.Name, line1, line2
}

// DeviceLines describe the device and the budget.
func (c *Controller) DeviceLines() (device, budget string) {
	switch d := c.device.(type) {
	case devices.Reported:
		name := d.Name
		if name == "" {
			name = d.Label()
		}
		device = fmt.Sprintf("%s · free %s of %s", name, humanBytes(int64(d.Free)), humanBytes(int64(d.Total)))
	case devices.QueryFailed:
		device = fmt.Sprintf("Could not read GPU memory: %v", d.Err)
	case devices.NoDevice:
		device = fmt.Sprintf("No GPU found (%s)", d.Reason)
	case nil:
		return "", ""
	}
	switch {
	case c.view != nil && c.view.BudgetErr == nil && c.view.WeightBudget.Source != "":
		if _, none := c.device.(devices.NoDevice); none && c.budgetMiB == 0 {
			budget = "everything runs on the CPU"
		} else {
			budget = fmt.Sprintf("budget %s (%s)", mib(int64(c.view.WeightBudget.Bytes)), c.view.WeightBudget.Source)
		}
	case c.budgetMiB > 0:
		budget = fmt.Sprintf("budget %s (set by you, as %s)", mib(int64(c.budgetMiB)<<20), offload.EnvGPUMem)
	default:
		budget = "no budget: auto-fit needs the device's answer"
	}
	return device, budget
}

// SliderText names the slider's position.
func (c *Controller) SliderText() string {
	if c.info == nil {
		return ""
	}
	n := c.info.NLayers
	p := offload.NewPlan(c.GPULayers(), n)
	s := fmt.Sprintf("%d of %d blocks", p.DeviceBlocks(), n)
	if p.DeviceHoldsUnblocked() {
		s += " + output"
	}
	if p.GPULayers == 0 {
		s = fmt.Sprintf("0 of %d blocks (CPU only)", n)
	}
	if c.auto && c.view != nil {
		s += " · auto"
	}
	return s
}

// Readout is the live plan summary under the slider.
func (c *Controller) Readout() (string, ReadoutLevel) {
	if c.info == nil {
		return "", ReadoutOK
	}
	v := c.view
	if v == nil {
		if c.planErr != nil {
			return fmt.Sprintf("Auto-fit needs the device's answer (%v). Choose Run on CPU, Set a budget…, or move the slider.", c.deviceErr()), ReadoutWarn
		}
		return "", ReadoutOK
	}
	n := v.Plan.NLayers
	k := v.Plan.DeviceBlocks()
	if v.DeviceTotal() == 0 {
		return fmt.Sprintf("no blocks on GPU (0/%d) · everything runs on the CPU · KV cache %s in host memory", n, mib(v.HostKV)), ReadoutOK
	}
	var b strings.Builder
	if k > 0 {
		fmt.Fprintf(&b, "%s on GPU (%d/%d)", offload.BlockRange(0, k-1), k, n)
	} else {
		fmt.Fprintf(&b, "no blocks on GPU (0/%d)", n)
	}
	if v.Plan.DeviceHoldsUnblocked() {
		b.WriteString(" + output")
	}
	level := ReadoutOK
	if v.GateBudget.Limited {
		fmt.Fprintf(&b, " · %s of %s budget · KV cache %s · activations %s", mib(v.DeviceWeights), mib(v.GateBudget.Bytes), mib(v.DeviceKV), mib(v.Activations))
		if v.Refusal != nil {
			fmt.Fprintf(&b, " · over budget by %s", mib(v.Refusal.Over()))
			level = ReadoutOver
		} else {
			fmt.Fprintf(&b, " · headroom %s", mib(v.GateBudget.Bytes-v.DeviceTotal()))
		}
	} else {
		fmt.Fprintf(&b, " · %s weights · KV cache %s · activations %s · no budget enforced (the device did not answer)", mib(v.DeviceWeights), mib(v.DeviceKV), mib(v.Activations))
		level = ReadoutWarn
	}
	if len(v.Warnings) > 0 && level == ReadoutOK {
		level = ReadoutWarn
	}
	return b.String(), level
}

// Warnings are the plan's cautions (KV + activations beyond the held-back
// quarter, a clamped request).
func (c *Controller) Warnings() []string {
	if c.view == nil {
		return nil
	}
	w := append([]string(nil), c.view.Warnings...)
	if c.view.Note != "" {
		w = append(w, c.view.Note)
	}
	if c.info != nil && c.info.TemplateProblem != "" {
		w = append(w, c.info.TemplateProblem)
	}
	return w
}

// ---- load ----

// CanLoad: a plan exists and nothing is loading.
func (c *Controller) CanLoad() bool {
	return c.info != nil && c.phase != PhaseLoading && (c.phase != PhaseReady || c.NeedsReload())
}

// NeedsReload: the slider, context or budget changed since the load.
func (c *Controller) NeedsReload() bool {
	l := c.loaded
	if l == nil || c.phase != PhaseReady {
		return false
	}
	if l.ctx != c.ctxLen || l.budgetMiB != c.budgetMiB || l.auto != c.auto {
		return true
	}
	return !c.auto && l.layers != c.layers
}

// Load asks the worker to load the planned model. A plan over the budget
// is refused here with the same numbers core.Load would refuse with.
func (c *Controller) Load() {
	if !c.CanLoad() {
		return
	}
	if c.view == nil {
		if c.planErr != nil && errors.Is(c.planErr, offload.ErrDeviceQuery) {
			c.problem(DeviceQueryProblem{Err: c.deviceErr()})
		} else if c.planErr != nil {
			c.problem(LoadProblem{Err: c.planErr})
		}
		return
	}
	if c.view.Refusal != nil {
		c.problem(RefusalProblem{Refusal: c.view.Refusal, Fitting: c.view.LargestFitting()})
		return
	}
	c.cancelGeneration()
	ctx, cancel := context.WithCancel(context.Background())
	c.loadCancel = cancel
	c.loadID++
	c.phase = PhaseLoading
	c.progressDone, c.progressTotal = 0, 0
	c.loaded, c.loadLog = nil, nil
	c.loadingPlan = c.view.Plan
	opts := core.LoadOptions{PlanOptions: c.planOptions(), Threads: c.cfg.Threads}
	c.worker.send(loadRequest{id: c.loadID, ctx: ctx, path: c.info.Path, opts: opts})
	c.changed(ChangePlan | ChangeLoad)
}

// Reload opens path again and, when it still plans, loads it: the file
// changed dialog's offer. A file now damaged is the usual FileProblem.
func (c *Controller) Reload(path string) {
	c.OpenFile(path)
	if c.info != nil && c.info.Path == path && c.phase == PhasePlanned {
		c.Load()
	}
}

// UseBlocks takes the refusal dialog's offer and loads with n blocks.
func (c *Controller) UseBlocks(n int) {
	if c.info == nil {
		return
	}
	c.auto, c.layers = false, n
	c.replan()
	c.changed(ChangePlan)
	c.Load()
}

// CancelLoad stops a load in progress; the model stays planned.
func (c *Controller) CancelLoad() {
	if c.phase == PhaseLoading && c.loadCancel != nil {
		c.loadCancel()
	}
}

// Progress is the load's fraction done (0..1).
func (c *Controller) Progress() float64 {
	if c.progressTotal <= 0 {
		return 0
	}
	return float64(c.progressDone) / float64(c.progressTotal)
}

// ProgressText is "12.3 of 40.0 MiB".
func (c *Controller) ProgressText() string {
	return fmt.Sprintf("loading weights: %s of %s", humanBytes(c.progressDone), humanBytes(c.progressTotal))
}

// Loaded is the loaded model (nil unless Ready).
func (c *Controller) Loaded() *LoadedModel { return c.loaded }

// ReportText is the details pane: where blocks landed, measured bytes, the
// fallback reason, the memory accounting and the load's warnings.
func (c *Controller) ReportText() string {
	l := c.loaded
	if l == nil {
		return ""
	}
	var b strings.Builder
	if l.Report.Fallback != "" {
		// Say what was asked for: the report's own plan is the one that runs.
		fmt.Fprintf(&b, "asked for: %s on the GPU\n", placement(l.Planned))
	}
	b.WriteString(l.Report.String())
	for _, m := range l.Memory {
		fmt.Fprintf(&b, "memory %s: weights %s · pools %s (KV %s) · budget %s\n", m.Backend, mib(m.WeightsBytes), mib(m.PoolBytes), mib(m.PersistentBytes), m.Budget)
	}
	fmt.Fprintf(&b, "context %d tokens · %s\n", l.NCtx, l.Source)
	for _, s := range c.loadLog {
		b.WriteString(s + "\n")
	}
	return strings.TrimRight(b.String(), "\n")
}

// placement is "5/5 blocks + output".
func placement(p offload.Plan) string {
	s := fmt.Sprintf("%d/%d blocks", p.DeviceBlocks(), p.NLayers)
	if p.DeviceHoldsUnblocked() {
		s += " + output"
	}
	return s
}

// Summary is the one line the offload panel collapses to when Ready.
func (c *Controller) Summary() string {
	l := c.loaded
	if l == nil {
		return ""
	}
	r := l.Report
	var s string
	switch {
	case r.Fallback != "":
		s = fmt.Sprintf("CPU only — planned %s on GPU, fell back: %s", placement(l.Planned), r.Fallback)
	case r.Plan.DeviceBlocks() == 0 && !r.Plan.DeviceHoldsUnblocked():
		s = fmt.Sprintf("CPU only · %s weights", humanBytes(r.HostBytes))
	default:
		s = fmt.Sprintf("%s on GPU · %s", placement(r.Plan), humanBytes(r.DeviceBytes))
	}
	s += fmt.Sprintf(" · ctx %d", l.NCtx)
	if c.NeedsReload() {
		s += " · settings changed: Reload to apply"
	}
	return s
}

// ---- worker events ----

func (c *Controller) apply(ev any) {
	switch e := ev.(type) {
	case progressEvent:
		if e.id == c.loadID && c.phase == PhaseLoading {
			c.progressDone, c.progressTotal = e.done, e.total
			c.changed(ChangeLoad)
		}
	case loadedEvent:
		if e.id != c.loadID {
			return
		}
		c.loadCancel = nil
		c.phase = PhaseReady
		c.PanelExpanded = false
		c.loaded = &LoadedModel{Path: c.info.Path, Planned: c.loadingPlan, Report: e.report, Memory: e.memory, NCtx: e.nCtx, Template: e.template, Source: e.source,
			auto: c.auto, layers: c.layers, ctx: c.ctxLen, budgetMiB: c.budgetMiB}
		c.changed(ChangeLoad | ChangePlan | ChangeChat)
	case loadFailedEvent:
		if e.id != c.loadID {
			return
		}
		c.loadCancel = nil
		c.phase = PhasePlanned
		c.changed(ChangeLoad | ChangePlan | ChangeChat)
		var refusal *alloc.Refusal
		switch {
		case errors.Is(e.err, context.Canceled):
			// the user's Cancel: nothing to say
		case errors.As(e.err, &refusal):
			fit := 0
			if c.view != nil {
				fit = c.view.LargestFitting()
			}
			c.problem(RefusalProblem{Refusal: refusal, Fitting: fit})
		case errors.Is(e.err, offload.ErrDeviceQuery):
			c.problem(DeviceQueryProblem{Err: e.err})
		default:
			c.problem(LoadProblem{Err: e.err})
		}
	case logEvent:
		c.loadLog = append(c.loadLog, e.text)
	case tokenEvent:
		if e.id != c.genID || c.genChat == nil {
			return
		}
		last := &c.genChat.Messages[len(c.genChat.Messages)-1]
		last.Content += e.text
		if c.genChat == c.chat {
			c.changed(ChangeStream)
		}
	case replyEvent:
		c.finishReply(e)
	}
}

// ---- chat ----

// Chat is the open conversation.
func (c *Controller) Chat() *Chat { return c.chat }

// Chats is the sidebar list.
func (c *Controller) Chats() []ChatSummary { return c.chats }

// Generating reports a reply in progress.
func (c *Controller) Generating() bool { return c.generating }

// GeneratingHere: the reply in progress belongs to the open conversation.
func (c *Controller) GeneratingHere() bool { return c.generating && c.genChat == c.chat }

// CanSend: a model is loaded and idle.
func (c *Controller) CanSend() bool { return c.phase == PhaseReady && !c.generating }

// Sampling is the current generation settings.
func (c *Controller) Sampling() Sampling { return c.sampling }

func (c *Controller) newChat() *Chat {
	now := c.cfg.Now()
	return &Chat{ID: NewChatID(now), Title: "New chat", Created: now, Updated: now}
}

// NewChat starts an empty conversation (a reply in progress is stopped and
// kept in its own conversation).
func (c *Controller) NewChat() {
	c.saveIfEdited()
	c.cancelGeneration()
	system := c.chat.System // the system prompt carries over
	c.chat = c.newChat()
	c.chat.System = system
	c.changed(ChangeChat | ChangeChats)
}

// OpenChat switches to a saved conversation. The KV cache keeps what the
// two share, so switching costs only the differing suffix.
func (c *Controller) OpenChat(id string) {
	if id == c.chat.ID {
		return
	}
	ch, err := c.store.Load(id)
	if err != nil {
		var dmg *DamagedChatError
		if errors.As(err, &dmg) {
			c.problem(StoreProblem{Damaged: []DamagedFile{dmg.File}})
			c.refreshChats()
		} else {
			c.problem(StoreProblem{Err: err})
		}
		return
	}
	c.saveIfEdited()
	c.cancelGeneration()
	c.chat = ch
	c.changed(ChangeChat | ChangeChats)
}

// SetSystem sets the open conversation's system prompt. It is written with
// the conversation's next save (a send, a switch, closing), not per key.
func (c *Controller) SetSystem(s string) {
	if c.chat.System == s {
		return
	}
	c.chat.System = s
	c.systemDirty = true
}

// saveIfEdited keeps a system prompt edited since the last save.
func (c *Controller) saveIfEdited() {
	if c.systemDirty {
		c.save(c.chat)
	}
}

// Send adds a user message and starts the reply.
func (c *Controller) Send(text string) bool {
	text = strings.TrimRight(text, " \t\r\n")
	if strings.TrimSpace(text) == "" || !c.CanSend() {
		return false
	}
	c.chat.Messages = append(c.chat.Messages, ChatMessage{Role: "user", Content: text})
	c.startReply()
	return true
}

// Regenerate replaces the last reply with a new one.
func (c *Controller) Regenerate() bool {
	m := c.chat.Messages
	if !c.CanSend() || len(m) < 2 || m[len(m)-1].Role != "assistant" {
		return false
	}
	c.chat.Messages = m[:len(m)-1]
	c.startReply()
	return true
}

// LastUserIndex is the message Edit changes (-1: none).
func (c *Controller) LastUserIndex() int {
	for i := len(c.chat.Messages) - 1; i >= 0; i-- {
		if c.chat.Messages[i].Role == "user" {
			return i
		}
	}
	return -1
}

// EditLast replaces the last user message, drops what followed it, and
// asks again.
func (c *Controller) EditLast(text string) bool {
	i := c.LastUserIndex()
	if i < 0 || !c.CanSend() || strings.TrimSpace(text) == "" {
		return false
	}
	c.chat.Messages = c.chat.Messages[:i+1]
	c.chat.Messages[i].Content = strings.TrimRight(text, " \t\r\n")
	c.startReply()
	return true
}

// Stop ends the reply in progress; what was generated is kept.
func (c *Controller) Stop() { c.cancelGeneration() }

func (c *Controller) cancelGeneration() {
	if c.generating && c.genCancel != nil {
		c.genCancel()
	}
}

func (c *Controller) startReply() {
	ch := c.chat
	ch.Model = c.info.Path
	req := generateRequest{opts: c.genOptions()}
	if c.loaded.Template {
		if ch.System != "" {
			req.msgs = append(req.msgs, chat.Message{Role: "system", Content: ch.System})
		}
		for _, m := range ch.Messages {
			req.msgs = append(req.msgs, chat.Message{Role: m.Role, Content: m.Content})
		}
	} else {
		// No template (e.g. stories260K): the user's text is a prompt to
		// continue.
		req.complete = true
		req.prompt = ch.Messages[len(ch.Messages)-1].Content
	}
	ch.Messages = append(ch.Messages, ChatMessage{Role: "assistant"})
	ctx, cancel := context.WithCancel(context.Background())
	c.genID++
	req.id, req.ctx = c.genID, ctx
	c.genCancel, c.genChat, c.generating = cancel, ch, true
	c.worker.send(req)
	c.save(ch)
	c.changed(ChangeChat | ChangeChats)
}

func (c *Controller) genOptions() chat.GenOptions {
	s := c.sampling.Sampler
	if c.sampling.RandomSeed {
		s.Seed = rand.Uint64()
	}
	return chat.GenOptions{Sampler: s, MaxTokens: c.sampling.MaxTokens}
}

func (c *Controller) finishReply(e replyEvent) {
	if e.id != c.genID || c.genChat == nil {
		return
	}
	ch := c.genChat
	c.generating, c.genChat = false, nil
	if c.genCancel != nil {
		c.genCancel()
		c.genCancel = nil
	}
	if errors.Is(e.err, core.ErrModelFileChanged) {
		// The worker has closed the session: back to the plan, with a
		// dialog offering to load the file again.
		path := c.info.Path
		c.loaded, c.phase = nil, PhasePlanned
		c.problem(FileChangedProblem{Path: path, Err: e.err})
		c.changed(ChangeLoad | ChangePlan)
	}
	last := &ch.Messages[len(ch.Messages)-1]
	if e.text != "" || e.err == nil {
		last.Content = e.text // the worker's full text is authoritative
	}
	st := e.stats
	last.Stats = &ReplyStats{PromptTokens: st.PromptTokens, ReusedTokens: st.ReusedTokens, PrefillTokens: st.PrefillTokens,
		Generated: st.Generated, GenRate: st.GenRate(), PrefillRate: st.PrefillRate(), StopReason: st.StopReason,
		Dropped: st.DroppedMessages, CtxUsed: e.cached, CtxLen: e.nCtx}
	switch {
	case e.err != nil:
		last.Note = fmt.Sprintf("Error: the reply ended early: %v — the conversation is kept; Regenerate to try again", e.err)
	case st.StopReason == chat.StopCancelled:
		last.Note = "stopped"
	case st.StopReason == chat.StopMaxTokens:
		last.Note = fmt.Sprintf("stopped at the %d-token limit (sampling settings)", c.sampling.MaxTokens)
	case st.StopReason == chat.StopContext:
		last.Note = "the context is full: start a new chat or load with a longer context"
	default:
		last.Note = ""
	}
	if st.DroppedMessages > 0 {
		last.Note = strings.TrimPrefix(last.Note+fmt.Sprintf(" · %d oldest messages left out to fit the context", st.DroppedMessages), " · ")
	}
	c.save(ch)
	c.changed(ChangeChat | ChangeChats)
}

// StatsText is the line above the input: tokens, speed, context use.
func (c *Controller) StatsText() string {
	if c.GeneratingHere() {
		last := c.chat.Messages[len(c.chat.Messages)-1]
		return fmt.Sprintf("generating… %d characters", len([]rune(last.Content)))
	}
	for i := len(c.chat.Messages) - 1; i >= 0; i-- {
		if st := c.chat.Messages[i].Stats; st != nil {
			s := fmt.Sprintf("%d tokens · %.1f tok/s · prompt %d (%d reused, %.0f tok/s)", st.Generated, st.GenRate, st.PromptTokens, st.ReusedTokens, st.PrefillRate)
			if st.CtxLen > 0 {
				s += fmt.Sprintf(" · ctx %d / %d", st.CtxUsed, st.CtxLen)
			}
			return s + " · " + st.StopReason
		}
	}
	return ""
}

func (c *Controller) save(ch *Chat) {
	if len(ch.Messages) == 0 {
		return
	}
	if ch == c.chat {
		c.systemDirty = false
	}
	ch.Title = chatTitle(ch.Messages)
	ch.Updated = c.cfg.Now()
	if err := c.store.Save(ch); err != nil {
		c.problem(StoreProblem{Err: err})
		return
	}
	c.refreshChats()
}

// refreshChats re-reads the store's list; files found damaged are set aside
// and reported.
func (c *Controller) refreshChats() {
	list, damaged, err := c.store.List()
	c.chats = list
	c.changed(ChangeChats)
	if len(damaged) > 0 || err != nil {
		c.problem(StoreProblem{Damaged: damaged, Err: err})
	}
}

// ---- sampling settings ----

func (c *Controller) samplingPath() string { return filepath.Join(c.configDir, "sampling.json") }

func (c *Controller) loadSampling() {
	b, err := os.ReadFile(c.samplingPath())
	if err != nil {
		return
	}
	s := DefaultSampling()
	if json.Unmarshal(b, &s) == nil && s.Validate() == nil {
		c.sampling = s
	}
}

// SetSampling validates and keeps the settings.
func (c *Controller) SetSampling(s Sampling) error {
	if err := s.Validate(); err != nil {
		return err
	}
	c.sampling = s
	b, _ := json.MarshalIndent(s, "", "  ")
	if err := writeFileAtomic(c.samplingPath(), b); err != nil {
		return fmt.Errorf("settings kept for this session, not saved: %w", err)
	}
	c.changed(ChangeSampling)
	return nil
}

// ---- recent models ----

const recentKey = "recent_models"
const recentMax = 8

// RecentModel is one entry of the recent list.
type RecentModel struct {
	Path    string
	Missing bool
}

// Recent lists recent models, marking files that are gone.
func (c *Controller) Recent() []RecentModel {
	if c.cfg.Prefs == nil {
		return nil
	}
	var out []RecentModel
	for _, p := range c.cfg.Prefs.StringList(recentKey) {
		_, err := os.Stat(p)
		out = append(out, RecentModel{Path: p, Missing: err != nil})
	}
	return out
}

func (c *Controller) addRecent(path string) {
	if c.cfg.Prefs == nil {
		return
	}
	if abs, err := filepath.Abs(path); err == nil {
		path = abs
	}
	list := []string{path}
	for _, p := range c.cfg.Prefs.StringList(recentKey) {
		if p != path && len(list) < recentMax {
			list = append(list, p)
		}
	}
	c.cfg.Prefs.SetStringList(recentKey, list)
}
