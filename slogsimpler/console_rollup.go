package slogsimpler

import (
	"context"
	"log/slog"
	"slices"
	"strconv"
	"sync"
	"time"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
)

// The console's default for spans rolls up what repeats. A simpler job
// runs a few chip.run invocations, and a person wants each of their
// lines; a server runs thousands of requests, one root span each, and
// a line per request buries everything else (a service of 8 goroutines
// printed 10 477 span lines in 4 s). So, per span name and per second:
//
//   - the first rollupShown spans of a name print as they end, as always;
//
//   - past that, the name rolls up: its spans are counted, and once a
//     second one line says how many there were and how long they took,
//
//     TIMING spans http.request ×2431 p50 3.6ms p99 36ms max 120ms (last 1s)
//
//     and while the name keeps rolling up (it rolled up in the second
//     before) none of its spans print alone: the console settles on one
//     line a second for it;
//
//   - a span that failed (its goroutine logged an ERROR between its start
//     and its end; its line ends its message with "failed") or a slow one
//     (rollupSlow times the name's median of the second before, and at
//     least rollupSlowFloor) prints at once, rolled up or not, and counts
//     in the summary too.
//
// Only spans the console would print count: depth 0 (see topSpans). A
// Spans filter of the program's (ConsoleOptions.Spans, Options.
// ConsoleSpans) replaces all of this: it chooses span by span. The file
// gets every span either way; this is the console alone.
const (
	rollupWindow    = time.Second
	rollupShown     = 8
	rollupSlow      = 10
	rollupSlowFloor = time.Millisecond
	// rollupSamples bounds the durations kept per name and second; past
	// it the summary's count and max stay exact and its percentiles come
	// from the first rollupSamples.
	rollupSamples = 1 << 16
	// rollupErrorsKept bounds the goroutines whose last ERROR is kept to
	// tell failed spans; past it those older than a minute are forgotten,
	// and others, any, until there is room for one more.
	rollupErrorsKept = 4096
)

// A rollup is the console's span state, shared by a console and every
// clone of it (WithAttrs, WithGroup). Everything in it is under mu: the
// console is not the hot path (tint formats every line it prints), and
// the lock is held for a map look-up and an append, never for I/O.
type rollup struct {
	mu sync.Mutex
	// cur is this window's spans by name; start is when the window
	// began (zero: no span yet).
	cur   map[string]*spanWindow
	start time.Time
	// hot are the names that rolled up in the last window, with their
	// median then (ns), for the slow rule.
	hot map[string]int64
	// errs is, per goroutine, the envelope clock of its last ERROR.
	errs map[int64]int64
	// timer prints the window's summaries when it ends; armed by the
	// first span rolled up in a window.
	timer *time.Timer
	// print writes one of the rollup's own lines through the console.
	print func(slog.Record)
	// now and after are time.Now and time.AfterFunc; tests replace them.
	now   func() time.Time
	after func(time.Duration, func()) *time.Timer
}

// A spanWindow is one name's spans in the current window.
type spanWindow struct {
	n      int     // spans ended
	rolled int     // of them, not printed alone
	durs   []int64 // their durations, at most rollupSamples
	max    int64
}

func newRollup(print func(slog.Record)) *rollup {
	return &rollup{cur: map[string]*spanWindow{}, hot: map[string]int64{}, errs: map[int64]int64{}, print: print, now: time.Now, after: time.AfterFunc}
}

// failed notes an ERROR logged by goroutine tid at mono (the envelope's
// clock), so a span of tid that was open then prints at once.
func (u *rollup) failed(tid, mono int64) {
	u.mu.Lock()
	defer u.mu.Unlock()
	if len(u.errs) >= rollupErrorsKept {
		cut := mono - int64(time.Minute)
		for k, v := range u.errs {
			if v < cut || len(u.errs) >= rollupErrorsKept {
				delete(u.errs, k)
			}
		}
	}
	u.errs[tid] = mono
}

