package slogsimpler

import (
	"context"
	"log/slog"
	"slices"

	"simpler.dev/log/internal/origin"
)

// WithReplaceAttr returns a handler that rewrites every attribute with
// replace before h sees it, with the semantics of slog.HandlerOptions'
// ReplaceAttr: it is called for each non-group attribute, LogValuers
// resolved, with the names of the groups the attribute is in (those of
// WithGroup first); an attribute it returns empty is dropped. Of the
// built-in attributes it sees the message, as slog.MessageKey with no
// groups (what it returns becomes the message; empty drops it), so text
// from producers that have no attributes — a simulated device, a
// forwarded line, a C module — can be redacted too. The record's time,
// level and source are not passed to it (the envelope writes them as
// fields).
//
// Put it in front of the fan-out, as [Setup] does with
// Options.ReplaceAttr, so a redacted value reaches no destination: not
// the file, not the console, not the trace recorder. A nil replace returns
// h itself: no cost at all.
func WithReplaceAttr(h slog.Handler, replace func(groups []string, a slog.Attr) slog.Attr) slog.Handler {
	if replace == nil {
		return h
	}
	return &replaceHandler{next: h, replace: replace}
}

type replaceHandler struct {
	next    slog.Handler
	replace func([]string, slog.Attr) slog.Attr
	groups  []string // clipped: a clone's append never writes a sibling's array
}

func (h *replaceHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.next.Enabled(ctx, l)
}

// Handle passes on a record with the same time, level, message (the same
// string, so a verified machine record keeps its trust) and source, and
// the replaced attributes. A record made by this module outside a slog
// call site (a span, an op line, State.Emit, a device or a C module) keeps
// its origin, the first attribute, as it is: replace sees the record's
// other attributes, a span's among them, as it sees any.
func (h *replaceHandler) Handle(ctx context.Context, r slog.Record) error {
	msg := r.Message
	if a := h.replace(nil, slog.String(slog.MessageKey, msg)); a.Key == "" {
		msg = ""
	} else if v := a.Value.Resolve().String(); v != msg {
		msg = v // a message changed on the way is user text from here on
	}
	if r.NumAttrs() == 0 {
		if msg != r.Message {
			r = slog.NewRecord(r.Time, r.Level, msg, r.PC)
		}
		return h.next.Handle(ctx, r)
	}
	n := slog.NewRecord(r.Time, r.Level, msg, r.PC)
	first := true
	r.Attrs(func(a slog.Attr) bool {
		if first {
			first = false
			if origin.From(a) != nil {
				n.AddAttrs(a)
				return true
			}
		}
		if a = h.apply(h.groups, a); !a.Equal(slog.Attr{}) {
			n.AddAttrs(a)
		}
		return true
	})
	return h.next.Handle(ctx, n)
}

// apply replaces a, descending into groups; it returns the empty Attr for
// an attribute that is dropped (a group that ends up empty included).
func (h *replaceHandler) apply(groups []string, a slog.Attr) slog.Attr {
	a.Value = a.Value.Resolve()
	if a.Value.Kind() != slog.KindGroup {
		return h.replace(groups, a)
	}
	inner := groups
	if a.Key != "" {
		inner = append(slices.Clip(groups), a.Key)
	}
	var kept []slog.Attr
	for _, ga := range a.Value.Group() {
		if ga = h.apply(inner, ga); !ga.Equal(slog.Attr{}) {
			kept = append(kept, ga)
		}
	}
	if len(kept) == 0 {
		return slog.Attr{}
	}
	return slog.Attr{Key: a.Key, Value: slog.GroupValue(kept...)}
}

func (h *replaceHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	kept := make([]slog.Attr, 0, len(attrs))
	for _, a := range attrs {
		if a = h.apply(h.groups, a); !a.Equal(slog.Attr{}) {
			kept = append(kept, a)
		}
	}
	return &replaceHandler{next: h.next.WithAttrs(kept), replace: h.replace, groups: h.groups}
}

func (h *replaceHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	return &replaceHandler{next: h.next.WithGroup(name), replace: h.replace, groups: slices.Clip(append(slices.Clip(h.groups), name))}
}
