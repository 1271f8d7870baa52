package app

import (
	"context"
	"errors"

	"github.com/minfer/minfer/core/offload"
	"github.com/minfer/minfer/internal/alloc"
)

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
	case connectedEvent, connectFailedEvent:
		c.applyRemote(ev)
	}
}
