package slogsimpler

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"
	"time"

	"simpler.dev/log/internal/hostlink"
	"simpler.dev/log/sink"
)

// cLink is a State's side of simpler's C ABI state, when package hostabi
// attached one (through door.Attach, set in emit.go): what the State
// publishes to it (threshold, directory, admission). The accounting is
// the sink's, which counts in the C state's fields from the attach on
// (hostlink.CountInto). Every method does nothing until a C state is
// attached.
type cLink struct {
	// l is the attached C state, nil until attach. Set once by attach;
	// read by the threshold's setters, BindDir, Start, Quiesce and Close,
	// never by a record unless the followed threshold changed.
	l atomic.Pointer[linkBox]
	// published is the threshold last given to l (read and written by
	// whoever computes a changed threshold; a race only publishes the
	// same value twice).
	published atomic.Int64
}

type linkBox struct{ hostlink.Listener }

// attach makes c publish to l, starting from threshold t and directory
// dir (empty: none yet). It returns l's anchor claim, which the State
// claims its anchor through from now on. One C state per State.
func (c *cLink) attach(l hostlink.Listener, t slog.Level, dir string) (*int32, error) {
	if l == nil {
		return nil, errors.New("slogsimpler: attach: nil C state")
	}
	if !c.l.CompareAndSwap(nil, &linkBox{l}) {
		return nil, errors.New("slogsimpler: the state already owns a C ABI state")
	}
	c.published.Store(int64(t))
	l.SetThreshold(t)
	if dir != "" {
		l.BindDir(dir)
	}
	return l.AnchorClaim(), nil
}

// publish gives the threshold t to the C state, when it changed.
func (c *cLink) publish(t slog.Level) {
	if l := c.l.Load(); l != nil && c.published.Swap(int64(t)) != int64(t) {
		l.SetThreshold(t)
	}
}

// publishFollowed is publish for a followed Leveler's threshold, read on
// every record: one load when nothing is attached or nothing changed.
func (c *cLink) publishFollowed(t slog.Level) {
	if c.l.Load() != nil && c.published.Load() != int64(t) {
		c.publish(t)
	}
}

// bindDir publishes the directory the State writes to.
func (c *cLink) bindDir(dir string) {
	if l := c.l.Load(); l != nil {
		l.BindDir(dir)
	}
}

// open opens admission for C modules again (Start).
func (c *cLink) open() {
	if l := c.l.Load(); l != nil {
		l.Open()
	}
}

// close closes admission for C modules, waiting for those inside a
// submission (Quiesce, Close) until ctx's deadline, or sink.DefaultWait
// without one (a submission takes microseconds; this bounds one whose
// thread was stopped inside it).
func (c *cLink) close(ctx context.Context) {
	if l := c.l.Load(); l != nil {
		timeout := sink.DefaultWait
		if at, ok := ctx.Deadline(); ok {
			timeout = max(time.Until(at), time.Nanosecond)
		}
		l.Close(timeout)
	}
}
