package slogsimpler

import (
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/petermattis/goid"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/origin"
	"simpler.dev/log/internal/render"
	"simpler.dev/log/internal/wire"
	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
)

// anchors is a State's [CLOCK_ANCHOR] bookkeeping: the claim that makes
// one writer write it, whether it is written, and the anchor last
// written (State.Anchor).
type anchors struct {
	pid int // the process's, read by everything; set once by init
	// anchored is set once the [CLOCK_ANCHOR] is written (or the sink is
	// closed for good). Every handler reads it on every TIMING-enabled
	// record; ensure and fileStarted set and clear it.
	anchored atomic.Bool
	// claim is the anchor claim, with simpler's protocol: 0 unclaimed,
	// -pid while one writer writes the anchor, pid once it is written
	// (any other value, such as a parent's pid after fork, is unclaimed).
	// It points at own until a C ABI state is attached, then at that
	// state's clock_anchor_pid, shared with C writers. Stored by init and
	// attached; loaded by ensure and fileStarted.
	claim atomic.Pointer[int32]
	own   int32
	// last is the anchor last rendered (for a file, or the destination),
	// or a reading kept by get until one is. Stored by render and get,
	// loaded by get.
	last atomic.Pointer[envelope.Anchor]
}

func (a *anchors) init(pid int) {
	a.pid = pid
	a.claim.Store(&a.own)
}

// attached moves the claim to a C state's clock_anchor_pid c, marking it
// written when the anchor already is.
func (a *anchors) attached(c *int32) {
	if a.anchored.Load() {
		atomic.StoreInt32(c, int32(a.pid))
	}
	a.claim.Store(c)
}

// at returns the process's anchor read from t, on both clocks at once
// (t's monotonic reading and its wall-clock value).
func (a *anchors) at(t time.Time) envelope.Anchor {
	return envelope.Anchor{PID: a.pid, Mono: envelope.Mono(t), Wall: t.UnixNano()}
}

// render renders the anchor read from t into an empty l and makes it the
// one get returns.
func (a *anchors) render(l *envelope.Line, t time.Time) {
	an := a.at(t)
	a.last.Store(&an)
	l.Anchor(goid.Get(), &an)
}

// get returns the anchor last rendered, or a reading of both clocks taken
// at the first call and kept until one is (see State.Anchor).
func (a *anchors) get() envelope.Anchor {
	for {
		if p := a.last.Load(); p != nil {
			return *p
		}
		an := a.at(time.Now())
		if a.last.CompareAndSwap(nil, &an) {
			return an
		}
	}
}

// file renders the [CLOCK_ANCHOR] a new file of the bound directory
// starts with (the sink's FileHeader), appended to dst: each file (the
// first, one recreated after the old was removed, each rotated one) can
// be placed on the wall clock alone, whatever went to standard error
// before.
func (a *anchors) file(dst []byte) []byte {
	var l envelope.Line
	a.render(&l, time.Now())
	return append(dst, l.Finish()...)
}

// fileStarted is told whether a new file got its anchor (the sink's
// FileStarted): the claim says so to Go and C writers alike, and a file
// without one (TIMING off then, or the write failed) leaves the claim
// free, so the first TIMING-enabled record writes it.
func (a *anchors) fileStarted(anchored bool) {
	if anchored {
		atomic.StoreInt32(a.claim.Load(), int32(a.pid))
		a.anchored.Store(true)
		return
	}
	// The claim goes back to 0 whether the anchor's writer has confirmed
	// it (pid) or not yet (-pid: a C module confirms after its submit
	// returns, and the writer can fail the write first; the module's
	// confirm then finds 0 and leaves it). Were -pid left alone, the
	// confirm would make the lost anchor count as written, and no anchor
	// would follow in the file (seen under make test's load). At worst a
	// claim begun anew meanwhile is cleared too, and one anchor more is
	// written.
	claim := a.claim.Load()
	if !atomic.CompareAndSwapInt32(claim, int32(a.pid), 0) {
		atomic.CompareAndSwapInt32(claim, -int32(a.pid), 0)
	}
	a.anchored.Store(false)
}

// Bounds of the wait for another writer's anchor claim: a few yields,
// then sleeps, and after anchorWait the record goes on without the anchor
// (a writer stuck that long in a write would otherwise stall every
// TIMING-enabled record of the process).
const (
	anchorYields = 16
	anchorSleep  = 50 * time.Microsecond
	anchorWait   = 100 * time.Millisecond
)

// ensure writes the [CLOCK_ANCHOR] record through s's door if no record
// has done so yet, reading both clocks from t (the
// record it precedes; zero means now). The caller has checked that TIMING
// is enabled. The record is a slog record like every other, a machine
// record made here: its message the anchor's body, its origin the header
// (clock_anchor, its mono_ns).
//
// One writer claims the anchor by swapping the claim for -pid (Go's own,
// or simpler's clock_anchor_pid shared with C modules); records that
// arrive meanwhile wait, bounded, until it is written, so no record
// precedes the anchor. A write the sink accepted (or refused for good,
// closed) stores pid; a failed one puts the claim back to 0 and a later
// record retries.
func (a *anchors) ensure(t time.Time, s *State) {
	p := a.claim.Load()
	pid := int32(a.pid)
	var deadline time.Time
	for i := 0; ; i++ {
		switch v := atomic.LoadInt32(p); {
		case v == pid:
			a.anchored.Store(true)
			return
		case v == -pid:
			switch {
			case i < anchorYields:
				runtime.Gosched()
			case deadline.IsZero():
				deadline = time.Now().Add(anchorWait)
			case time.Now().After(deadline):
				return
			default:
				time.Sleep(anchorSleep)
			}
		case atomic.CompareAndSwapInt32(p, v, -pid):
			if t.IsZero() {
				t = time.Now()
			}
			an := a.at(t)
			a.last.Store(&an)
			body := string(an.AppendBody(nil))
			o := origin.NewMachine(envelope.Header{Func: wire.FuncAnchor, Mono: an.Mono}, body)
			o.Bind(t)
			r := slog.NewRecord(t, levels.Timing, body, 0)
			r.AddAttrs(o.Attr())
			done := int32(0)
			switch _, err := s.enter(&r, &render.Renderer{}, true); err {
			case nil, sink.ErrNotAdmitted:
				// Written, or the sink is closed for good: retrying
				// on every record would only count more losses.
				done = pid
				a.anchored.Store(true)
			}
			atomic.CompareAndSwapInt32(p, -pid, done)
			return
		}
	}
}
