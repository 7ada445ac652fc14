package sink

import (
	"context"
	"time"
)

// DefaultWait bounds Close, which takes no context (it is made for defer):
// Close is Shutdown with a context that ends DefaultWait after the call.
const DefaultWait = time.Second

// idleGrace is how long a quiesce or close whose bound has ended still
// waits for a writer with nothing pending to exit (see quiesceLocked).
const idleGrace = 50 * time.Millisecond

// noDeadline is the wait left of a bound with no deadline: longer than any
// program runs, so that timers made from it never fire.
const noDeadline = time.Duration(1<<63 - 1)

// A bound is how long a wait a caller asked for may last: until at (the
// zero time: no deadline) or until done closes (a context's; nil: never),
// whichever comes first. It is a value made without allocating, so that
// the wait of a flushed record (an ERROR's, bounded by a duration) costs
// nothing for its bound. It is read by the waiting goroutine only.
type bound struct {
	at    time.Time
	done  <-chan struct{}
	ctx   context.Context // the context done is of; nil for a duration
	began time.Time
}

// within is the bound d from now.
func within(d time.Duration) bound {
	now := time.Now()
	return bound{at: now.Add(d), began: now}
}

// boundOf is ctx's bound: its deadline, if it has one, and its end.
func boundOf(ctx context.Context) bound {
	b := bound{done: ctx.Done(), ctx: ctx, began: time.Now()}
	if at, ok := ctx.Deadline(); ok {
		b.at = at
	}
	return b
}

// left is the time to the deadline (noDeadline when there is none); it does
// not look at done.
func (b bound) left() time.Duration {
	if b.at.IsZero() {
		return noDeadline
	}
	return time.Until(b.at)
}

// over reports whether the deadline has passed or done has closed.
func (b bound) over() bool {
	if b.left() <= 0 {
		return true
	}
	select {
	case <-b.done: // a nil done never closes
		return true
	default:
		return false
	}
}

// earlier is b ending d sooner (a deadline less a grace); a bound with no
// deadline keeps none.
func (b bound) earlier(d time.Duration) bound {
	if !b.at.IsZero() {
		b.at = b.at.Add(-d)
	}
	return b
}

// sleep sleeps d, or less when the bound ends first.
func (b bound) sleep(d time.Duration) {
	d = min(d, b.left())
	if b.done == nil {
		time.Sleep(d)
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-b.done:
	}
}

// wait waits for c to close while the bound lasts, and reports whether it
// did.
func (b bound) wait(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
	}
	t := time.NewTimer(b.left())
	defer t.Stop()
	select {
	case <-c:
		return true
	case <-t.C:
	case <-b.done:
	}
	select { // both at once: what was waited for wins
	case <-c:
		return true
	default:
		return false
	}
}

// err is the error of op, which did not finish within b; c is the
// accounting as it gave up.
func (b bound) err(op string, c Counts) *TimeoutError {
	e := &TimeoutError{Op: op, Timeout: time.Since(b.began), Pending: c.Pending, Dropped: c.Dropped, cause: context.DeadlineExceeded}
	if b.ctx != nil && b.ctx.Err() != nil {
		e.cause = b.ctx.Err()
	}
	if e.cause == context.DeadlineExceeded && !b.at.IsZero() {
		e.Timeout = max(b.at.Sub(b.began), 0) // the bound asked for, not the time the wait noticed it (none: a deadline already past)
	}
	return e
}

// lockErr is err when output.mu could not be had: a synchronous write is
// stalled holding it, and its record is pending too. (Producers waiting
// behind it find the sink closed, if it is, and count themselves
// not_admitted.)
func (b bound) lockErr(op string, c Counts) *TimeoutError {
	e := b.err(op, c)
	e.Pending++
	return e
}