// show reports whether the span s prints alone now, and whether it
// failed (its goroutine logged an ERROR while it was open: the console
// says so on its line); it is counted for its name's summary either way.
func (u *rollup) show(s *envelope.Span) (shown, failed bool) {
	u.mu.Lock()
	defer u.mu.Unlock()
	now := u.now()
	if u.start.IsZero() {
		u.start = now
	} else if now.Sub(u.start) >= rollupWindow && u.timer == nil {
		u.rollLocked(now) // a window with nothing rolled up ended: no summary owed
	}
	w := u.cur[s.Name]
	if w == nil {
		w = &spanWindow{}
		u.cur[s.Name] = w
	}
	dur := max(s.Dur, 0)
	w.n++
	w.max = max(w.max, dur)
	if len(w.durs) < rollupSamples {
		w.durs = append(w.durs, dur)
	}
	median, hot := u.hot[s.Name]
	failed = u.failedLocked(s)
	switch {
	case failed, !hot && w.n <= rollupShown:
		return true, failed
	case hot && dur >= int64(rollupSlowFloor) && dur >= rollupSlow*median:
		return true, false
	}
	w.rolled++
	if u.timer == nil {
		u.timer = u.after(max(rollupWindow-now.Sub(u.start), 0), u.tick)
	}
	return false, false
}

// failedLocked reports whether s's goroutine logged an ERROR while s was
// open.
func (u *rollup) failedLocked(s *envelope.Span) bool {
	at, ok := u.errs[s.TID]
	return ok && at >= s.TS && at <= s.TS+max(s.Dur, 0)
}

// tick ends the window: its summaries print, and a new window begins.
func (u *rollup) tick() {
	u.mu.Lock()
	lines := u.rollLocked(u.now())
	u.mu.Unlock()
	for _, r := range lines {
		u.print(r)
	}
}

// flush prints the summaries of the window so far (Logging.Close): no
// count is left unsaid.
func (u *rollup) flush() {
	u.mu.Lock()
	if u.timer != nil {
		u.timer.Stop()
	}
	lines := u.rollLocked(u.now())
	u.mu.Unlock()
	for _, r := range lines {
		u.print(r)
	}
}

// rollLocked closes the window at now: it returns a summary line for each
// name that rolled up (in name order), remembers those names as hot with
// their medians, and starts an empty window.
func (u *rollup) rollLocked(now time.Time) []slog.Record {
	var lines []slog.Record
	hot := map[string]int64{}
	names := make([]string, 0, len(u.cur))
	for name, w := range u.cur {
		if w.rolled > 0 {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	took := now.Sub(u.start)
	for _, name := range names {
		w := u.cur[name]
		slices.Sort(w.durs)
		p50, p99 := quantile(w.durs, 0.50), quantile(w.durs, 0.99)
		if w.n > rollupShown {
			hot[name] = p50 // still busy: it stays rolled up
		}
		msg := "spans " + name + " ×" + strconv.Itoa(w.n) + " p50 " + humanDuration(p50) + " p99 " + humanDuration(p99) +
			" max " + humanDuration(w.max) + " (last " + humanDuration(int64(max(took, 0).Round(time.Millisecond))) + ")"
		lines = append(lines, slog.NewRecord(now, levels.Timing, msg, 0))
	}
	u.hot = hot
	clear(u.cur)
	u.start = now
	u.timer = nil
	return lines
}

// quantile returns the q-quantile of sorted (nearest rank).
func quantile(sorted []int64, q float64) int64 {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.5) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

// rollupPrinter is how a rollup writes its lines: through the console it
// belongs to, as a TIMING record of its own (cleaned like any other: a
// span's name is the program's text).
func (h *ConsoleHandler) rollupPrinter() func(slog.Record) {
	return func(r slog.Record) { _ = h.print(context.Background(), r) }
}
