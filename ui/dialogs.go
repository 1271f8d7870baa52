//go:build !nogui

package ui

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/dialog"
	"fyne.io/fyne/v2/widget"

	"github.com/minfer/minfer/core/chat"
	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/ui/app"
)

// shownDialog is the dialog on screen, kept so tests can read its text and
// press its buttons.
type shownDialog struct {
	kind    string // "file", "refusal", "device", "load", "store", "budget", "sampling"
	title   string
	text    *widget.Label
	buttons []*widget.Button
	entries map[string]*widget.Entry
	errText *widget.Label
	d       *dialog.CustomDialog
}

func (s *shownDialog) button(label string) *widget.Button {
	for _, b := range s.buttons {
		if b.Text == label || strings.HasPrefix(b.Text, label) {
			return b
		}
	}
	return nil
}

// dialogButton is a button's label, importance and action; the dialog
// closes before the action runs.
type dialogButton struct {
	label      string
	importance widget.Importance
	action     func()
}

// minWidth keeps dialogs from becoming one tall column of wrapped words.
func minWidth(w float32, o fyne.CanvasObject) fyne.CanvasObject {
	spacer := canvas.NewRectangle(nil)
	spacer.SetMinSize(fyne.NewSize(w, 0))
	return container.NewStack(spacer, o)
}

func (v *view) showDialog(kind, title, text string, extra fyne.CanvasObject, buttons ...dialogButton) *shownDialog {
	if v.dlg != nil && v.dlg.d != nil {
		v.dlg.d.Hide()
	}
	sd := &shownDialog{kind: kind, title: title, entries: map[string]*widget.Entry{}}
	sd.text = widget.NewLabel(text)
	sd.text.Wrapping = fyne.TextWrapWord
	content := container.NewVBox(sd.text)
	if extra != nil {
		content.Add(extra)
	}
	sd.d = dialog.NewCustomWithoutButtons(title, minWidth(520, content), v.win)
	var objs []fyne.CanvasObject
	for _, b := range buttons {
		act := b.action
		btn := widget.NewButton(b.label, func() {
			sd.d.Hide()
			if v.dlg == sd {
				v.dlg = nil
			}
			if act != nil {
				act()
			}
		})
		btn.Importance = b.importance
		sd.buttons = append(sd.buttons, btn)
		objs = append(objs, btn)
	}
	sd.d.SetButtons(objs)
	v.dlg = sd
	sd.d.Show()
	return sd
}

