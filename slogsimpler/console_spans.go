package slogsimpler

import (
	"context"
	"log/slog"
	"strconv"
	"strings"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/trusted"
)

// The console shows machine records for people. A span's [STRACE] body,
//
//	[STRACE] v=1 pid=4711 tid=1 inv=1 hid=9f depth=1 name=chip.run.bind ts=202279176942 dur=1224567 bytes=4096
//
// prints as
//
//	TIMING span chip.run.bind 1.22ms inv=1 bytes=4096
//
// (name and values decoded, the duration humanised, no pid, tid or raw
// clock), and an op line "[OP] LAUNCH mat%20mul [id=0] target=gpu:0" as
// "op LAUNCH mat mul [id=0] target=gpu:0". Only records that carry the
// trusted mark of the span or op that wrote them, for their exact message,
// are rewritten; the file keeps the machine format either way.

// humanise returns the console form of a span or op record, or false.
func humanise(ctx context.Context, r slog.Record) (slog.Record, bool) {
	m := trusted.From(ctx)
	if m == nil || !m.Owns(r.Message) {
		return r, false
	}
	switch {
	case strings.HasPrefix(r.Message, "[STRACE] v=1 "):
		return humaniseSpan(r)
	case strings.HasPrefix(r.Message, "[OP] "):
		msg := "op " + r.Message[len("[OP] "):]
		// "op PHASE <name> [id=..." : decode the name.
		if phase, rest, ok := strings.Cut(msg[3:], " "); ok {
			if name, tail, ok := strings.Cut(rest, " [id="); ok {
				msg = "op " + phase + " " + envelope.DecodeField(name) + " [id=" + tail
			}
		}
		n := slog.NewRecord(r.Time, r.Level, strings.TrimRight(msg, " "), r.PC)
		return n, true
	}
	return r, false
}

func humaniseSpan(r slog.Record) (slog.Record, bool) {
	rest := r.Message[len("[STRACE] v=1 "):]
	var inv, name, dur string
	for _, key := range [...]string{"pid=", "tid=", "inv=", "hid=", "depth=", "name=", "ts=", "dur="} {
		tok, after, _ := strings.Cut(rest, " ")
		v, ok := strings.CutPrefix(tok, key)
		if !ok {
			return r, false
		}
		switch key {
		case "inv=":
			inv = v
		case "name=":
			name = v
		case "dur=":
			dur = v
		}
		rest = after
	}
	ns, err := strconv.ParseInt(dur, 10, 64)
	if err != nil {
		return r, false
	}
	n := slog.NewRecord(r.Time, r.Level, "span "+envelope.DecodeField(name)+" "+humanDuration(ns), r.PC)
	if inv != "" && inv != "0" {
		if i, err := strconv.ParseUint(inv, 10, 64); err == nil {
			n.AddAttrs(slog.Uint64("inv", i))
		}
	}
	for _, tok := range strings.Fields(rest) {
		k, v, ok := strings.Cut(tok, "=")
		if !ok {
			continue
		}
		if i, err := strconv.ParseInt(v, 10, 64); err == nil {
			n.AddAttrs(slog.Int64(envelope.DecodeField(k), i))
		} else {
			n.AddAttrs(slog.String(envelope.DecodeField(k), envelope.DecodeField(v)))
		}
	}
	return n, true
}

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
