package logtest

import (
	"fmt"
	"log/slog"
	"runtime"
	"strings"
	"time"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/wire"
)

// AnchorRecord is a whole [CLOCK_ANCHOR] record for pid, as a state writes
// it: monotonic mono maps to wall-clock wall.
func AnchorRecord(pid, mono, wall int64) string {
	a := envelope.Anchor{PID: int(pid), Mono: mono, Wall: wall}
	var l envelope.Line
	l.Anchor(pid, &a)
	return string(l.Finish())
}

// SpanRecord is a bare [STRACE] record with hid "abc" (the shape of
// simpler's tests' _span_record), newline included. name and attrs are
// written as given, so a test can hand the reader any text.
func SpanRecord(pid, tid int64, inv uint64, name string, ts, dur int64, attrs string, depth int) string {
	s := envelope.Span{PID: int(pid), TID: tid, Inv: inv, HID: 0xabc, Depth: depth, Name: "N", TS: ts, Dur: dur}
	b := string(s.AppendBody(nil, nil))
	return strings.Replace(b, " name=N ", " name="+name+" ", 1) + attrs + "\n"
}

// HostSpanRecord is one host-log [STRACE] record in the shape simpler's
// HostLogger::emit writes it (the reference tests' _record), without its
// newline: tid is the pid, hid "abc", the envelope's mono 1e6+pid.
func HostSpanRecord(pid int, inv uint64, name, attrs string, depth int, ts, dur int64) string {
	return fmt.Sprintf(envelope.MarkerHeader+"%d][T0x%d][TIMING] "+wire.FuncSpan+": %s", 1_000_000+pid, pid,
		strings.TrimSuffix(SpanRecord(int64(pid), int64(pid), inv, name, ts, dur, attrs, depth), "\n"))
}

// CallSite returns a record as slog makes it at a call site: now, at
// level, with msg and attrs, and the PC of a caller of CallSite, whose
// function and position it is written with: its direct caller when skip
// is 0, that one's caller when 1 (for a helper of a test's own).
func CallSite(skip int, level slog.Level, msg string, attrs ...slog.Attr) slog.Record {
	var pcs [1]uintptr
	runtime.Callers(2+skip, pcs[:])
	r := slog.NewRecord(time.Now(), level, msg, pcs[0])
	r.AddAttrs(attrs...)
	return r
}
