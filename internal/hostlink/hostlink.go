package hostlink

import (
	"log/slog"
	"time"
)

// A Listener is simpler's SimplerHostLogState as a State publishes to it.
// Its methods are called on logging paths and must not block, except
// Close, which waits at most its timeout.
type Listener interface {
	// SetThreshold publishes the State's threshold (on the ladder); the
	// State calls it when the threshold changes.
	SetThreshold(slog.Level)
	// BindDir publishes the directory the State writes to; the first wins.
	BindDir(dir string)
	// AnchorClaim is the shared clock_anchor_pid, in memory that never
	// moves: 0 unclaimed, -pid while a writer holds the claim, pid once
	// written. From the attach on, the State claims its anchor there.
	AnchorClaim() *int32
	// Counters are the C state's accounting fields, which the State's
	// sink counts its drops and pending records in from the attach on
	// (see Counters).
	Counters() Counters
	// Close closes admission for C modules and waits, at most timeout,
	// for those inside a submission to return. It reports whether they
	// did.
	Close(timeout time.Duration) bool
	// Open opens admission again.
	Open()
}

// Counters are simpler's C state's accounting fields, in memory that
// never moves: dropped_record_count, dropped_by_reason (queue_full,
// claim_exhausted, output_failed, not_admitted) and pending_record_count.
// C modules add what they count themselves (a record they could not
// submit); from the attach on the State's sink adds every drop of its own
// there too (the total and the reason, with atomic adds) and stores its
// pending count after each batch it writes, so a module's
// _host_log_dropped_records() is the process's whole account, the one
// Counts and every [HOSTLOG_DROPS] report give.
type Counters struct {
	Total   *uint64
	Reasons *[4]uint64
	Pending *uint64
}

// CountInto, set by package sink's init, makes sink s (a *sink.Sink)
// count its drops and pending records in c from now on, moving there
// what it counted before. The seam is here, not a method of the Sink, so
// that programs never see it.
var CountInto func(s any, c Counters)
