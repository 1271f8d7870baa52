//go:build !nogui

package ui

import (
	"image/color"
	"strconv"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/canvas"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/layout"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/minfer/minfer/ui/app"
	uiwidget "github.com/minfer/minfer/ui/internal/widget"
)

// buildTopBar: the app's name, Open, the model line and Recent.
func (v *view) buildTopBar() fyne.CanvasObject {
	title := widget.NewLabelWithStyle("Minfer", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.openBtn = widget.NewButtonWithIcon("Open… (Ctrl+O)", theme.FolderOpenIcon(), v.pickFile)
	v.modelLabel = widget.NewLabel("no model")
	v.modelLabel.Truncation = fyne.TextTruncateEllipsis
	v.recentBtn = widget.NewButtonWithIcon("Recent", theme.HistoryIcon(), v.showRecentMenu)
	connect := v.buildRemote()
	return container.NewBorder(nil, nil, container.NewHBox(title, v.openBtn), container.NewHBox(connect, v.recentBtn), v.modelLabel)
}

// buildSidebar: New chat and the list of conversations.
func (v *view) buildSidebar() fyne.CanvasObject {
	c := v.c
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
	return container.NewBorder(container.NewVBox(heading("CHATS"), v.newChatBtn, widget.NewSeparator()), nil, nil, nil, v.chatList)
}

// buildEmptyState: the drop target shown before a model is open.
func (v *view) buildEmptyState() {
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
}

// buildModelPanel: the plan grid and the load controls; v.panel when
// expanded, v.summaryRow when collapsed, both shown through v.panelHolder.
func (v *view) buildModelPanel() {
	c := v.c
	grid := v.buildPlanGrid()
	v.buildLoadControls()
	collapse := widget.NewButtonWithIcon("", theme.MenuDropUpIcon(), func() {
		c.PanelExpanded = false
		v.refresh(app.ChangeLoad)
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
		v.refresh(app.ChangeLoad)
	})
	v.summaryBtn.Importance = widget.LowImportance
	v.summaryText = wrapped("")
	v.summaryRow = container.NewBorder(nil, nil, v.summaryBtn, nil, v.summaryText)
	v.panelHolder = container.NewStack()
}

// buildPlanGrid: the model card, the device and its budget, the offload
// bar, the GPU blocks slider with Auto, and the context length.
func (v *view) buildPlanGrid() fyne.CanvasObject {
	c := v.c
	v.cardTitle = widget.NewLabelWithStyle("", fyne.TextAlignLeading, fyne.TextStyle{Bold: true})
	v.cardFacts = wrapped("")
	v.deviceLine = wrapped("")
	v.budgetLine = caption("")
	v.bar = uiwidget.NewOffloadBar()
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
	sliderRow := container.NewBorder(nil, nil, nil, container.NewHBox(v.sliderText, v.autoBtn), v.slider)
	ctxRow := container.NewHBox(v.ctxSelect, layout.NewSpacer())
	return container.New(layout.NewFormLayout(),
		heading("MODEL"), container.NewVBox(v.cardTitle, v.cardFacts),
		heading("DEVICE"), container.NewVBox(v.deviceLine, v.budgetLine),
		heading("OFFLOAD"), container.NewVBox(v.bar, v.barInfo),
		heading("GPU BLOCKS"), sliderRow,
		heading("CONTEXT"), ctxRow,
	)
}

// buildLoadControls: the readout, the warnings, Load with its progress
// and Cancel, and the offload report.
func (v *view) buildLoadControls() {
	c := v.c
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
	v.reportLabel = monoText("")
	v.details = widget.NewAccordion(widget.NewAccordionItem("Offload report (where the blocks landed)", v.reportLabel))
}

// buildChatPanel: the system prompt, the messages and the input row.
func (v *view) buildChatPanel() fyne.CanvasObject {
	c := v.c
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
	return chatPanel
}
