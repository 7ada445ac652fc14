package strace

import (
	"log/slog"

	"simpler.dev/log/envelope"
)

// ReadOptions configure a [Parser]'s reads: set them before the first
// Read, and leave them alone until the last. The zero value keeps every
// span (in Results.Spans) and no records.
type ReadOptions struct {
	// EachSpan, if not nil, is given every span read, in log order, with
	// its Run, and the Parser keeps none (Results.Spans stays empty): a
	// reader that folds spans into a summary (strace-timing --stats) then
	// holds what it keeps, not the log. The span is placed on the wall
	// clock by the last anchor of its process before it in its file; one
	// that has none there is not placed (its WallAt reports none), and
	// [Parser.NearestAnchor] places it as a kept span is placed once every
	// file is read. The span is valid only during the call.
	EachSpan func(*Span)
	// KeepRecords keeps the ordinary records (every record that is not a
	// machine record) at or above its level in Results.Records, for a
	// reader that sends a log's records on (strace-otlp); nil keeps none,
	// and they cost nothing.
	KeepRecords slog.Leveler
	// KeepUnparsed, with KeepRecords, keeps those records in
	// Results.RecordLines instead of Records: each as the line it was
	// read from, with only what a reader sorts, filters and places records
	// by read from its header. A reader that holds a large log's records
	// until it has read every span, then uses each once (strace-otlp sends
	// them on), holds about a third of the memory so (a parsed record
	// costs its 160-byte Record, its attributes as slog.Attrs and a copy
	// of its body; an unparsed one 64 bytes and its line past the header),
	// and [RecordLine.Record] reads one when it is used.
	KeepUnparsed bool
	// Select keeps only what it picks (see [Selection]), as each file is
	// read: spans (given to EachSpan or kept in Spans) and records.
	// Results.Deselected and Untimed count what it left out.
	Select *Selection
}

// Results are what a [Parser]'s reads found, added to by each Read.
type Results struct {
	// Spans holds the spans read, in log order (none with EachSpan).
	Spans []Span
	// Heads counts record heads ("[STRACE] v=N"), torn records included.
	Heads int
	// Anchors holds every [CLOCK_ANCHOR] read, in the order read: one per
	// file of a rotated set.
	Anchors []envelope.Anchor
	// AnchorRuns holds the run of each of Anchors, at the same index.
	AnchorRuns []*Run
	// Runs holds every run read (see [Run]), in the order first seen.
	Runs []*Run
	// MergedRuns names the files that hold two runs of one process
	// unmarked: a process restarted with its pid before runs were marked
	// appended to its predecessor's file, and its records, with no run
	// record to tell them apart, read as the predecessor's.
	// strace-timing warns about each.
	MergedRuns []MergedRun
	// Drops holds, per pid, the [HOSTLOG_DROPS] with the largest total.
	Drops map[int64]envelope.Drops
	// Lines counts the lines read.
	Lines int
	// BindPhases holds the "bind phase=" lines of a runtime with a host
	// prepare path, for the swimlane.
	BindPhases []BindPhase
	// Records holds the records ReadOptions.KeepRecords keeps, parsed;
	// RecordLines holds them as read, with KeepUnparsed.
	Records     []Record
	RecordLines []RecordLine
	// Deselected counts the spans ReadOptions.Select left out, Untimed
	// those of them left out only because their wall-clock time was not
	// known when they were read (no anchor of their process before them
	// in their file; a device's clock). SkippedFiles counts the files of
	// a directory read through [ReadHost] that [SkipFiles] left unread for
	// the selection.
	Deselected   int
	Untimed      int
	SkippedFiles int
}
