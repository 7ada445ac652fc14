package slogsimpler

import (
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"

	"simpler.dev/log/sink"
)

// TestZeroValues: a zero State or Sink is not ready, and says so, with
// what to do, at its first use (issue 57: each panicked on a nil pointer,
// and nothing said why).
func TestZeroValues(t *testing.T) {
	const state = "slogsimpler: a zero State: make one with NewState, or use Default()"
	const sinkMsg = "sink: a zero Sink: make one with sink.New"
	for _, tc := range []struct {
		name string
		use  func()
		msg  string
	}{
		{"State.Handler", func() { slog.New(new(State).Handler()).Info("x") }, state},
		{"State.Start", func() { _ = new(State).Start() }, state},
		{"State.BindDir", func() { _ = new(State).BindDir(t.TempDir()) }, state},
		{"State.Close", func() { _ = new(State).Close() }, state},
		{"Sink.Write", func() { _, _ = new(sink.Sink).Write([]byte("x\n")) }, sinkMsg},
		{"Sink.Start", func() { _ = new(sink.Sink).Start() }, sinkMsg},
		{"Sink.BindDir", func() { _ = new(sink.Sink).BindDir(t.TempDir()) }, sinkMsg},
		{"Sink.Close", func() { _ = new(sink.Sink).Close() }, sinkMsg},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.PanicsWithValue(t, tc.msg, tc.use) })
	}
}
