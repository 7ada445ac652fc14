// Package sinkseam is the seam through which the library's own packages
// give a sink what its public Options do not: the state's drop report,
// each file's anchor and what becomes of it, the pid in the files' names.
// These are a State's plumbing (package slogsimpler), not a choice a user
// of package sink makes; they were fields of sink.Options until v1.0.0.
//
// Package sink sets New at init; slogsimpler calls it. Nothing outside
// this module can import the package.
package sinkseam

// Plumbing is what a State gives its sink. C is sink.Counts (a type
// parameter, so that this package imports nothing of sink's).
type Plumbing[C any] struct {
	// PID is the process id in the log files' names; 0 means the
	// process's own (runid.PID).
	PID int
	// Report renders the record that reports losses in the log itself,
	// appended to dst (512 bytes of room): c is the accounting now and
	// fresh how much of c.Dropped is new since the last report. The sink
	// writes it beside a batch whenever the drop total has grown (at most
	// about once a second from the writer, and always at a quiesce and
	// at close); it takes no queue slot and is not counted as written. It
	// is called with the destination's lock held and must not log. Nil
	// means no report in the log.
	Report func(dst []byte, c C, fresh uint64) []byte
	// FileHeader, if not nil, renders the record every file the sink
	// opens at a bound directory starts with (the state's [CLOCK_ANCHOR]),
	// appended to dst; it may return nothing. It is written before any
	// other record of that file but the sink's own [HOSTLOG_RUN], and
	// counted as written.
	FileHeader func(dst []byte) []byte
	// FileStarted, if not nil, is told once per new file whether
	// FileHeader's record was written: the owner of the anchor claim
	// releases it when it was not. A header the disk did not take stays
	// owed and is written before anything else reaches that file.
	FileStarted func(headerWritten bool)
	// AnchorLost, if not nil, is told when a write failed whose records
	// held a [CLOCK_ANCHOR]: the owner of the anchor claim releases it so
	// that a later record writes one, as simpler's writer does.
	AnchorLost func()
}

// New is package sink's constructor with plumbing:
//
//	func(opts *sink.Options, p *Plumbing[sink.Counts]) *sink.Sink
//
// set by package sink's init (its signature names sink's types, which
// this package cannot import).
var New any
