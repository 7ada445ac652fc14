package straceview

import (
	"cmp"
	"slices"
	"strings"

	"simpler.dev/log/internal/satmath"
	"simpler.dev/log/strace"
)

// Family classifies a span name by its leading word: "chip", "core",
// "node" (node, network1, network2, network3: the scheduler family),
// "external" (ext.), or "unknown".
func Family(name string) string {
	head, _, _ := strings.Cut(name, ".")
	switch head {
	case "ext":
		return "external"
	case "chip":
		return "chip"
	case "core":
		return "core"
	case "node", "network1", "network2", "network3":
		return "node"
	}
	return "unknown"
}

// InInvocation reports whether the invocation views may use s: every span
// but the scheduler family and external producers, which carry no
// invocation. Unknown families stay in.
func InInvocation(s *strace.Span) bool {
	f := Family(s.Name)
	return f != "node" && f != "external"
}

// An Invocation is every span of one (pid, run, inv): a run's inv
// counts from 1, so two runs with one pid repeat each other's.
type Invocation struct {
	PID   int64
	Run   *strace.Run // see proc
	Inv   uint64
	HID   string         // of its first span
	Spans []*strace.Span // into the slice given to Group, in its order; nil for a Spill's
	// A Spill's invocation is its at-th: its spans are read back from
	// the Spill's file.
	spill *Spill
	at    int32
}

// spans returns iv's spans: Spans, or for a Spill's invocation its spans
// read back, valid until the next call.
func (iv *Invocation) spans() ([]*strace.Span, error) {
	if iv.spill == nil {
		return iv.Spans, nil
	}
	return iv.spill.spans(iv)
}

// Root returns the depth-0 span, or nil.
func (iv *Invocation) Root() *strace.Span {
	for _, s := range iv.Spans {
		if s.Depth == 0 {
			return s
		}
	}
	return nil
}

// Group groups the spans that keep accepts (all when keep is nil; the
// invocation views pass InInvocation) into invocations ordered by (pid,
// run, inv). Invocations point into spans, which must outlive them.
func Group(spans []strace.Span, keep func(*strace.Span) bool) []*Invocation {
	type key struct {
		proc
		inv uint64
	}
	index := map[key]int{}
	var out []*Invocation
	var counts []int
	for i := range spans {
		if keep != nil && !keep(&spans[i]) {
			continue
		}
		k := key{procOf(&spans[i]), spans[i].Inv}
		n, ok := index[k]
		if !ok {
			n = len(out)
			index[k] = n
			out = append(out, &Invocation{PID: k.pid, Run: k.run, Inv: k.inv, HID: spans[i].HID})
			counts = append(counts, 0)
		}
		counts[n]++
	}
	for n, iv := range out {
		iv.Spans = make([]*strace.Span, 0, counts[n])
	}
	for i := range spans {
		if keep != nil && !keep(&spans[i]) {
			continue
		}
		iv := out[index[key{procOf(&spans[i]), spans[i].Inv}]]
		iv.Spans = append(iv.Spans, &spans[i])
	}
	slices.SortFunc(out, func(a, b *Invocation) int {
		return cmp.Or(compareProcs(proc{a.PID, a.Run}, proc{b.PID, b.Run}), cmp.Compare(a.Inv, b.Inv))
	})
	return out
}

// AnchorSpread returns, for each run (process: see strace.Run) whose
// anchors disagree by more than a millisecond (the wall clock was stepped
// while it ran), by how many ns its anchors' wall − mono differ at most.
// Anchors that agree, one per file of a rotated set (strace.Parser's
// Anchors, with their AnchorRuns), are the normal case and are not
// listed; two runs with one pid, which may be of two boots, are never
// compared.
func AnchorSpread(p *strace.Parser) map[*strace.Run]int64 {
	lo, hi := map[*strace.Run]int64{}, map[*strace.Run]int64{}
	for i, a := range p.Anchors {
		off := satmath.Sub(a.Wall, a.Mono)
		r := p.AnchorRuns[i]
		if l, ok := lo[r]; !ok || off < l {
			lo[r] = off
		}
		if h, ok := hi[r]; !ok || off > h {
			hi[r] = off
		}
	}
	var out map[*strace.Run]int64
	for r, l := range lo {
		if d := satmath.Sub(hi[r], l); d > anchorOffsetTolerance {
			if out == nil {
				out = map[*strace.Run]int64{}
			}
			out[r] = d
		}
	}
	return out
}

// anchorOffsetTolerance is how far two anchors of one process may
// disagree (their wall − mono) before a reader says so: each reads two
// clocks one after the other, microseconds apart, and the monotonic clock
// is slewed with the wall clock, so only a step moves the difference by
// more.
const anchorOffsetTolerance = 1_000_000 // 1 ms

// spanEnd returns the span's end, TS+Dur clamped to the int64 range.
func spanEnd(s *strace.Span) int64 { return satmath.Add(s.TS, s.Dur) }
