package slogsimpler

import (
	"log/slog"
	"time"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/trusted"
	"simpler.dev/log/levels"
)

// A Source is where a record that did not come through slog was made, for
// [State.Emit]. The zero Source has no function and no position (the
// envelope then prints function "go").
type Source struct {
	Function string // printed as given, after envelope.FuncName's clean-up
	File     string // base name; empty for none
	Line     int
}

// Emit writes a record that did not come through slog — from simulated
// device code, or forwarded from another process — with the envelope,
// threshold, anchor and sink of s. mono is the record's CLOCK_MONOTONIC
// time (0 means now) and tid its lane (0 means the calling goroutine). The
// message is user text: escaped and neutralised like any slog message. It
// reports whether the record was admitted by the threshold and accepted by
// the sink.
func (s *State) Emit(level slog.Level, src Source, mono, tid int64, msg string, attrs ...slog.Attr) bool {
	return s.emit(level, src, mono, tid, msg, false, attrs)
}

// Text that a simpler logger rendered itself (a forwarded envelope line,
// spans included) is re-emitted with markers left alone. That path is for
// the device bridge only, so it is reachable through an internal package
// and not as a method.
func init() {
	trusted.Emit = func(st any, level slog.Level, fn, file string, line int, mono, tid int64, msg string) bool {
		s, ok := st.(*State)
		return ok && s != nil && s.emit(level, Source{Function: fn, File: file, Line: line}, mono, tid, msg, true, nil)
	}
}

func (s *State) emit(level slog.Level, src Source, mono, tid int64, msg string, trusted bool, attrs []slog.Attr) bool {
	t := s.current()
	if t == levels.Nul || level < t {
		return false
	}
	if t <= levels.Timing && s.anchor.Load() != int64(s.pid) {
		s.ensureAnchor(time.Time{})
	}
	if mono == 0 {
		mono = envelope.MonoNow()
	}
	if tid == 0 {
		tid = envelope.GoroutineID()
	}
	var l envelope.Line
	l.Header(mono, tid, level)
	if src.Function == "" && src.File == "" {
		l.Func("go")
	} else {
		l.Func(envelope.FuncName(src.Function))
		if src.File != "" {
			l.SourceAt(src.File, src.Line)
		}
	}
	if trusted {
		l.Trusted(msg)
	} else {
		l.Message(msg)
	}
	for _, a := range attrs {
		l.Attr("", 0, a)
	}
	return s.submit(level, l.Finish()) == nil
}
