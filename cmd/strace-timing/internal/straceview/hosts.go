package straceview

import (
	"fmt"
	"regexp"
	"strconv"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/satmath"
	"simpler.dev/log/strace"
)

// Several hosts on one clock. Each host's monotonic clock starts at its
// own boot, so host spans from different machines share no time line; but
// every file a process writes starts with a [CLOCK_ANCHOR] pairing its
// monotonic clock with wall-clock time, and wall-clock time is shared (to
// NTP's accuracy). The reader places each span by its own file's anchor
// (package strace); AlignHosts puts every placed span on one wall-clock
// axis,
// keyed by (host, pid) since pids collide across machines, and lists what
// it cannot place instead of placing it at a wrong time.

// A HostPID is the host and original pid behind a pid AlignHosts
// assigned, and its run (strace.Run: two runs with one pid on one host
// are two processes).
type HostPID struct {
	Label string
	PID   int64
	Run   *strace.Run
}

// An UnalignedSpan is a span AlignHosts could not place: its process has
// no anchor in any file, or it is on a device's clock.
type UnalignedSpan struct {
	Host   string `json:"host"`
	PID    int64  `json:"pid"`
	Name   string `json:"name"`
	TSNS   int64  `json:"ts_ns"`
	DurNS  int64  `json:"dur_ns"`
	Reason string `json:"reason"`
}

// Aligned is the result of AlignHosts: spans with new pids and times in ns
// since Origin (a wall-clock instant), an anchor per new pid that maps those
// times back to wall time, and what could not be placed.
type Aligned struct {
	Spans     []strace.Span
	Anchors   map[int64]envelope.Anchor
	Hosts     map[int64]HostPID
	Unaligned []UnalignedSpan
	Origin    int64 // wall ns of ts 0
	// Unanchored lists, per host, the pids with spans and no anchor.
	Unanchored []HostPID
}

// AlignHosts merges several hosts' spans onto one wall-clock time line.
func AlignHosts(hosts []strace.HostLog) Aligned {
	type key struct {
		host int
		proc
	}
	out := Aligned{Anchors: map[int64]envelope.Anchor{}, Hosts: map[int64]HostPID{}}
	ids := map[key]int64{}
	origin, first := int64(0), true
	for _, h := range hosts {
		for i := range h.Parser.Spans {
			s := &h.Parser.Spans[i]
			if w, ok := s.WallAt(s.TS); ok && !s.IsDevice() {
				if first || w < origin {
					origin, first = w, false
				}
			}
		}
	}
	out.Origin = origin
	unanchored := map[key]bool{}
	for hi, h := range hosts {
		for i := range h.Parser.Spans {
			s := h.Parser.Spans[i]
			pid := realPID(&s)
			k := key{hi, proc{pid, s.Run}}
			wall, anchored := s.WallAt(s.TS)
			reason := ""
			switch {
			case s.IsDevice():
				reason = "device clock"
			case !anchored:
				reason = "no [CLOCK_ANCHOR] for its process"
				if !unanchored[k] {
					unanchored[k] = true
					out.Unanchored = append(out.Unanchored, HostPID{h.Label, pid, s.Run})
				}
			}
			if reason != "" {
				out.Unaligned = append(out.Unaligned, UnalignedSpan{Host: h.Label, PID: pid, Name: s.Name, TSNS: s.TS, DurNS: s.Dur, Reason: reason})
				continue
			}
			id, ok := ids[k]
			if !ok {
				id = int64(len(ids) + 1)
				ids[k] = id
				out.Hosts[id] = HostPID{h.Label, pid, s.Run}
				// Times below are ns since origin; this anchor maps them
				// back to wall time for the wall_ts_ns arguments.
				out.Anchors[id] = envelope.Anchor{PID: int(id), Mono: 0, Wall: origin}
			}
			s.PID, s.Run = id, nil // the pid says the host and run: see Relabel
			s.TS = satmath.Sub(wall, origin)
			s.Place(out.Anchors[id])
			out.Spans = append(out.Spans, s)
		}
	}
	return out
}

var pidLabel = regexp.MustCompile(`\(pid=(\d+)\)`)

// RelabelProcesses rewrites the "(pid=N)" of process names to the host and
// original pid behind the assigned N, and drops the anchor list (the
// aligned times are since Origin, not each process's monotonic clock).
func (a *Aligned) RelabelProcesses(doc *Document) {
	relabel := func(e *Event) {
		if e.Ph == "M" && e.Name == "process_name" {
			name, _ := e.Args["name"].(string)
			e.Args["name"] = a.Relabel(name)
		}
	}
	if stream := doc.stream; stream != nil {
		doc.stream = func(yield func(*Event) bool) {
			for e := range stream {
				relabel(e)
				if !yield(e) {
					return
				}
			}
		}
	}
	for i := range doc.TraceEvents {
		relabel(&doc.TraceEvents[i])
	}
	doc.ClockAnchors = nil
}

// Relabel rewrites each "(pid=N)" in a process name to the host and
// original pid behind the assigned N.
func (a *Aligned) Relabel(name string) string {
	return pidLabel.ReplaceAllStringFunc(name, func(m string) string {
		n, _ := strconv.ParseInt(m[len("(pid="):len(m)-1], 10, 64)
		if hp, ok := a.Hosts[n]; ok {
			if run := runText(hp.Run); run != "" {
				return fmt.Sprintf("(host=%s pid=%d, %s)", hp.Label, hp.PID, run)
			}
			return fmt.Sprintf("(host=%s pid=%d)", hp.Label, hp.PID)
		}
		return m
	})
}
