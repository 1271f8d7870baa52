package app

import (
	"strings"
	"time"
)

// streamInterval bounds how often streamed tokens and load progress reach
// the widgets: at most ~20 refreshes a second (docs/architecture.md, Concurrency).
const streamInterval = 50 * time.Millisecond

// pump moves worker events onto the UI goroutine through post. Tokens and
// progress are coalesced and flushed at most every interval; any other
// event first flushes what is pending, so order is kept.
func pump(events <-chan any, post func(func()), apply func(any), interval time.Duration) {
	var (
		text      strings.Builder
		textID    int
		progress  *progressEvent
		timer     *time.Timer
		timerC    <-chan time.Time
		lastFlush time.Time
	)
	flush := func() {
		if text.Len() > 0 {
			ev := tokenEvent{id: textID, text: text.String()}
			text.Reset()
			post(func() { apply(ev) })
		}
		if progress != nil {
			ev := *progress
			progress = nil
			post(func() { apply(ev) })
		}
		lastFlush = time.Now()
		if timer != nil {
			timer.Stop()
			timer, timerC = nil, nil
		}
	}
	arm := func() {
		if timer != nil {
			return
		}
		wait := interval - time.Since(lastFlush)
		if wait < 0 {
			wait = 0
		}
		timer = time.NewTimer(wait)
		timerC = timer.C
	}
	for {
		select {
		case ev, ok := <-events:
			if !ok {
				flush()
				return
			}
			switch e := ev.(type) {
			case tokenEvent:
				if text.Len() > 0 && e.id != textID {
					flush()
				}
				textID = e.id
				text.WriteString(e.text)
				arm()
			case progressEvent:
				progress = &e
				arm()
			default:
				flush()
				post(func() { apply(ev) })
			}
		case <-timerC:
			timer, timerC = nil, nil
			flush()
		}
	}
}
