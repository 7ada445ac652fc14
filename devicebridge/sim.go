package devicebridge

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path/filepath"
	"runtime"

	"simpler.dev/log/slogsimpler"
)

// ErrNilState is returned when binding a bridge to no state.
var ErrNilState = errors.New("devicebridge: nil state")

// A Sim is the logging interface of simulated device code. It is bound to
// a state and reads its live threshold on every call. Safe for concurrent
// use.
type Sim struct {
	state *slogsimpler.State
	// h is a handler bound to state, made once: its Enabled is the
	// state's live threshold (levels.Trace included).
	h *slogsimpler.Handler
}

// NewSim binds a simulated device's logging to state.
func NewSim(state *slogsimpler.State) (*Sim, error) {
	if state == nil {
		return nil, ErrNilState
	}
	return &Sim{state: state, h: state.Handler()}, nil
}

// Enabled reports whether a record at level would be written now.
func (s *Sim) Enabled(level slog.Level) bool { return s.h.Enabled(context.Background(), level) }

// Logf writes a device record at level from function fn, formatted like
// fmt.Sprintf, with the caller's file and line. Nothing is formatted when
// the level is disabled.
func (s *Sim) Logf(level slog.Level, fn, format string, args ...any) {
	s.logf(level, fn, format, args)
}

func (s *Sim) logf(level slog.Level, fn, format string, args []any) {
	if !s.h.Enabled(context.Background(), level) {
		return
	}
	var pcs [1]uintptr
	src := slogsimpler.Source{Function: fn}
	if runtime.Callers(3, pcs[:]) == 1 {
		f, _ := runtime.CallersFrames(pcs[:]).Next()
		src.File, src.Line = filepath.Base(f.File), f.Line
	}
	msg := format
	if len(args) > 0 {
		msg = fmt.Sprintf(format, args...)
	}
	s.state.Emit(level, src, 0, 0, msg)
}
