package slogsimpler

import (
	"log/slog"
	"sync/atomic"

	"simpler.dev/log/internal/trusted"
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
// through s's route (see [State.Route]): the program's fan-out once Setup
// has run, so the console shows it and a recorder keeps it, and the file
// writes it with the producer's function and position. mono is the
// record's time on the envelope's clock (0 means now) and tid its lane (0
// means the calling goroutine). The message is user text: escaped and
// neutralised like any slog message. It reports whether a destination
// wanted the record and took it without error.
func (s *State) Emit(level slog.Level, src Source, mono, tid int64, msg string, attrs ...slog.Attr) bool {
	m := &trusted.Mark{Msg: msg, Source: true, Func: src.Function, File: src.File, Line: src.Line, Mono: mono, TID: tid}
	return trusted.Send(s.Route(), level, m, attrs)
}

// Route returns the handler that records made outside slog (State.Emit,
// the device bridge) travel through: the handler Setup installed (the
// fan-out of the file, the console and the program's handlers), or, for a
// state Setup never saw, the state's own handler.
func (s *State) Route() slog.Handler {
	if r := s.route.Load(); r != nil {
		return r.Handler
	}
	return s.Handler()
}

// routeBox boxes a handler for an atomic pointer.
type routeBox struct{ slog.Handler }

// routeState is embedded in State: the route, written by Setup, read by
// every record made outside slog.
type routeState struct {
	route atomic.Pointer[routeBox]
}
