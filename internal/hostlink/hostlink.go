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
	// Drops are the records C modules counted as lost by reason
	// (queue_full, claim_exhausted, output_failed, not_admitted), in
	// memory that never moves.
	Drops() *[4]uint64
	// Close closes admission for C modules and waits, at most timeout,
	// for those inside a submission to return. It reports whether they
	// did.
	Close(timeout time.Duration) bool
	// Open opens admission again.
	Open()
}
