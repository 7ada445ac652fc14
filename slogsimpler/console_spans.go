package slogsimpler

import (
	"log/slog"
	"strconv"
	"strings"
	"time"

	"simpler.dev/log/internal/origin"
	"simpler.dev/log/internal/wire"
)

// The console shows machine records for people. A span's [STRACE] body,
//
//	[STRACE] v=1 pid=4711 tid=1 inv=1 hid=9f depth=1 name=chip.run.bind ts=202279176942 dur=1224567 bytes=4096
//
// prints as
//
//	TIMING span chip.run.bind 1.22ms inv=1 bytes=4096
//
// (the name and the typed attributes as the span was given them, the
// duration humanised, no pid, tid or raw clock), and an op line
// "[OP] LAUNCH mat%20mul [id=0] target=gpu:0" as
// "op LAUNCH mat mul [id=0] target=gpu:0". Only records whose origin says
// they are a span or an op are rewritten, from their typed values, never
// from text; the file keeps the machine format either way.

// humanise returns the console form of a record whose origin is o: a
// span or op line for people, or a record made outside slog without the
// origin attribute (its function and position are the file's business).
// Records from slog call sites (o nil) are returned as they are.
func humanise(r slog.Record, o *origin.Origin) slog.Record {
	if o == nil {
		return r
	}
	var n slog.Record
	switch o.Kind {
	case origin.Span:
		n = slog.NewRecord(r.Time, r.Level, "span "+r.Message+" "+humanDuration(o.Span.Dur), r.PC)
		if o.Span.Inv != 0 {
			n.AddAttrs(slog.Uint64("inv", o.Span.Inv))
		}
	case origin.Op:
		op := origin.OpOf(o, &r)
		msg := "op " + wire.OpPhase(op.Complete) + " " + op.Name + " [id=" + strconv.FormatUint(op.ID, 10) + "] " + op.Detail
		if op.Target != "" {
			if op.Detail != "" {
				msg += ";"
			}
			msg += "target=" + op.Target
			if op.Task != "" {
				msg += ":" + op.Task
			}
		}
		return slog.NewRecord(r.Time, r.Level, strings.TrimRight(msg, " "), r.PC)
	default:
		n = slog.NewRecord(r.Time, r.Level, r.Message, r.PC)
	}
	origin.Attrs(&r, func(a slog.Attr) bool {
		n.AddAttrs(a)
		return true
	})
	return n
}

// topSpans is the console's default span filter: only spans at depth 0,
// the invocations and other outermost spans, whose durations are what a
// person watching a run wants; the nested ones stay in the file for the
// tools.
func topSpans(depth int, _ time.Duration) bool { return depth == 0 }

// humanDuration writes ns with three significant digits in the largest
// unit that keeps the number at least 1: 1.22ms, 283µs, 41ns, 12.5s.
func humanDuration(ns int64) string {
	if ns < 0 {
		return "-" + humanDuration(-ns)
	}
	v, unit := float64(ns), "ns"
	switch {
	case ns >= 1e9:
		v, unit = v/1e9, "s"
	case ns >= 1e6:
		v, unit = v/1e6, "ms"
	case ns >= 1e3:
		v, unit = v/1e3, "µs"
	default:
		return strconv.FormatInt(ns, 10) + unit
	}
	prec := 2
	switch {
	case v >= 100:
		prec = 0
	case v >= 10:
		prec = 1
	}
	s := strconv.FormatFloat(v, 'f', prec, 64)
	if strings.Contains(s, ".") {
		s = strings.TrimRight(strings.TrimRight(s, "0"), ".")
	}
	return s + unit
}
