package otlptest

import (
	"strings"

	"simpler.dev/log/envelope"
)

// AnchorRecord is a whole [CLOCK_ANCHOR] record for pid: monotonic mono
// maps to wall-clock wall. Built with the root module's public envelope,
// as any producer of simpler logs would.
func AnchorRecord(pid, mono, wall int64) string {
	a := envelope.Anchor{PID: int(pid), Mono: mono, Wall: wall}
	var l envelope.Line
	l.Anchor(pid, &a)
	return string(l.Finish())
}

// SpanRecord is a bare [STRACE] record with hid "abc", newline included;
// name and attrs are written as given.
func SpanRecord(pid, tid int64, inv uint64, name string, ts, dur int64, attrs string, depth int) string {
	s := envelope.Span{PID: int(pid), TID: tid, Inv: inv, HID: 0xabc, Depth: depth, Name: "N", TS: ts, Dur: dur}
	b := string(s.AppendBody(nil, nil))
	return strings.Replace(b, " name=N ", " name="+name+" ", 1) + attrs + "\n"
}

// Nest sets m[a][b]…[z] = v for the dotted key "a.b.….z", making the
// inner maps as needed: how a slogtest result function rebuilds groups
// that a handler flattened into dotted keys.
func Nest(m map[string]any, key string, v any) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[p] = sub
		}
		m = sub
	}
	m[parts[len(parts)-1]] = v
}
