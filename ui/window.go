//go:build !nogui

package ui

import (
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/minfer/minfer/ui/app"
	uiwidget "github.com/minfer/minfer/ui/internal/widget"
)

// view is the window: thin widgets over the Controller. Widgets are fields
// so tests can tap and type into them.
type view struct {
	c    *app.Controller
	app  fyne.App
	win  fyne.Window
	post func(func()) // runs a function on the UI goroutine (Config.Post)

	// remote: connect to a server, serve the loaded model (remoteview.go)
	connectBtn *widget.Button
	serveCheck *widget.Check
	serveAddr  *widget.Entry
	copyBtn    *widget.Button
	serveRow   *fyne.Container
	// the panel while chatting through a server
	remotePanel *fyne.Container
	remoteModel *widget.Select
	remoteText  *widget.Label

	// top bar
	openBtn    *widget.Button
	modelLabel *widget.Label
	recentBtn  *widget.Button

	// sidebar
	newChatBtn *widget.Button
	chatList   *widget.List
	chatIDs    []string

	// empty state
	emptyState   *fyne.Container
	emptyOpenBtn *widget.Button
	recentBox    *fyne.Container

	// model panel
	cardTitle, cardFacts   *widget.Label
	deviceLine, budgetLine *widget.Label
	bar                    *uiwidget.OffloadBar
	barInfo                *widget.Label
	slider                 *widget.Slider
	sliderText             *widget.Label
	autoBtn                *widget.Button
	ctxSelect              *widget.Select
	readout                *widget.Label
	warnings               *widget.Label
	firstNote              *widget.Label
	loadBtn                *widget.Button
	progress               *widget.ProgressBar
	progressText           *widget.Label
	cancelBtn              *widget.Button
	progressRow            *fyne.Container
	reportLabel            *widget.Label
	details                *widget.Accordion
	panel                  *fyne.Container
	summaryBtn             *widget.Button
	summaryText            *widget.Label
	summaryRow             *fyne.Container
	panelHolder            *fyne.Container

	// chat
	systemEntry *chatInput
	msgBox      *fyne.Container
	msgScroll   *container.Scroll
	msgViews    []*messageView
	chatHint    *widget.Label
	statsLabel  *widget.Label
	editBanner  *widget.Label
	input       *chatInput
	sendBtn     *widget.Button
	stopBtn     *widget.Button
	samplingBtn *widget.Button
	editing     bool
	modelChat   *fyne.Container

	dlg            *shownDialog
	updating       bool // set while refresh writes widgets, so their callbacks stay quiet
	noNativeDialog bool // the native file dialog failed once: use Fyne's
	shownChatID    string
	lastPhase      app.Phase
}

func newView(a fyne.App, w fyne.Window, cfg app.Config) (*view, error) {
	c, err := app.NewController(cfg)
	if err != nil {
		return nil, err
	}
	v := &view{c: c, app: a, win: w, post: cfg.Post}
	v.build()
	c.OnChange = v.refresh
	c.OnProblem = v.showProblem
	w.SetOnDropped(func(_ fyne.Position, uris []fyne.URI) { v.handleDrop(uris) })
	v.addShortcuts()
	c.Start()
	v.refresh(^app.Change(0))
	return v, nil
}

// handleDrop opens the first dropped file.
func (v *view) handleDrop(uris []fyne.URI) {
	if len(uris) == 0 {
		return
	}
	u := uris[0]
	if u.Scheme() != "file" {
		v.showProblem(app.FileProblem{Path: u.String(), Err: fmt.Errorf("only local files can be opened, not %s", u.Scheme())})
		return
	}
	v.c.OpenFile(u.Path())
}

