// Package hostlink is the seam between slogsimpler's State and package
// hostabi, the owner of simpler's C ABI state: what the State tells the C
// side (threshold, directory, admission) and what it reads from it (the
// shared anchor claim, the drops C modules counted). It keeps cgo out of
// slogsimpler.
package hostlink

import (
	"log/slog"
	"time"
)

// Shared is simpler's SimplerHostLogState as a State sees it. Its methods
// are called on logging paths and must not block, except Close, which
// waits at most its timeout.
type Shared interface {
	// SetThreshold publishes the State's threshold (on the ladder).
	SetThreshold(slog.Level)
	// BindDir publishes the directory the State writes to; the first wins.
	BindDir(dir string)
	// AnchorPID is the shared clock_anchor_pid, in memory that never
	// moves: 0 unclaimed, -pid while a writer holds the claim, pid once
	// written.
	AnchorPID() *int32
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
