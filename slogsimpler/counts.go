package slogsimpler

import "simpler.dev/log/sink"

// Counts is a snapshot of a state's accounting: records written, pending
// (accepted, not yet written), and dropped, by reason. Dropped is always
// the sum of the four reasons: QueueFull (no free slot), ClaimExhausted
// (contention while slots were free), OutputFailed (the destination
// failed) and NotAdmitted (closed, or an invalid record).
type Counts = sink.Counts

// TimeoutError is what Flush, Quiesce and Close return when their bound
// passed first, with the pending and dropped counts at that moment.
type TimeoutError = sink.TimeoutError

// Errors that BindDir and Start wrap.
var (
	// ErrUnsafeFile: something other than a regular file with one link
	// owned by this user is at host.<pid>.log; nothing was written there.
	ErrUnsafeFile = sink.ErrUnsafeFile
	// ErrAlreadyBound: another directory is bound and stays the
	// destination.
	ErrAlreadyBound = sink.ErrAlreadyBound
	// ErrWriterBusy: the writer of a timed-out Quiesce is still inside a
	// stalled write; Start again once the destination recovers.
	ErrWriterBusy = sink.ErrWriterBusy
)
