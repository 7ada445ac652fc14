package slogsimpler

import (
	"context"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"simpler.dev/log/levels"
)

// stdlogWriter is the output Setup gives the standard log package. Each
// Write is one log call: it becomes an INFO record with the position of
// the code that called the log package, goes through the program's handler
// (the fan-out: file, console, recorder), and then waits, at most the
// state's flush bound, until it and everything before it are written. The
// wait is what makes log.Fatal and log.Panic safe: both write, then exit or
// panic, and their last words must already be in the file.
type stdlogWriter struct {
	h            slog.Handler
	state        *State
	flushConsole func() error // nil without a console on a terminal or pipe
}

func (w *stdlogWriter) Write(p []byte) (int, error) {
	ctx := context.Background()
	if w.h.Enabled(ctx, levels.Info) {
		msg := strings.TrimSuffix(string(p), "\n")
		r := slog.NewRecord(time.Now(), levels.Info, msg, logCaller())
		_ = w.h.Handle(ctx, r)
		w.state.flushQueued()
		if w.flushConsole != nil {
			_ = w.flushConsole() // log.Fatal's line on the terminal too
		}
	}
	return len(p), nil
}

// logCaller returns the PC of the first frame outside package log above
// the log package's call to Write, or 0.
func logCaller() uintptr {
	var pcs [16]uintptr
	n := runtime.Callers(3, pcs[:]) // skip Callers, logCaller, Write
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		if !strings.HasPrefix(f.Function, "log.") {
			return f.PC + 1 // a return address, as slog.Record.PC is
		}
		if !more {
			return 0
		}
	}
}
