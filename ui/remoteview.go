//go:build !nogui

package ui

import (
	"fmt"
	"strconv"
	"strings"

	"fyne.io/fyne/v2"
	"fyne.io/fyne/v2/container"
	"fyne.io/fyne/v2/theme"
	"fyne.io/fyne/v2/widget"

	"github.com/minfer/minfer/internal/server"
	"github.com/minfer/minfer/ui/app"
)

// buildRemote makes the top bar's "Server…" button and the serve row
// (toggle, address, copy).
func (v *view) buildRemote() fyne.CanvasObject {
	v.connectBtn = widget.NewButtonWithIcon("Connect to a server…", theme.ComputerIcon(), v.showConnectDialog)
	v.serveCheck = widget.NewCheck("Serve on the API", func(on bool) {
		if v.updating {
			return
		}
		if on {
			v.showServeDialog()
		} else {
			v.c.StopServing()
		}
	})
	v.serveAddr = widget.NewEntry()
	v.serveAddr.Disable() // selectable, copyable, not editable
	v.copyBtn = widget.NewButtonWithIcon("", theme.ContentCopyIcon(), func() {
		if u := v.c.Serving(); u != "" {
			v.app.Clipboard().SetContent(u)
		}
	})
	v.serveRow = container.NewBorder(nil, nil, v.serveCheck, v.copyBtn, v.serveAddr)
	v.remoteModel = widget.NewSelect(nil, func(m string) {
		if !v.updating {
			v.c.SetRemoteModel(m)
		}
	})
	v.remotePanel = container.NewVBox(container.NewBorder(nil, nil, widget.NewLabel("model on the server"), nil, v.remoteModel), v.summaryTextRemote())
	return v.connectBtn
}

func (v *view) refreshRemote() {
	c := v.c
	if c.Connecting() {
		v.connectBtn.SetText("Connecting…")
		v.connectBtn.Disable()
	} else {
		v.connectBtn.SetText("Connect to a server…")
		v.connectBtn.Enable()
	}
	if c.CanServe() {
		v.serveRow.Show()
	} else {
		v.serveRow.Hide()
	}
	v.serveCheck.SetChecked(c.Serving() != "")
	if u := c.Serving(); u != "" {
		v.serveAddr.SetText(u)
		v.serveAddr.Show()
		v.copyBtn.Show()
	} else {
		v.serveAddr.SetText("")
		v.serveAddr.Hide()
		v.copyBtn.Hide()
	}
}

func (v *view) summaryTextRemote() *widget.Label {
	v.remoteText = wrapped("")
	return v.remoteText
}

// refreshRemotePanel shows where chats run and the server's models.
func (v *view) refreshRemotePanel() {
	c := v.c
	r := c.Remote()
	v.remoteText.SetText(c.Summary() + "\n" + c.ReportText())
	v.remoteModel.SetOptions(r.Models)
	v.remoteModel.SetSelected(r.Model)
	if c.Generating() || c.Connecting() {
		v.remoteModel.Disable()
	} else {
		v.remoteModel.Enable()
	}
	if len(v.panelHolder.Objects) != 1 || v.panelHolder.Objects[0] != v.remotePanel {
		v.panelHolder.Objects = []fyne.CanvasObject{v.remotePanel}
		v.panelHolder.Refresh()
	}
}

// showConnectDialog asks for a server's address, key and model; the most
// recent server is filled in.
func (v *view) showConnectDialog() {
	url, key, model := widget.NewEntry(), widget.NewPasswordEntry(), widget.NewEntry()
	url.SetPlaceHolder("http://127.0.0.1:8080")
	key.SetPlaceHolder("optional")
	model.SetPlaceHolder("optional: the first the server lists")
	if saved := v.c.RecentServers(); len(saved) > 0 {
		url.SetText(saved[0].URL)
		key.SetText(saved[0].Key)
		model.SetText(saved[0].Model)
	}
	form := widget.NewForm(widget.NewFormItem("Address", url), widget.NewFormItem("API key", key), widget.NewFormItem("Model", model))
	sd := v.showDialog("connect", "Connect to a server",
		"Chat through an OpenAI-compatible server (minfer serve, llama-server, vLLM, Ollama, …). The model stays on the server; the window works as with a local model. The key is saved only in servers.json in Minfer's settings folder, never in chat files.",
		form,
		dialogButton{label: "Cancel"},
		dialogButton{label: "Connect", importance: widget.HighImportance, action: func() {
			v.c.ConnectServer(url.Text, key.Text, strings.TrimSpace(model.Text))
		}})
	sd.entries["url"], sd.entries["key"], sd.entries["model"] = url, key, model
}

// showServeDialog asks where to serve the loaded model: loopback by
// default; another address needs a key.
func (v *view) showServeDialog() {
	host, port, key := widget.NewEntry(), widget.NewEntry(), widget.NewPasswordEntry()
	host.SetText("127.0.0.1")
	port.SetText(strconv.Itoa(server.DefaultPort))
	key.SetPlaceHolder("required for any address but 127.0.0.1")
	errLabel := formError()
	var sd *shownDialog
	start := func() {
		p, err := strconv.Atoi(strings.TrimSpace(port.Text))
		if err != nil || p < 0 || p > 65535 {
			err = fmt.Errorf("%q is not a port: use a number from 0 to 65535", port.Text)
		} else {
			err = v.c.StartServing(strings.TrimSpace(host.Text), p, key.Text)
		}
		if err != nil {
			v.failed(sd, err.Error())
		}
		v.refresh(app.ChangeLoad)
	}
	form := container.NewVBox(widget.NewForm(widget.NewFormItem("Address", host), widget.NewFormItem("Port", port), widget.NewFormItem("API key", key)), errLabel)
	sd = v.showDialog("serve", "Serve the model on the API",
		"Other programs can then use the loaded model through the OpenAI API. By default only this computer can reach it.",
		form,
		dialogButton{label: "Cancel", action: func() { v.refresh(app.ChangeLoad) }},
		dialogButton{label: "Serve", importance: widget.HighImportance, action: start})
	sd.entries["host"], sd.entries["port"], sd.entries["key"] = host, port, key
	sd.errText = errLabel
}
