package slogsimpler

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"simpler.dev/log/internal/origin"
	"simpler.dev/log/levels"
)

// Sampling keeps the first records of a message and then every few, per
// tick, as zap's production sampler does, so that a hot loop's INFO does
// not fill the queue (Options.Sampling). Records are told apart by level
// and message: within each Tick, the first First records of one are kept,
// then every Thereafter-th (0: none after the first First). ERROR and
// above, spans, op lines, records made outside slog (machine records, a
// device's, a C module's) and the standard log package's lines are never
// sampled. Every record sampled out is counted (Counts.Sampled), and while
// records are being sampled out the log says, once a tick, how many and
// of which messages ("records sampled out", at WARN).
type Sampling struct {
	First, Thereafter int
	// Tick is the period the counts start again after; zero means one
	// second.
	Tick time.Duration
}

// sampleSlots is how many counters each level has: messages are hashed
// onto them, so two messages may share one (zap's 4 096 too).
const sampleSlots = 4096

// A sampleCounter counts one slot's records in the current tick: resetAt
// is when its tick ends (UnixNano), n the records in it. Both are written
// by any logging goroutine with atomics: a tick's first record to see the
// end passed restarts the count (CAS), the rest add.
type sampleCounter struct {
	resetAt atomic.Int64
	n       atomic.Uint64
}

func (c *sampleCounter) inc(now, tick int64) uint64 {
	if r := c.resetAt.Load(); now >= r && c.resetAt.CompareAndSwap(r, now+tick) {
		c.n.Store(1)
		return 1
	}
	return c.n.Add(1)
}

// A sampler is what Options.Sampling puts in front of Setup's handlers.
// Its clones (WithAttrs, WithGroup) share the counts.
type sampler struct {
	next slog.Handler
	c    *sampling
}

// sampling is the counts and the report of one Setup's sampler.
type sampling struct {
	st                *State
	first, thereafter uint64
	tick              int64
	counts            [4][sampleSlots]sampleCounter // DEBUG and below, INFO, TIMING, WARN
	report            slog.Handler                  // where the report goes: the handlers, unsampled

	mu      sync.Mutex
	out     map[string]uint64 // messages sampled out since the last report, by message; under mu
	pending bool              // a report is scheduled; under mu
	timer   *time.Timer       // under mu
}

// newSampler samples for next, counting in st; s is checked (Options.check).
func newSampler(next slog.Handler, st *State, s *Sampling) *sampler {
	tick := s.Tick
	if tick == 0 {
		tick = time.Second
	}
	return &sampler{next: next, c: &sampling{st: st, first: uint64(s.First), thereafter: uint64(s.Thereafter),
		tick: int64(tick), report: next, out: map[string]uint64{}}}
}

func (h *sampler) Enabled(ctx context.Context, l slog.Level) bool { return h.next.Enabled(ctx, l) }

func (h *sampler) WithAttrs(as []slog.Attr) slog.Handler {
	return &sampler{next: h.next.WithAttrs(as), c: h.c}
}

func (h *sampler) WithGroup(name string) slog.Handler {
	return &sampler{next: h.next.WithGroup(name), c: h.c}
}

// Handle keeps r or counts it sampled out. The kept path allocates
// nothing: a hash of the message, two atomics.
func (h *sampler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= levels.Error || h.c.keep(&r) {
		return h.next.Handle(ctx, r)
	}
	h.c.sampledOut(r.Message)
	return nil
}

// keep reports whether r is kept: never sampled, or within the first of
// its message this tick, or one of every thereafter after them.
func (c *sampling) keep(r *slog.Record) bool {
	if r.PC == 0 || origin.Of(r) != nil {
		return true // a span, an op line, a record made outside slog
	}
	row := 0
	switch {
	case r.Level >= levels.Warn:
		row = 3
	case r.Level >= levels.Timing:
		row = 2
	case r.Level >= levels.Info:
		row = 1
	}
	h := uint32(2166136261) // FNV-1a of the message
	for i := 0; i < len(r.Message); i++ {
		h = (h ^ uint32(r.Message[i])) * 16777619
	}
	n := c.counts[row][h%sampleSlots].inc(r.Time.UnixNano(), c.tick)
	return n <= c.first || c.thereafter > 0 && (n-c.first)%c.thereafter == 0
}

// maxSampledNames bounds the messages a report names (the rest are
// counted in its total).
const maxSampledNames = 8

// sampledOut counts a record sampled out and makes sure a report will say
// so at the tick's end.
func (c *sampling) sampledOut(msg string) {
	c.st.sampled.Add(1)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.out[msg]; ok || len(c.out) < 4*maxSampledNames {
		c.out[msg]++
	} else {
		c.out[""]++ // another message: counted in the total
	}
	if !c.pending {
		c.pending = true
		c.timer = time.AfterFunc(time.Duration(c.tick), c.flush)
	}
}

// flush writes the report of the records sampled out since the last one,
// if any: at each tick's end while records are being sampled out, and at
// Close.
func (c *sampling) flush() {
	c.mu.Lock()
	out := c.out
	c.out = map[string]uint64{}
	c.pending = false
	if c.timer != nil {
		c.timer.Stop()
	}
	c.mu.Unlock()
	if len(out) == 0 {
		return
	}
	var total uint64
	type named struct {
		msg string
		n   uint64
	}
	var names []named
	for m, n := range out {
		total += n
		if m != "" {
			names = append(names, named{m, n})
		}
	}
	slices.SortFunc(names, func(a, b named) int {
		if c := cmp.Compare(b.n, a.n); c != 0 { // the most sampled first
			return c
		}
		return strings.Compare(a.msg, b.msg)
	})
	var list strings.Builder
	for i, nm := range names {
		if i == maxSampledNames {
			fmt.Fprintf(&list, "; and %d more", len(names)-i)
			break
		}
		if i > 0 {
			list.WriteString("; ")
		}
		fmt.Fprintf(&list, "%q x%d", nm.msg, nm.n)
	}
	rec := slog.NewRecord(time.Now(), levels.Warn, "records sampled out", 0)
	rec.AddAttrs(slog.Uint64("sampled", total), slog.String("messages", list.String()), slog.Uint64("sampled_total", c.st.sampled.Load()))
	if c.report.Enabled(context.Background(), levels.Warn) {
		_ = c.report.Handle(context.Background(), rec)
	}
}
