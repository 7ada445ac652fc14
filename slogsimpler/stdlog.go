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
// Write is one log call: it becomes an INFO record (ERROR for log.Fatal's
// and log.Panic's) with the position of
// the code that called the log package, goes through the program's handler
// (the fan-out: file, console, recorder), and then waits, at most the
// state's flush bound, until it and everything before it are written to
// the file. The wait is what makes log.Fatal and log.Panic safe: both
// write, then exit or panic, and their last words must already be in the
// file.
//
// It never waits for the console's Flush. The console writes a line
// before Handle returns while it reads (so log.Fatal's line is on the
// terminal too), and a console that stopped reading has already cost one
// call its bound (see consoleWriter); waiting again in every log call
// would make each of them, net/http's error log included, pay the flush
// bound for a terminal nobody watches.
type stdlogWriter struct {
	h     slog.Handler
	state *State
}

func (w *stdlogWriter) Write(p []byte) (int, error) {
	ctx := context.Background()
	pc, last := logCaller()
	level := levels.Info
	if last {
		level = levels.Error // log.Fatal's and log.Panic's last words pass any threshold but NUL
	}
	if w.h.Enabled(ctx, level) {
		msg := strings.TrimSuffix(string(p), "\n")
		r := slog.NewRecord(time.Now(), level, msg, pc)
		_ = w.h.Handle(ctx, r)
		_ = submitFlush(w.state.sink, nil, w.state.flush.Load().bound) // the file only, within the flush bound: see stdlogWriter
	}
	return len(p), nil
}

// logCaller returns the PC of the first frame outside package log above
// the log package's call to Write, or 0, and whether the call is a Fatal
// or Panic one (the program's last words, which a WARN or ERROR threshold
// must not hide: they are written at ERROR).
func logCaller() (pc uintptr, last bool) {
	var pcs [16]uintptr
	n := runtime.Callers(3, pcs[:]) // skip Callers, logCaller, Write
	frames := runtime.CallersFrames(pcs[:n])
	for {
		f, more := frames.Next()
		fn, inLog := strings.CutPrefix(f.Function, "log.")
		if !inLog {
			return f.PC + 1, last // a return address, as slog.Record.PC is
		}
		fn = strings.TrimPrefix(fn, "(*Logger).")
		last = last || strings.HasPrefix(fn, "Fatal") || strings.HasPrefix(fn, "Panic")
		if !more {
			return 0, last
		}
	}
}
