// Package trusted carries the mark that lets this module's own machine
// records (spans, op lines) through the handler without the neutralising
// that user text gets.
//
// The mark travels in the context passed to slog.Handler.Handle, under a
// key of an unexported type in an internal package: code outside
// simpler.dev/log can neither import this package nor build the key, so no
// user call can produce a trusted record. Handlers from other libraries
// ignore the context value and print the record's message as ordinary
// text, which is what a console should show.
package trusted

import (
	"context"
	"log/slog"
	"unsafe"
)

// Emit writes a record whose message a simpler logger rendered itself
// (markers kept, control bytes escaped) through a *slogsimpler.State. Set
// by package slogsimpler at initialisation; used by the device bridge to
// forward a simulator's envelope lines, spans included.
var Emit func(state any, level slog.Level, function, file string, line int, mono, tid int64, msg string) bool

// A Mark says how the handler writes a trusted record. It vouches for one
// message only: a handler between the logger and ours that rewrites the
// record's message (to redact it, say) gets user text, neutralised, not a
// machine record with someone else's words.
type Mark struct {
	// Msg is the exact message the mark was made for: the same bytes at
	// the same address. Set before the record is handed to a handler,
	// never written after.
	Msg string
	// Func replaces the record's function and source ("emit_host_span");
	// empty keeps the record's own caller.
	Func string
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