// heading is a section name: small and bold, in the normal text colour
// (LowImportance is too faint to read in the light theme).
func heading(s string) *widget.Label {
	l := widget.NewLabelWithStyle(s, fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	l.SizeName = theme.SizeNameCaptionText
	return l
}

// caption is secondary text that must still be readable.
func caption(s string) *widget.Label {
	l := widget.NewLabel(s)
	l.SizeName = theme.SizeNameCaptionText
	l.Wrapping = fyne.TextWrapWord
	return l
}

func wrapped(s string) *widget.Label {
	l := widget.NewLabel(s)
	l.Wrapping = fyne.TextWrapWord
	return l
}

func (v *view) build() {
	top := v.buildTopBar()
	sidebar := v.buildSidebar()
	v.buildEmptyState()
	v.buildModelPanel()
	v.modelChat = container.NewBorder(container.NewVBox(v.panelHolder, v.serveRow), nil, nil, nil, v.buildChatPanel())
	right := container.NewStack(v.emptyState, v.modelChat)
	split := container.NewHSplit(sidebar, container.NewPadded(right))
	split.Offset = 0.2
	v.win.SetContent(container.NewBorder(container.NewVBox(top, widget.NewSeparator()), nil, nil, nil, split))
}

// barLegend is the line under the bar when nothing is hovered.
func (v *view) barLegend() string {
	if v.c.PlanView() == nil {
		return ""
	}
	return "coloured: on the GPU · lighter: KV cache and activations · grey: on the CPU · hover a block for its size"
}

// ---- refresh ----

func (v *view) refresh(ch app.Change) {
	v.updating = true
	defer func() { v.updating = false }()
	c := v.c
	if ch&(app.ChangeModel|app.ChangeLoad) != 0 {
		v.refreshTop()
		v.refreshRemote()
	}
	if ch&app.ChangeRecent != 0 {
		v.refreshRecent()
	}
	if ch&(app.ChangeModel|app.ChangePlan|app.ChangeLoad) != 0 {
		v.refreshPanel()
	}
	if ch&app.ChangeChats != 0 {
		v.refreshChats()
	}
	if ch&(app.ChangeChat|app.ChangeLoad) != 0 {
		v.refreshChat()
	} else if ch&app.ChangeStream != 0 {
		v.refreshStream()
	}
	if ch&(app.ChangeChat|app.ChangeLoad|app.ChangeStream|app.ChangeModel) != 0 {
		v.refreshInput()
	}
	if c.Phase() != v.lastPhase {
		// A finished load hands the keyboard to the message box.
		if c.Phase() == app.PhaseReady {
			v.win.Canvas().Focus(v.input)
		}
		v.lastPhase = c.Phase()
	}
}

func (v *view) refreshTop() {
	c := v.c
	if r := c.Remote(); r != nil {
		v.modelLabel.SetText(fmt.Sprintf("server: %s · model %s", r.URL, r.Model))
		v.win.SetTitle("Minfer — " + r.Model + " on " + r.URL)
		v.emptyState.Hide()
		v.modelChat.Show()
		return
	}
	if c.Info() == nil {
		v.modelLabel.SetText("no model")
		v.win.SetTitle("Minfer")
		v.emptyState.Show()
		v.modelChat.Hide()
		return
	}
	info := c.Info()
	state := map[app.Phase]string{app.PhasePlanned: "not loaded", app.PhaseLoading: "loading…", app.PhaseReady: "loaded"}[c.Phase()]
	v.modelLabel.SetText(fmt.Sprintf("model: %s %s · %s · %s", info.Name, info.Quant, filepath.Base(info.Path), state))
	v.win.SetTitle("Minfer — " + info.Name)
	v.emptyState.Hide()
	v.modelChat.Show()
}

func (v *view) refreshRecent() {
	v.recentBox.RemoveAll()
	recent := v.c.Recent()
	if len(recent) == 0 {
		return
	}
	v.recentBox.Add(heading("RECENT MODELS"))
	for _, r := range recent {
		path := r.Path
		label := filepath.Base(path) + "  —  " + filepath.Dir(path)
		b := widget.NewButtonWithIcon(label, theme.FileIcon(), func() { v.c.OpenFile(path) })
		b.Alignment = widget.ButtonAlignLeading
		b.Importance = widget.LowImportance
		if r.Missing {
			b.SetText(label + "  (missing)")
			b.Disable()
		}
		v.recentBox.Add(b)
	}
}

func (v *view) showRecentMenu() {
	var items []*fyne.MenuItem
	for _, r := range v.c.Recent() {
		path := r.Path
		label := filepath.Base(path)
		if r.Missing {
			label += " (missing)"
		}
		it := fyne.NewMenuItem(label, func() { v.c.OpenFile(path) })
		it.Disabled = r.Missing
		items = append(items, it)
	}
	if len(items) == 0 {
		items = append(items, &fyne.MenuItem{Label: "no recent models", Disabled: true})
	}
	pos := fyne.CurrentApp().Driver().AbsolutePositionForObject(v.recentBtn)
	widget.ShowPopUpMenuAtPosition(fyne.NewMenu("", items...), v.win.Canvas(), pos.Add(fyne.NewPos(0, v.recentBtn.Size().Height)))
}

func setImportance(l *widget.Label, imp widget.Importance) {
	if l.Importance != imp {
		l.Importance = imp
		l.Refresh()
	}
}

func (v *view) refreshPanel() {
	c := v.c
	if c.Remote() != nil {
		// Nothing to plan here: the panel says where it runs.
		v.refreshRemotePanel()
		return
	}
	if c.Info() == nil {
		return
	}
	title, l1, l2 := c.CardLines()
	v.cardTitle.SetText(title)
	v.cardFacts.SetText(l1 + "\n" + l2)
	dev, budget := c.DeviceLines()
	v.deviceLine.SetText(dev)
	v.budgetLine.SetText(budget)
	if c.PlanErr() != nil && c.PlanView() == nil {
		setImportance(v.deviceLine, widget.WarningImportance)
	} else {
		setImportance(v.deviceLine, widget.MediumImportance)
	}
	v.bar.SetModel(app.OffloadBarModel(c.PlanView()))
	v.barInfo.SetText(v.barLegend())

	v.slider.Max = float64(c.SliderMax())
	v.slider.SetValue(float64(c.GPULayers()))
	v.slider.Refresh()
	if c.SliderEnabled() {
		v.slider.Enable()
	} else {
		v.slider.Disable()
	}
	v.sliderText.SetText(c.SliderText())
	if c.Phase() == app.PhaseLoading {
		v.autoBtn.Disable()
		v.ctxSelect.Disable()
	} else {
		v.autoBtn.Enable()
		v.ctxSelect.Enable()
	}
	var opts []string
	for _, n := range app.ContextChoices(c.Info().NCtxTrain) {
		opts = append(opts, strconv.Itoa(n))
	}
	v.ctxSelect.SetOptions(opts)
	v.ctxSelect.SetSelected(strconv.Itoa(c.CtxLen()))

	text, level := c.Readout()
	v.readout.SetText(text)
	switch level {
	case app.ReadoutOver:
		setImportance(v.readout, widget.DangerImportance)
	case app.ReadoutWarn:
		setImportance(v.readout, widget.WarningImportance)
	default:
		setImportance(v.readout, widget.MediumImportance)
	}
	if w := c.Warnings(); len(w) > 0 {
		v.warnings.SetText(strings.Join(w, "\n"))
		v.warnings.Show()
	} else {
		v.warnings.Hide()
	}

	switch {
	case c.Phase() == app.PhaseReady && c.NeedsReload():
		v.loadBtn.SetText("Reload (Ctrl+L)")
		v.loadBtn.Enable()
	case c.Phase() == app.PhaseReady:
		v.loadBtn.SetText("Loaded")
		v.loadBtn.Disable()
	case c.Phase() == app.PhaseLoading:
		v.loadBtn.SetText("Loading…")
		v.loadBtn.Disable()
	default:
		v.loadBtn.SetText("Load (Ctrl+L)")
		v.loadBtn.Enable()
	}
	if c.Phase() == app.PhaseLoading {
		v.progress.SetValue(c.Progress())
		v.progressText.SetText(c.ProgressText())
		v.progressRow.Show()
	} else {
		v.progressRow.Hide()
	}
	if rep := c.ReportText(); rep != "" {
		v.reportLabel.SetText(rep)
		v.details.Show()
	} else {
		v.details.Hide()
	}

	// Ready collapses the panel to one line that expands on click.
	var want fyne.CanvasObject = v.panel
	if c.Phase() == app.PhaseReady && !c.PanelExpanded {
		v.summaryText.SetText(c.Summary())
		if c.Loaded().Report.Fallback != "" {
			setImportance(v.summaryText, widget.WarningImportance)
		} else {
			setImportance(v.summaryText, widget.MediumImportance)
		}
		want = v.summaryRow
	}
	if len(v.panelHolder.Objects) != 1 || v.panelHolder.Objects[0] != want {
		v.panelHolder.Objects = []fyne.CanvasObject{want}
		v.panelHolder.Refresh()
	}
}

func (v *view) refreshChats() {
	chats := v.c.Chats()
	v.chatIDs = v.chatIDs[:0]
	sel := -1
	for i, ch := range chats {
		v.chatIDs = append(v.chatIDs, ch.ID)
		if ch.ID == v.c.Chat().ID {
			sel = i
		}
	}
	v.chatList.Refresh()
	if sel >= 0 {
		v.chatList.Select(sel)
	} else {
		v.chatList.UnselectAll()
	}
}

func (v *view) refreshChat() {
	c := v.c
	ch := c.Chat()
	if v.systemEntry.Text != ch.System {
		v.systemEntry.SetText(ch.System)
	}
	v.msgViews = v.msgViews[:0]
	v.msgBox.RemoveAll()
	lastUser := c.LastUserIndex()
	results := map[string]app.ChatMessage{}
	for _, m := range ch.Messages {
		if m.Role == "tool" && m.ToolCallID != "" {
			results[m.ToolCallID] = m
		}
	}
	for i, m := range ch.Messages {
		mv := newMessageView(m, results)
		text := m.Content
		mv.copyBtn.OnTapped = func() { v.app.Clipboard().SetContent(text) }
		last := i == len(ch.Messages)-1
		if m.Role == "assistant" && last && !c.Generating() && c.Phase() == app.PhaseReady {
			mv.regenBtn.OnTapped = func() { c.Regenerate() }
			mv.regenBtn.Show()
		}
		if i == lastUser && !c.Generating() && c.Phase() == app.PhaseReady {
			mv.editBtn.OnTapped = func() { v.startEdit(text) }
			mv.editBtn.Show()
		}
		v.msgViews = append(v.msgViews, mv)
		v.msgBox.Add(mv.box)
	}
	v.shownChatID = ch.ID
	v.scrollToEnd()
	v.refreshHint()
}

func (v *view) refreshHint() {
	c := v.c
	hint := ""
	switch {
	case len(c.Chat().Messages) > 0:
	case c.Phase() != app.PhaseReady:
		hint = "Load the model to chat with it."
	case c.Loaded() != nil && !c.Loaded().Template:
		hint = "This model has no chat template: what you type is a prompt it continues (e.g. \"Once upon a time\")."
	default:
		hint = "Say something."
	}
	v.chatHint.SetText(hint)
	if hint == "" {
		v.chatHint.Hide()
	} else {
		v.chatHint.Show()
	}
}

// refreshStream updates only the growing reply.
func (v *view) refreshStream() {
	ch := v.c.Chat()
	if len(v.msgViews) != len(ch.Messages) || v.shownChatID != ch.ID {
		v.refreshChat()
		return
	}
	last := ch.Messages[len(ch.Messages)-1]
	v.msgViews[len(v.msgViews)-1].setContent(last.Content)
	v.scrollToEnd()
	v.statsLabel.SetText(v.c.StatsText())
}

// scrollToEnd scrolls once now and once more after the next layout, when
// wrapped text and notes have their final height.
func (v *view) scrollToEnd() {
	v.msgScroll.ScrollToBottom()
	v.post(v.msgScroll.ScrollToBottom)
}

func (v *view) refreshInput() {
	c := v.c
	if c.GeneratingHere() {
		v.sendBtn.Hide()
		v.stopBtn.Show()
	} else {
		v.stopBtn.Hide()
		v.sendBtn.Show()
	}
	if c.CanSend() {
		v.sendBtn.Enable()
		v.input.Enable()
	} else {
		v.sendBtn.Disable()
		if c.Phase() != app.PhaseReady {
			v.input.Disable()
		}
	}
	if c.Phase() == app.PhaseReady && len(c.Chat().Messages) == 0 && c.Loaded() != nil && !c.Loaded().Template {
		v.input.SetPlaceHolder("Prompt to continue, e.g. Once upon a time (Enter sends)")
	} else {
		v.input.SetPlaceHolder("Message (Enter sends, Shift+Enter newline)")
	}
	v.statsLabel.SetText(c.StatsText())
	if !v.editing {
		v.editBanner.Hide()
	}
}

// ---- actions ----

func (v *view) send() {
	text := v.input.Text
	if strings.TrimSpace(text) == "" {
		return
	}
	ok := false
	if v.editing {
		ok = v.c.EditLast(text)
	} else {
		ok = v.c.Send(text)
	}
	if ok {
		v.editing = false
		v.editBanner.Hide()
		v.input.SetText("")
	}
}

func (v *view) startEdit(text string) {
	v.editing = true
	v.editBanner.Show()
	v.input.SetText(text)
	v.win.Canvas().Focus(v.input)
}

// escape stops generation, else leaves edit mode.
func (v *view) escape() {
	switch {
	case v.c.Generating():
		v.c.Stop()
	case v.editing:
		v.editing = false
		v.editBanner.Hide()
		v.input.SetText("")
	}
}

func (v *view) newChat() {
	v.editing = false
	v.c.NewChat()
	v.win.Canvas().Focus(v.input)
}

var (
	shortcutOpen = &desktop.CustomShortcut{KeyName: fyne.KeyO, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutNew  = &desktop.CustomShortcut{KeyName: fyne.KeyN, Modifier: fyne.KeyModifierShortcutDefault}
	shortcutLoad = &desktop.CustomShortcut{KeyName: fyne.KeyL, Modifier: fyne.KeyModifierShortcutDefault}
)

func (v *view) addShortcuts() {
	cv := v.win.Canvas()
	cv.AddShortcut(shortcutOpen, func(fyne.Shortcut) { v.pickFile() })
	cv.AddShortcut(shortcutNew, func(fyne.Shortcut) { v.newChat() })
	cv.AddShortcut(shortcutLoad, func(fyne.Shortcut) { v.c.Load() })
	cv.SetOnTypedKey(func(k *fyne.KeyEvent) {
		if k.Name == fyne.KeyEscape {
			v.escape()
		}
	})
}

// windowShortcut lets the entries pass the window's shortcuts on.
func (v *view) windowShortcut(s fyne.Shortcut) bool {
	switch s.ShortcutName() {
	case shortcutOpen.ShortcutName():
		v.pickFile()
	case shortcutNew.ShortcutName():
		v.newChat()
	case shortcutLoad.ShortcutName():
		v.c.Load()
	default:
		return false
	}
	return true
}