// showProblem turns a controller Problem into its dialog: what happened, the numbers, and what the user can do next.
func (v *view) showProblem(p app.Problem) {
	switch p := p.(type) {
	case app.FileProblem:
		v.showDialog("file", "Cannot open "+filepath.Base(p.Path),
			fmt.Sprintf("%s is not a model Minfer can open:\n\n%v\n\nNothing was changed.", p.Path, p.Err), nil,
			dialogButton{label: "OK", importance: widget.HighImportance})
	case app.RefusalProblem:
		r := p.Refusal
		text := fmt.Sprintf("Not enough GPU memory for this plan.\n\nweights %s + pooled %s + request %s > budget %s (over by %s).",
			app.MiB(r.Weights), app.MiB(r.Pooled), app.MiB(r.Request), app.MiB(r.Budget), app.MiB(r.Over()))
		use := fmt.Sprintf("Use %d blocks", p.Fitting)
		if p.Fitting == 0 {
			use = "Use 0 blocks (CPU only)"
		}
		n := p.Fitting
		v.showDialog("refusal", "Not enough GPU memory", text, nil,
			dialogButton{label: "Cancel"},
			dialogButton{label: use, importance: widget.HighImportance, action: func() { v.c.UseBlocks(n) }})
	case app.DeviceQueryProblem:
		text := fmt.Sprintf("Could not read GPU memory: %v.\n\nAuto-fit needs the device's answer. Run everything on the CPU, or set a GPU memory budget yourself (like %s).",
			p.Err, offload.EnvGPUMem)
		v.showDialog("device", "GPU memory unknown", text, nil,
			dialogButton{label: "Close", importance: widget.LowImportance},
			dialogButton{label: "Set a budget…", action: v.showBudgetDialog},
			dialogButton{label: "Run on CPU", importance: widget.HighImportance, action: v.c.RunOnCPU})
	case app.RemoteProblem:
		v.showDialog("remote", "Cannot use the server", fmt.Sprintf("%v\n\nCheck the address and the API key, and that the server is running.", p.Err), nil,
			dialogButton{label: "Close"},
			dialogButton{label: "Connect…", importance: widget.HighImportance, action: v.showConnectDialog})
	case app.LoadProblem:
		v.showDialog("load", "Loading failed", fmt.Sprintf("The model could not be loaded:\n\n%v", p.Err), nil,
			dialogButton{label: "OK", importance: widget.HighImportance})
	case app.FileChangedProblem:
		v.showDialog("changed", "The model file changed", fmt.Sprintf("The model was unloaded because its file changed on disk while it was in use:\n\n%v\n\nThe conversation is kept. Reload the file to go on.", p.Err), nil,
			dialogButton{label: "Close", importance: widget.LowImportance},
			dialogButton{label: "Reload", importance: widget.HighImportance, action: func() { v.c.Reload(p.Path) }})
	case app.TemplateProblem:
		text := fmt.Sprintf("This model's chat template cannot render this conversation:\n\n%v\n\n"+
			"Minfer's built-in %s template can be used instead: it writes the same kind of prompt, without the model's own extras.", p.Err, p.Fallback)
		family := p.Fallback
		v.showDialog("template", "Chat template failed", text, nil,
			dialogButton{label: "Cancel"},
			dialogButton{label: "Use the built-in " + family + " template", importance: widget.HighImportance, action: func() { v.c.UseBuiltinTemplate(family) }})
	case app.StoreProblem:
		var b strings.Builder
		if len(p.Damaged) > 0 {
			b.WriteString("These conversation files could not be read. They were moved aside, not deleted:\n")
			for _, d := range p.Damaged {
				fmt.Fprintf(&b, "\n• %s\n   %s\n", d.Path, d.Problem)
			}
		}
		if p.Err != nil {
			if b.Len() > 0 {
				b.WriteString("\n")
			}
			fmt.Fprintf(&b, "Conversation storage failed: %v", p.Err)
		}
		v.showDialog("store", "Conversations", strings.TrimSpace(b.String()), nil,
			dialogButton{label: "OK", importance: widget.HighImportance})
	}
}

// formError is a form dialog's error line, hidden until failed shows it.
func formError() *widget.Label {
	l := widget.NewLabel("")
	l.Wrapping = fyne.TextWrapWord
	l.Importance = widget.DangerImportance
	l.Hide()
	return l
}

// failed shows msg under the form and the dialog again (its button closed
// it), so the user can correct the entry.
func (v *view) failed(sd *shownDialog, msg string) {
	sd.errText.SetText(msg)
	sd.errText.Show()
	sd.d.Show()
	v.dlg = sd
}

// showBudgetDialog asks for a GPU memory budget in MiB (MINFER_GPU_MEM).
func (v *view) showBudgetDialog() {
	entry := widget.NewEntry()
	entry.SetPlaceHolder("e.g. 4096")
	if v.c.BudgetMiB() > 0 {
		entry.SetText(strconv.Itoa(v.c.BudgetMiB()))
	}
	errLabel := formError()
	var sd *shownDialog
	apply := func() {
		n, err := strconv.Atoi(strings.TrimSpace(entry.Text))
		if err == nil && n <= 0 {
			err = errors.New("want more than 0")
		}
		if err == nil {
			err = v.c.SetBudget(n)
		}
		if err != nil {
			v.failed(sd, fmt.Sprintf("%q is not a budget: use a whole number of MiB, e.g. 4096", entry.Text))
		}
	}
	form := container.NewVBox(widget.NewForm(widget.NewFormItem("GPU budget (MiB)", entry)), errLabel)
	sd = v.showDialog("budget", "Set a GPU memory budget",
		"How much GPU memory may Minfer use for weights, KV cache and activations? The number is used as is, like "+offload.EnvGPUMem+".",
		form,
		dialogButton{label: "Cancel"},
		dialogButton{label: "Use budget", importance: widget.HighImportance, action: apply})
	sd.entries["budget"] = entry
	sd.errText = errLabel
	entry.OnSubmitted = func(string) { sd.buttons[1].OnTapped() }
	v.win.Canvas().Focus(entry)
}

