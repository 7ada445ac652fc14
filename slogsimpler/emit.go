package slogsimpler

import (
	"context"
	"log/slog"
	"time"

	"simpler.dev/log/envelope"
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
// rejects such a record) and tid its lane (0 means the calling goroutine). The message is user text:
// escaped and neutralised like any slog message. It reports whether a
// destination wanted the record and took it without error.
func (s *State) Emit(level slog.Level, src Source, mono, tid int64, msg string, attrs ...slog.Attr) bool {
	var o *origin.Origin
	if len(attrs) > 0 {
		// A producer of this module (the forwarder) may hand its own
		// origin first: a verified machine record. Nothing else can.
		if o = origin.From(attrs[0]); o != nil {
			attrs = attrs[1:]
		}
	}
	if o == nil {
		if mono < 0 {
			mono = 0 // now, as a zero r.Time is (SPEC §2): every record parses back
		}
		o = origin.NewOutside(envelope.Header{Func: src.Function, File: src.File, Line: src.Line, Mono: mono, TID: tid})
	}
	return s.send(level, 0, o, msg, attrs)
}

// send hands a record with origin o through the route.
func (s *State) send(level slog.Level, pc uintptr, o *origin.Origin, msg string, attrs []slog.Attr) bool {
	h := s.routed()
	ctx := context.Background()
	if !h.Enabled(ctx, level) {
		return false
	}
	r := slog.NewRecord(time.Now(), level, msg, pc)
	r.AddAttrs(o.Attr())
	r.AddAttrs(attrs...)
	return h.Handle(ctx, r) == nil
}

// routed returns the handler records made outside slog travel through: the
// handler Setup installed (the fan-out of the file, the console and the
// program's handlers), or, for a state Setup never saw, the state's own
// handler.
func (s *State) routed() slog.Handler {
	if r := s.route.Load(); r != nil {
		return r.Handler
	}
	return s.Handler()
}
