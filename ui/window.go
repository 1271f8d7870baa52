//go:build !nogui

package ui

import (
	"fmt"
	"image/color"
	"path/filepath"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/driver/desktop"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"
)

// view is the window: thin widgets over the Controller. Widgets are fields
// so tests can tap and type into them.
type view struct {
	c   *Controller
	app fyne.App
	win fyne.Window

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
	bar                    *offloadBar
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
	lastPhase      Phase
}

func newView(a fyne.App, w fyne.Window, cfg Config) (*view, error) {
	c, err := NewController(cfg)
	if err != nil {
		return nil, err
	}
	v := &view{c: c, app: a, win: w}
	v.build()
	c.OnChange = v.refresh
	c.OnProblem = v.showProblem
	w.SetOnDropped(func(_ fyne.Position, uris []fyne.URI) { v.handleDrop(uris) })
	v.addShortcuts()
	c.Start()
	v.refresh(^Change(0))
	return v, nil
}

// handleDrop opens the first dropped file.
func (v *view) handleDrop(uris []fyne.URI) {
	if len(uris) == 0 {
		return
	}
	u := uris[0]
	if u.Scheme() != "file" {
		v.showProblem(FileProblem{Path: u.String(), Err: fmt.Errorf("only local files can be opened, not %s", u.Scheme())})
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
	c := v.c
	// Top bar.
	title := widget.NewLabelWithStyle("Minfer", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.openBtn = widget.NewButtonWithIcon("Open… (Ctrl+O)", theme.FolderOpenIcon(), v.pickFile)
	v.modelLabel = widget.NewLabel("no model")
	v.modelLabel.Truncation = fyne.TextTruncateEllipsis
	v.recentBtn = widget.NewButtonWithIcon("Recent", theme.HistoryIcon(), v.showRecentMenu)
	connect := v.buildRemote()
	top := container.NewBorder(nil, nil, container.NewHBox(title, v.openBtn), container.NewHBox(connect, v.recentBtn), v.modelLabel)

	// Sidebar.
	v.newChatBtn = widget.NewButtonWithIcon("New chat (Ctrl+N)", theme.ContentAddIcon(), v.newChat)
	v.chatList = widget.NewList(
		func() int { return len(v.chatIDs) },
		func() fyne.CanvasObject {
			l := widget.NewLabel("conversation title")
			l.Truncation = fyne.TextTruncateEllipsis
			return l
		},
		func(i widget.ListItemID, o fyne.CanvasObject) {
			chats := c.Chats()
			if i < len(chats) {
				o.(*widget.Label).SetText(chats[i].Title)
			}
		})
	v.chatList.OnSelected = func(i widget.ListItemID) {
		if v.updating || i >= len(v.chatIDs) {
			return
		}
		c.OpenChat(v.chatIDs[i])
	}
	sidebar := container.NewBorder(container.NewVBox(heading("CHATS"), v.newChatBtn, widget.NewSeparator()), nil, nil, nil, v.chatList)

	// Empty state.
	drop := widget.NewLabelWithStyle("Drop a .gguf file here", fyne.TextAlignCenter, fyne.TextStyle{Bold: true})
	drop.SizeName = theme.SizeNameHeadingText
	v.emptyOpenBtn = widget.NewButtonWithIcon("Open… (Ctrl+O)", theme.FolderOpenIcon(), v.pickFile)
	v.emptyOpenBtn.Importance = widget.HighImportance
	v.recentBox = container.NewVBox()
	zone := canvas.NewRectangle(color.Transparent)
	zone.StrokeColor = theme.Color(theme.ColorNamePrimary)
	zone.StrokeWidth = 2
	zone.CornerRadius = 12
	target := container.NewStack(zone, container.NewPadded(container.NewPadded(container.NewVBox(
		drop,
		widget.NewLabelWithStyle("or open one: Minfer reads its index, shows how many blocks fit your GPU, then loads it.", fyne.TextAlignCenter, fyne.TextStyle{}),
		container.NewCenter(v.emptyOpenBtn),
	))))
	v.emptyState = container.NewCenter(container.NewVBox(target, widget.NewLabel(""), v.recentBox))

	// Model panel.
	v.cardTitle = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.cardFacts = wrapped("")
	v.deviceLine = wrapped("")
	v.budgetLine = caption("")
	v.bar = newOffloadBar()
	v.barInfo = caption("")
	v.bar.OnHover = func(s string) {
		if s == "" {
			s = v.barLegend()
		}
		v.barInfo.SetText(s)
	}
	v.slider = widget.NewSlider(0, 1)
	v.slider.Step = 1
	v.slider.OnChanged = func(x float64) {
		if !v.updating {
			c.SetGPULayers(int(x))
		}
	}
	v.sliderText = widget.NewLabel("")
	v.autoBtn = widget.NewButton("Auto", c.AutoFit)
	v.ctxSelect = widget.NewSelect(nil, func(s string) {
		if v.updating {
			return
		}
		if n, err := strconv.Atoi(s); err == nil {
			c.SetCtx(n)
		}
	})
	v.readout = wrapped("")
	v.warnings = wrapped("")
	v.warnings.Importance = widget.WarningImportance
	v.firstNote = wrapped("Minfer puts the FIRST blocks on the GPU (llama.cpp and Ollama offload the last ones).")
	v.firstNote.TextStyle = fyne.TextStyle{Italic: true}
	v.loadBtn = widget.NewButtonWithIcon("Load (Ctrl+L)", theme.MediaPlayIcon(), c.Load)
	v.loadBtn.Importance = widget.HighImportance
	v.progress = widget.NewProgressBar()
	v.progressText = widget.NewLabel("")
	v.cancelBtn = widget.NewButtonWithIcon("Cancel", theme.CancelIcon(), c.CancelLoad)
	v.progressRow = container.NewBorder(nil, nil, nil, v.cancelBtn, container.NewVBox(v.progress, v.progressText))
	v.reportLabel = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Monospace: true})
	v.reportLabel.Wrapping = fyne.TextWrapWord
	v.details = widget.NewAccordion(widget.NewAccordionItem("Offload report (where the blocks landed)", v.reportLabel))

	sliderRow := container.NewBorder(nil, nil, nil, container.NewHBox(v.sliderText, v.autoBtn), v.slider)
	ctxRow := container.NewHBox(v.ctxSelect, layout.NewSpacer())
	grid := container.New(layout.NewFormLayout(),
		heading("MODEL"), container.NewVBox(v.cardTitle, v.cardFacts),
		heading("DEVICE"), container.NewVBox(v.deviceLine, v.budgetLine),
		heading("OFFLOAD"), container.NewVBox(v.bar, v.barInfo),
		heading("GPU BLOCKS"), sliderRow,
		heading("CONTEXT"), ctxRow,
	)
	collapse := widget.NewButtonWithIcon("", theme.MenuDropUpIcon(), func() {
		c.PanelExpanded = false
		v.refresh(ChangeLoad)
	})
	collapse.Importance = widget.LowImportance
	v.panel = container.NewVBox(
		grid,
		v.readout,
		v.warnings,
		container.NewBorder(nil, nil, nil, container.NewHBox(v.loadBtn, collapse), v.firstNote),
		v.progressRow,
		v.details,
	)
	// The collapsed panel: a button and the summary, which wraps (the
	// fallback reason can be long and must not widen the window).
	v.summaryBtn = widget.NewButtonWithIcon("Plan", theme.MenuDropDownIcon(), func() {
		c.PanelExpanded = true
		v.refresh(ChangeLoad)
	})
	v.summaryBtn.Importance = widget.LowImportance
	v.summaryText = wrapped("")
	v.summaryRow = container.NewBorder(nil, nil, v.summaryBtn, nil, v.summaryText)
	v.panelHolder = container.NewStack()

	// Chat.
	v.systemEntry = newChatInput(false)
	v.systemEntry.SetPlaceHolder("System prompt (optional), e.g. You are a helpful assistant.")
	v.systemEntry.OnChanged = func(s string) {
		if !v.updating {
			c.SetSystem(s)
		}
	}
	v.systemEntry.onSend = func() { v.win.Canvas().Focus(v.input) }
	v.systemEntry.onEscape = v.escape
	v.systemEntry.onShortcut = v.windowShortcut
	v.msgBox = container.NewVBox()
	v.msgScroll = container.NewVScroll(v.msgBox)
	v.chatHint = widget.NewLabelWithStyle("", fyne.TextAlignCenter, fyne.TextStyle{Italic: true})
	v.chatHint.Wrapping = fyne.TextWrapWord // full width (a VBox, not a Center, or it wraps per letter)
	v.statsLabel = widget.NewLabel("")
	v.statsLabel.SizeName = theme.SizeNameCaptionText
	v.statsLabel.Truncation = fyne.TextTruncateEllipsis
	v.editBanner = widget.NewLabel("Editing your last message: Enter resends it, Esc cancels.")
	v.editBanner.Importance = widget.WarningImportance
	v.editBanner.Hide()
	v.input = newChatInput(true)
	v.input.SetPlaceHolder("Message (Enter sends, Shift+Enter newline)")
	v.input.SetMinRowsVisible(3)
	v.input.onSend = v.send
	v.input.onEscape = v.escape
	v.input.onShortcut = v.windowShortcut
	v.sendBtn = widget.NewButtonWithIcon("Send", theme.MailSendIcon(), v.send)
	v.sendBtn.Importance = widget.HighImportance
	v.stopBtn = widget.NewButtonWithIcon("Stop (Esc)", theme.MediaStopIcon(), c.Stop)
	v.stopBtn.Importance = widget.DangerImportance
	v.samplingBtn = widget.NewButtonWithIcon("Sampling", theme.SettingsIcon(), v.showSamplingDialog)
	buttons := container.NewVBox(container.NewStack(v.sendBtn, v.stopBtn), v.samplingBtn)
	inputRow := container.NewBorder(nil, nil, nil, buttons, v.input)
	systemRow := container.NewBorder(nil, nil, widget.NewLabel("system"), nil, v.systemEntry)
	chatPanel := container.NewBorder(
		container.NewVBox(widget.NewSeparator(), systemRow),
		container.NewVBox(v.statsLabel, v.editBanner, inputRow),
		nil, nil,
		container.NewStack(v.msgScroll, container.NewVBox(layout.NewSpacer(), v.chatHint, layout.NewSpacer())))
	v.modelChat = container.NewBorder(container.NewVBox(v.panelHolder, v.serveRow), nil, nil, nil, chatPanel)

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

func (v *view) refresh(ch Change) {
	v.updating = true
	defer func() { v.updating = false }()
	c := v.c
	if ch&(ChangeModel|ChangeLoad) != 0 {
		v.refreshTop()
		v.refreshRemote()
	}
	if ch&ChangeRecent != 0 {
		v.refreshRecent()
	}
	if ch&(ChangeModel|ChangePlan|ChangeLoad) != 0 {
		v.refreshPanel()
	}
	if ch&ChangeChats != 0 {
		v.refreshChats()
	}
	if ch&(ChangeChat|ChangeLoad) != 0 {
		v.refreshChat()
	} else if ch&ChangeStream != 0 {
		v.refreshStream()
	}
	if ch&(ChangeChat|ChangeLoad|ChangeStream|ChangeModel) != 0 {
		v.refreshInput()
	}
	if c.Phase() != v.lastPhase {
		// A finished load hands the keyboard to the message box.
		if c.Phase() == PhaseReady {
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
	state := map[Phase]string{PhasePlanned: "not loaded", PhaseLoading: "loading…", PhaseReady: "loaded"}[c.Phase()]
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
	v.bar.SetModel(offloadBarModel(c.PlanView()))
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
	if c.Phase() == PhaseLoading {
		v.autoBtn.Disable()
		v.ctxSelect.Disable()
	} else {
		v.autoBtn.Enable()
		v.ctxSelect.Enable()
	}
	var opts []string
	for _, n := range ContextChoices(c.Info().NCtxTrain) {
		opts = append(opts, strconv.Itoa(n))
	}
	v.ctxSelect.SetOptions(opts)
	v.ctxSelect.SetSelected(strconv.Itoa(c.CtxLen()))

	text, level := c.Readout()
	v.readout.SetText(text)
	switch level {
	case ReadoutOver:
		setImportance(v.readout, widget.DangerImportance)
	case ReadoutWarn:
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
	case c.Phase() == PhaseReady && c.NeedsReload():
		v.loadBtn.SetText("Reload (Ctrl+L)")
		v.loadBtn.Enable()
	case c.Phase() == PhaseReady:
		v.loadBtn.SetText("Loaded")
		v.loadBtn.Disable()
	case c.Phase() == PhaseLoading:
		v.loadBtn.SetText("Loading…")
		v.loadBtn.Disable()
	default:
		v.loadBtn.SetText("Load (Ctrl+L)")
		v.loadBtn.Enable()
	}
	if c.Phase() == PhaseLoading {
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
	if c.Phase() == PhaseReady && !c.PanelExpanded {
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
	for i, m := range ch.Messages {
		mv := newMessageView(m)
		text := m.Content
		mv.copyBtn.OnTapped = func() { v.app.Clipboard().SetContent(text) }
		last := i == len(ch.Messages)-1
		if m.Role == "assistant" && last && !c.Generating() && c.Phase() == PhaseReady {
			mv.regenBtn.OnTapped = func() { c.Regenerate() }
			mv.regenBtn.Show()
		}
		if i == lastUser && !c.Generating() && c.Phase() == PhaseReady {
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
	case c.Phase() != PhaseReady:
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
	v.c.post(v.msgScroll.ScrollToBottom)
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
		if c.Phase() != PhaseReady {
			v.input.Disable()
		}
	}
	if c.Phase() == PhaseReady && len(c.Chat().Messages) == 0 && c.Loaded() != nil && !c.Loaded().Template {
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
