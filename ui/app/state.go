package app

import "github.com/minfer/minfer/internal/alloc"

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

// TemplateProblem: the model's chat template failed on the conversation
// (it raised, or broke the engine's limits); the built-in template of
// Fallback can be used instead.
type TemplateProblem struct {
	Err      error
	Fallback string
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
func (TemplateProblem) isProblem()    {}
