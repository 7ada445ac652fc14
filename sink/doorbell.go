package sink

import "sync/atomic"

// A doorbell is how producers and waiters wake the writer goroutine. The
// writer says how it waits, in sleeping (nothing queued) or napping
// (between small drains, see writer.nap), and receives on wake; the
// others swap the flag it set and send. Only the one that swaps a flag
// from true to false sends, so at most one wake-up is in flight per wait,
// and a send never blocks (wake has capacity 1). Either swap may leave a
// token behind for the writer's next wait, which then wakes once for
// nothing.
//
// Who rings what: every record's producer pokes after publishing (it
// ends a sleep, never a nap, so ordinary pushes never pay to wake a
// napping writer); a caller that wants the queue drained now (a flush, a
// quiesce, a producer past napWater or waiting under backpressure)
// nudges, which ends a nap too; a producer at a full queue presses.
type doorbell struct {
	// sleeping is set by the writer before it waits with nothing queued,
	// and cleared by it when it wakes; a producer that swaps it from true
	// to false owns the wake-up. Every push loads it (poke).
	sleeping atomic.Bool
	// napping is set by the writer while it naps between small drains
	// (writer.nap); a caller that swaps it from true to false owns the
	// wake-up (nudge).
	napping atomic.Bool
	// pressed is set by a producer that found the queue full, cleared by
	// the writer after each nap: a nap it was set during was too long for
	// the producers' rate.
	pressed atomic.Bool
	// wake carries the wake-ups, capacity 1: sent by whoever swapped a
	// flag, received only by the writer. Made by New.
	wake chan struct{}
}

// poke wakes the writer if it is waiting with nothing queued: every
// record's producer calls it after publishing. Only the producer that
// swaps sleeping from true to false sends, so at most one wake-up is in
// flight per idle period.
func (b *doorbell) poke() {
	if b.sleeping.Load() && b.sleeping.CompareAndSwap(true, false) {
		b.send()
	}
}

// nudge is poke for a caller that wants the queue drained now: it also
// cuts short the writer's nap between small drains.
func (b *doorbell) nudge() {
	if b.napping.Load() && b.napping.CompareAndSwap(true, false) {
		b.send()
	}
	b.poke()
}

// press is nudge from a producer that found the queue full: the writer
// should stop napping for a while. The flag is stored only when clear, so
// producers at a full queue do not bounce its line.
func (b *doorbell) press() {
	if !b.pressed.Load() {
		b.pressed.Store(true)
	}
	b.nudge()
}

// send sends a wake-up, or leaves the one already in flight.
func (b *doorbell) send() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}
