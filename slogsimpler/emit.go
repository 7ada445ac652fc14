package slogsimpler

import (
	"context"
	"log/slog"
	"time"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/door"
	"simpler.dev/log/internal/hostlink"
	"simpler.dev/log/internal/origin"
)

// A Source is where a record that did not come through slog was made, for
// [State.Emit]. The zero Source has no function and no position (the
// envelope then prints function "go").
type Source struct {
	Function string // escaped and bounded like user text in the envelope
	File     string // base name; empty for none
	Line     int
}

// Emit writes a record that did not come through slog — from simulated
// device code, or forwarded from another process — as a slog record
// through the program's handlers: the fan-out once Setup has run, so
// ReplaceAttr rewrites its attributes, the console shows it and a
// recorder keeps it, and the file writes it with the producer's function
// and position. Handlers of other libraries see an ordinary record whose
// first attribute, the group "simpler", names its function and position.
// mono is the record's time on the envelope's clock (0 means now, and so
// does a negative mono: CLOCK_MONOTONIC is never negative, and a reader
// rejects such a record) and tid its lane (0 means the calling goroutine).
// The message and every attribute are user text, escaped and neutralised
// like any slog message's: an attribute taken from another record (a
// span's origin, say) is written as its text, never as what it was.
//
// Emit reports whether the record was written or queued: false when no
// handler was enabled for level, and when the state's sink dropped it
// (counted in Counts under its reason: queue_full, claim_exhausted,
// output_failed, not_admitted). A record the state's handler never saw
// (a fan-out of the program's that left it out) counts as taken when the
// handlers returned no error. At or above the flush level it returns once
// the record is written, or the flush bound passed with it still queued
// (true).
func (s *State) Emit(level slog.Level, src Source, mono, tid int64, msg string, attrs ...slog.Attr) bool {
	made(s)
	if mono < 0 {
		mono = 0 // now, as a zero r.Time is (SPEC §2): every record parses back
	}
	o := origin.NewOutside(envelope.Header{Func: src.Function, File: src.File, Line: src.Line, Mono: mono, TID: tid})
	enabled, err := s.emit(level, o, msg, attrs)
	return enabled && err == nil
}

// emit hands a record with origin o, made for msg, through the route, and
// reports whether a handler was enabled for level and what the state's
// door made of it (see door.Emit).
func (s *State) emit(level slog.Level, o *origin.Origin, msg string, attrs []slog.Attr) (enabled bool, err error) {
	// The handler Setup installed (the fan-out of the file, the console
	// and the program's handlers, behind ReplaceAttr; for a C module's
	// record, ReplaceAttr and the file alone unless the program asked),
	// or, for a state Setup never saw, the state's own.
	var h slog.Handler = s.Handler()
	if r := s.route.Load(); r != nil {
		h = r.all
		if o.CModule && !r.cAll {
			h = r.file
		}
	}
	ctx := context.Background()
	if !h.Enabled(ctx, level) {
		return false, nil
	}
	var out origin.Outcome
	o.Outcome = &out
	now := time.Now()
	o.Bind(now)
	r := slog.NewRecord(now, level, msg, 0)
	r.AddAttrs(o.Attr())
	r.AddAttrs(attrs...)
	herr := h.Handle(ctx, r)
	if out.Reached {
		return true, out.Err
	}
	return true, herr
}

// The module's producers outside this package reach a State through
// package door: typed, and with no method a program could call.
func init() {
	door.Emit = func(st any, level slog.Level, o *origin.Origin, msg string) (bool, error) {
		return st.(*State).emit(level, o, msg, nil)
	}
	door.Attach = func(st any, l hostlink.Listener) error {
		// From now on the state publishes its threshold and directory to
		// the C state, claims the [CLOCK_ANCHOR] through its
		// clock_anchor_pid (shared with C writers), closes C admission on
		// Quiesce and Close and opens it on Start.
		s := st.(*State)
		claim, err := s.c.attach(l, s.thr.current(), dirOf(s))
		if err == nil {
			s.anc.attached(claim)
			// One account for both sides: the sink counts its drops and
			// pending records in the C state's fields, where modules
			// count theirs, and reads them back for Counts and reports.
			hostlink.CountInto(s.sink, l.Counters())
		}
		return err
	}
}
