package logtest

import (
	"bytes"
	"context"
	"log/slog"
	"slices"
	"sync"
)

// Buffer is a bytes.Buffer safe for concurrent writers, for capturing what
// a state writes.
type Buffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

// Write appends p.
func (l *Buffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

// Bytes returns a copy of what was written.
func (l *Buffer) Bytes() []byte {
	l.mu.Lock()
	defer l.mu.Unlock()
	return bytes.Clone(l.b.Bytes())
}

// String returns what was written.
func (l *Buffer) String() string { return string(l.Bytes()) }

// Keeper is a handler of another library's kind, for a fan-out in tests:
// it takes every record and keeps a clone.
type Keeper struct {
	mu   sync.Mutex
	recs []slog.Record
}

// Enabled is true at every level.
func (k *Keeper) Enabled(context.Context, slog.Level) bool { return true }

// Handle keeps a clone of r.
func (k *Keeper) Handle(_ context.Context, r slog.Record) error {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.recs = append(k.recs, r.Clone())
	return nil
}

// WithAttrs returns k: what it keeps are the records as given.
func (k *Keeper) WithAttrs([]slog.Attr) slog.Handler { return k }

// WithGroup returns k.
func (k *Keeper) WithGroup(string) slog.Handler { return k }

// Records returns what k kept, in order.
func (k *Keeper) Records() []slog.Record {
	k.mu.Lock()
	defer k.mu.Unlock()
	return slices.Clone(k.recs)
}

// TimeSpy wraps a handler and notes whether the last record had a zero
// time: the envelope always carries mono_ns, so a slogtest result reports
// the time as absent exactly when the record had none, as slogtest's
// contract allows for a value a handler supplies itself.
type TimeSpy struct {
	slog.Handler
	Zero *bool
}

// Handle notes r's time and passes r on.
func (z TimeSpy) Handle(ctx context.Context, r slog.Record) error {
	*z.Zero = r.Time.IsZero()
	return z.Handler.Handle(ctx, r)
}

// WithAttrs keeps the spy on the clone.
func (z TimeSpy) WithAttrs(as []slog.Attr) slog.Handler {
	return TimeSpy{z.Handler.WithAttrs(as), z.Zero}
}

// WithGroup keeps the spy on the clone.
func (z TimeSpy) WithGroup(n string) slog.Handler { return TimeSpy{z.Handler.WithGroup(n), z.Zero} }
