package strace

import (
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"slices"
	"strconv"
	"time"
)

// Event is one Chrome trace event (the JSON Perfetto and chrome://tracing
// read).
type Event struct {
	Name string         `json:"name"`
	Ph   string         `json:"ph"`
	TS   *float64       `json:"ts,omitempty"`  // µs
	Dur  *float64       `json:"dur,omitempty"` // µs
	PID  int64          `json:"pid"`
	TID  int64          `json:"tid"`
	S    string         `json:"s,omitempty"`   // instant scope
	Cat  string         `json:"cat,omitempty"` // flow category
	ID   int            `json:"id,omitempty"`  // flow id
	Args map[string]any `json:"args,omitempty"`
}

// Document is a Chrome trace file.
type Document struct {
	TraceEvents     []Event `json:"traceEvents"`
	DisplayTimeUnit string  `json:"displayTimeUnit"`
	// Unaligned lists the device (clk=dev) spans a swimlane cannot place
	// on its host time axis; always present in a swimlane, absent
	// elsewhere.
	Unaligned *[]map[string]any `json:"unalignedDeviceSpans,omitempty"`
	// ClockAnchors lists every process's anchor, by pid, its numbers as
	// decimal strings: a JSON number above 2^53 is not exact in a
	// JavaScript viewer.
	ClockAnchors []AnchorJSON `json:"clockAnchors,omitempty"`
}

// AnchorJSON is one clockAnchors entry.
type AnchorJSON struct {
	PID    int64  `json:"pid"`
	MonoNS string `json:"mono_ns"`
	WallNS string `json:"wall_ns"`
}

// anchorList is the clockAnchors list: by pid, numbers as strings.
func anchorList(anchors map[int64]Anchor) []AnchorJSON {
	var out []AnchorJSON
	for _, pid := range slices.Sorted(maps.Keys(anchors)) {
		a := anchors[pid]
		out = append(out, AnchorJSON{PID: pid, MonoNS: strconv.FormatInt(a.MonoNS, 10), WallNS: strconv.FormatInt(a.WallNS, 10)})
	}
	return out
}

func micros(ns int64) *float64 { v := float64(ns) / 1000; return &v }

func meta(kind string, pid, tid int64, name string) Event {
	return Event{Name: kind, Ph: "M", PID: pid, TID: tid, Args: map[string]any{"name": name}}
}

// wallArgs adds wall-clock arguments to a host span whose pid has an
// anchor written no later than the span began: wall_ts_ns as a decimal
// string (exact in a JavaScript viewer) and wall_time in UTC with all
// nine fraction digits. A span that began before its process's anchor gets
// none.
func wallArgs(args map[string]any, s *Span, anchors map[int64]Anchor) {
	if s.IsDevice() {
		return
	}
	a, ok := anchors[s.PID]
	if !ok || a.MonoNS > s.TS {
		return
	}
	w := a.Wall(s.TS)
	args["wall_ts_ns"] = strconv.FormatInt(w, 10)
	args["wall_time"] = formatWall(w)
}

// formatWall writes Unix ns as 2006-01-02T15:04:05.000000000Z.
func formatWall(ns int64) string {
	sec, frac := ns/1e9, ns%1e9
	if frac < 0 {
		sec, frac = sec-1, frac+1e9
	}
	return time.Unix(sec, 0).UTC().Format("2006-01-02T15:04:05") + fmt.Sprintf(".%09dZ", frac)
}

// ChromeTrace builds the per-invocation view: one process lane per (pid,
// inv), named "<label> inv=<inv> (pid=<pid>)", with host spans on thread 0
// and device (clk=dev) spans on thread 1, since the two clocks do not share
// a time line. Give it invocations grouped with InInvocation. Spans of pids
// with an anchor carry wall_ns and wall_time arguments.
func ChromeTrace(invs []*Invocation, buckets []Bucket, anchors map[int64]Anchor) Document {
	doc := Document{DisplayTimeUnit: "ms", TraceEvents: []Event{}, ClockAnchors: anchorList(anchors)}
	for lane, iv := range invs {
		pid := int64(lane + 1)
		label := iv.HID[:min(8, len(iv.HID))]
		if len(buckets) > 0 {
			label = Label(buckets, iv.HID)
		}
		doc.TraceEvents = append(doc.TraceEvents,
			meta("process_name", pid, 0, fmt.Sprintf("%s inv=%d (pid=%d)", label, iv.Inv, iv.PID)),
			meta("thread_name", pid, 0, "host"),
			meta("thread_name", pid, 1, "device (clk=dev)"))
		for _, s := range iv.Spans {
			args := map[string]any{"inv": s.Inv, "hid": s.HID, "depth": s.Depth, "attrs": s.Attrs}
			wallArgs(args, s, anchors)
			tid := int64(0)
			if s.IsDevice() {
				tid = 1
			}
			doc.TraceEvents = append(doc.TraceEvents, Event{Name: s.Name, Ph: "X", TS: micros(s.TS), Dur: micros(s.Dur), PID: pid, TID: tid, Args: args})
		}
	}
	return doc
}

// SplitDevice separates host spans from device (clk=dev) spans, which are
// on another clock.
func SplitDevice(spans []Span) (host, device []Span) {
	for _, s := range spans {
		if s.IsDevice() {
			device = append(device, s)
		} else {
			host = append(host, s)
		}
	}
	return host, device
}

func WriteJSON(w io.Writer, doc Document) error {
	enc := json.NewEncoder(w)
	return enc.Encode(doc)
}
