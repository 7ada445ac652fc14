// Package trusted carries what a record that did not come from a slog
// call site needs the handler to know: where it was made (a device's
// function and file, a forwarded line's clock and lane) and whether its
// message is a machine record of this module (a span, an op line, a
// simulator's own verified record) to be written with its markers.
//
// The [Mark] travels in the context passed to slog.Handler.Handle, under
// a key of an unexported type in an internal package: code outside
// simpler.dev/log can neither import this package nor build the key, so no
// user call can produce a trusted record. A mark vouches for one message,
// compared by address ([Mark.Owns]): a handler in between that rewrites
// the message hands on user text. Handlers from other libraries ignore the
// context value and print the record as ordinary text.
package trusted

import (
	"context"
	"log/slog"
	"time"
	"unsafe"
)

// A Mark says how the handler writes a record made outside a slog call
// site. Fields are set before the record is handed to a handler and never
// written after.
type Mark struct {
	// Msg is the exact message the mark was made for: the same bytes at
	// the same address.
	Msg string
	// Func replaces the record's function ("emit_host_span"); with Source
	// it is the producer's function, written even when empty ("go").
	Func string
	// Source says File and Line (with Func) are the producer's position:
	// a device record or State.Emit. File "" means no position.
	Source bool
	File   string
	Line   int
	// Mono is the record's time on the envelope's clock; 0 means the
	// record's own time. TID is its lane; 0 means the writing goroutine.
	Mono int64
	TID  int64
	// Machine says the message is a machine record to be written with its
	// markers (control bytes still escaped). Without it, the message is
	// user text, neutralised like any other.
	Machine bool
	// Bare drops every attribute (the logger's and the record's), so the
	// message is the whole body, as machine readers expect.
	Bare bool
}

// Owns reports whether msg is the message m was made for. It compares
// addresses, not contents: strings are immutable, so the same pointer and
// length are the same bytes, and a rewritten message (even an equal copy)
// has another address. O(1) whatever the message's length.
func (m *Mark) Owns(msg string) bool {
	return len(msg) == len(m.Msg) && unsafe.StringData(msg) == unsafe.StringData(m.Msg)
}

// Key is the context key of the mark. A context type of this module may
// answer it from its Value method instead of wrapping with WithValue.
type Key struct{}

// With returns ctx carrying m.
func With(ctx context.Context, m *Mark) context.Context {
	if ctx == nil {
		ctx = context.Background()
	}
	return context.WithValue(ctx, Key{}, m)
}

// From returns the mark in ctx, or nil.
func From(ctx context.Context) *Mark {
	if ctx == nil {
		return nil
	}
	m, _ := ctx.Value(Key{}).(*Mark)
	return m
}

// Send hands a record with message m.Msg, at level, with attrs, to h (a
// state's route: the program's fan-out, or the state's own handler), the
// mark in its context. It reports whether h wanted the record and took it
// without error.
func Send(h slog.Handler, level slog.Level, m *Mark, attrs []slog.Attr) bool {
	ctx := With(context.Background(), m)
	if !h.Enabled(ctx, level) {
		return false
	}
	r := slog.NewRecord(time.Now(), level, m.Msg, 0)
	r.AddAttrs(attrs...)
	return h.Handle(ctx, r) == nil
}

// Transient is embedded in handlers that keep nothing of a record past
// Handle: they render it and copy the bytes before returning. Only for
// such a handler may a caller reuse the buffer a record's message aliases
// as soon as Handle returns (a span's record body, pooled). Its one method
// is unexported, so the mark adds nothing to the embedding type's API and
// nothing outside this module can claim it.
type Transient struct{}

func (Transient) keepsNothing() {}

// KeepsNothing reports whether h embeds [Transient].
func KeepsNothing(h slog.Handler) bool {
	_, ok := h.(interface{ keepsNothing() })
	return ok
}