// showSamplingDialog edits the generation settings.
func (v *view) showSamplingDialog() {
	s := v.c.Sampling()
	f32 := func(x float32) string { return strconv.FormatFloat(float64(x), 'g', -1, 32) }
	fields := []struct {
		key, label, value, hint string
	}{
		{"temperature", "Temperature", f32(s.Sampler.Temperature), "0 = always the most likely token"},
		{"top_k", "Top-k", strconv.Itoa(s.Sampler.TopK), "0 = off"},
		{"top_p", "Top-p", f32(s.Sampler.TopP), "0..1, 1 = off"},
		{"min_p", "Min-p", f32(s.Sampler.MinP), "0..1, 0 = off"},
		{"repeat_penalty", "Repetition penalty", f32(s.Sampler.RepeatPenalty), "1 = off"},
		{"repeat_last_n", "Penalty looks back", strconv.Itoa(s.Sampler.RepeatLastN), "tokens; -1 = all"},
		{"seed", "Seed", "", "empty = a new seed for every reply"},
		{"max_tokens", "Max tokens", strconv.Itoa(s.MaxTokens), "0 = until the end of the turn"},
	}
	if !s.RandomSeed {
		fields[6].value = strconv.FormatUint(s.Sampler.Seed, 10)
	}
	form := widget.NewForm()
	entries := map[string]*widget.Entry{}
	for _, f := range fields {
		e := widget.NewEntry()
		e.SetText(f.value)
		e.SetPlaceHolder(f.hint)
		entries[f.key] = e
		item := widget.NewFormItem(f.label, e)
		item.HintText = f.hint
		form.AppendItem(item)
	}
	errLabel := formError()
	var sd *shownDialog
	save := func() {
		got, err := parseSampling(entries)
		if err == nil {
			err = v.c.SetSampling(got)
		}
		if err != nil {
			v.failed(sd, err.Error())
		}
	}
	reset := func() {
		d := app.DefaultSampling()
		_ = v.c.SetSampling(d)
		v.showSamplingDialog()
	}
	sd = v.showDialog("sampling", "Sampling settings", "How the next token is picked. The defaults suit most chat models.",
		container.NewVBox(form, errLabel),
		dialogButton{label: "Defaults", importance: widget.LowImportance, action: reset},
		dialogButton{label: "Cancel"},
		dialogButton{label: "Save", importance: widget.HighImportance, action: save})
	sd.entries = entries
	sd.errText = errLabel
}

// parseSampling reads the sampling form; every error names the field.
func parseSampling(e map[string]*widget.Entry) (app.Sampling, error) {
	s := app.DefaultSampling()
	var errs []error
	f32 := func(key, name string, dst *float32) {
		x, err := strconv.ParseFloat(strings.TrimSpace(e[key].Text), 32)
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not a number", name, e[key].Text))
			return
		}
		*dst = float32(x)
	}
	integer := func(key, name string, dst *int) {
		x, err := strconv.Atoi(strings.TrimSpace(e[key].Text))
		if err != nil {
			errs = append(errs, fmt.Errorf("%s: %q is not a whole number", name, e[key].Text))
			return
		}
		*dst = x
	}
	f32("temperature", "temperature", &s.Sampler.Temperature)
	integer("top_k", "top-k", &s.Sampler.TopK)
	f32("top_p", "top-p", &s.Sampler.TopP)
	f32("min_p", "min-p", &s.Sampler.MinP)
	f32("repeat_penalty", "repetition penalty", &s.Sampler.RepeatPenalty)
	integer("repeat_last_n", "penalty look-back", &s.Sampler.RepeatLastN)
	integer("max_tokens", "max tokens", &s.MaxTokens)
	if seed := strings.TrimSpace(e["seed"].Text); seed == "" {
		s.RandomSeed = true
	} else if x, err := strconv.ParseUint(seed, 10, 64); err != nil {
		errs = append(errs, fmt.Errorf("seed: %q is not a whole number of 0 or more (leave it empty for a new seed each reply)", seed))
	} else {
		s.RandomSeed, s.Sampler.Seed = false, x
	}
	if err := errors.Join(errs...); err != nil {
		return s, err
	}
	if err := s.Validate(); err != nil {
		// Drop the package prefix; the rest names the field and the range.
		return s, errors.New(strings.TrimPrefix(err.Error(), chat.ErrSamplerSettings.Error()+": "))
	}
	return s, nil
}
