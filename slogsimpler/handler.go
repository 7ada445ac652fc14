package slogsimpler

import (
	"context"
	"log/slog"

	"github.com/petermattis/goid"

	"simpler.dev/log/internal/handoff"
	"simpler.dev/log/internal/origin"
	"simpler.dev/log/internal/render"
	"simpler.dev/log/internal/tracelink"
	"simpler.dev/log/sink"
)

// A Handler is a slog.Handler that renders records in simpler's host
// envelope and hands them to its State's sink. Handlers made by WithAttrs
// and WithGroup share the State, so they all follow its live threshold and
// write to the same destination.
//
// The zero Handler is bound to nothing and silent: it never prints at a
// level nobody chose.
type Handler struct {
	state *State
	r     render.Renderer
	// kept is what WithAttrs and WithGroup gave, typed, for a State that
	// writes into a Capture (nil otherwise: nothing is kept).
	kept *keptAttrs
	// A span's record is written from its typed values, never with its
	// source position: spans behind this handler alone skip reading it.
	// (Embedded through an unexported alias: the field stays private.)
	pcFree
}

type pcFree = origin.PCFree

var _ slog.Handler = (*Handler)(nil)

// Handler returns a handler bound to s: the one way to make one. Its
// clones (WithAttrs, WithGroup) share s.
func (s *State) Handler() *Handler {
	made(s)
	return &Handler{state: s}
}

// Enabled reports whether the bound state's live threshold admits level.
func (h *Handler) Enabled(_ context.Context, level slog.Level) bool {
	return h.state != nil && h.state.enabled(level)
}

// WithAttrs returns a handler whose records carry attrs, rendered now.
func (h *Handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	return &Handler{state: h.state, r: h.r.WithAttrs(attrs), kept: h.kept.with(h.state, attrs)}
}

// WithGroup returns a handler that puts later attributes under name.
func (h *Handler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &Handler{state: h.state, r: h.r.WithGroup(name), kept: h.kept.group(h.state, name)}
}

// Handle hands r, in its typed form, to the state's one door, which
// renders it with the handler's attributes and groups; a plain record
// (see One data path in the package doc) goes into the queue as fields,
// for the writer to render to the same bytes.
// It rechecks the live threshold (a level change between Enabled and
// Handle wins). It returns an error only when the destination failed in
// synchronous mode; every other loss is counted by the sink, not returned.
//
// A record logged with the context of a span (or invocation) whose tree
// joined a caller's trace carries trace_id= and span_id= last (SPEC §13),
// kept whole when the record is fitted.
func (h *Handler) Handle(ctx context.Context, r slog.Record) error {
	s := h.state
	if s == nil {
		return nil
	}
	if !s.enabled(r.Level) { // Trace too: written as DEBUG when enabled (levels.Trace)
		return nil
	}
	if s.capture != nil {
		s.capture.tee(h.kept, &r)
	}
	rd := &h.r
	var ids render.TraceIDs
	var traced render.Renderer
	// Only a record from a call site (a PC) can be one: a span, an op
	// line or a record made outside slog behind this handler has none.
	if joined := tracelink.Record; joined != nil && r.PC != 0 && ctx != nil {
		var ok bool
		if ids.Trace, ids.Span, ok = joined(ctx); ok && origin.Of(&r) == nil {
			traced = h.r.WithTrace(&ids) // rendered here, not handed off as fields
			rd = &traced
		}
	}
	anchored := false
	if rd == &h.r && s.running.Load() && !s.flush.Load().admits(r.Level) {
		// A plain record is rendered by the writer: the caller copies its
		// fields. Its attributes are read once, onto the stack, only when
		// it has some: a record without them pays nothing for the copy.
		var plain, done bool
		if r.NumAttrs() == 0 {
			if plain = handoff.Plain(&r, nil); plain {
				done = s.handOff(&r, nil, &h.r)
			}
		} else {
			var t handoff.Taken
			if plain = handoff.Plain(&r, &t); plain {
				done = s.handOff(&r, &t, &h.r)
			}
		}
		if done {
			return nil
		}
		anchored = plain // handOff saw to the anchor before the queue declined
	}
	o, err := s.enter(&r, rd, anchored)
	if o != nil && o.Outcome != nil {
		*o.Outcome = origin.Outcome{Reached: true, Err: err}
	}
	if err == sink.ErrOutputFailed {
		return err
	}
	return nil
}

// handOff sees to the anchor, then queues the plain record r (its
// attributes t, as handoff.Plain read them) for the writer to render with
// rd, and reports whether it is done with it (queued, or counted lost);
// if not, the queue declined it and the caller renders it.
func (s *State) handOff(r *slog.Record, t *handoff.Taken, rd *render.Renderer) (done bool) {
	anchorBefore(s, r.Time)
	switch e, pos, out := s.handoff.Claim(); out {
	case handoff.Claimed:
		e.Fill(r, t, rd, goid.Get())
		s.handoff.Publish(pos)
		return true
	case handoff.Counted:
		return true
	}
	return false
}
