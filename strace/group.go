package strace

import (
	"cmp"
	"slices"
	"strings"
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

// ExternalProducer returns the producer of an ext.<producer>.<span> name,
// or "" when the name is not one (all three segments must be non-empty).
func ExternalProducer(name string) string {
	rest, ok := strings.CutPrefix(name, "ext.")
	if !ok {
		return ""
	}
	producer, span, ok := strings.Cut(rest, ".")
	if !ok || producer == "" || span == "" || span[0] == '.' {
		return ""
	}
	return producer
}

// InInvocation reports whether the invocation views may use s: every span
// but the scheduler family and external producers, which carry no
// invocation. Unknown families stay in.
func InInvocation(s *Span) bool {
	f := Family(s.Name)
	return f != "node" && f != "external"
}

// An Invocation is every span of one (pid, inv).
type Invocation struct {
	PID   int64
	Inv   uint64
	HID   string  // of its first span
	Spans []*Span // into the slice given to Group, in its order
}

// Root returns the depth-0 span, or nil.
func (iv *Invocation) Root() *Span {
	for _, s := range iv.Spans {
		if s.Depth == 0 {
			return s
		}
	}
	return nil
}

// Group groups the spans that keep accepts (all when keep is nil; the
// invocation views pass InInvocation) into invocations ordered by (pid,
// inv). Invocations point into spans, which must outlive them.
func Group(spans []Span, keep func(*Span) bool) []*Invocation {
	type key struct {
		pid int64
		inv uint64
	}
	index := map[key]int{}
	var out []*Invocation
	var counts []int
	for i := range spans {
		if keep != nil && !keep(&spans[i]) {
			continue
		}
		k := key{spans[i].PID, spans[i].Inv}
		n, ok := index[k]
		if !ok {
			n = len(out)
			index[k] = n
			out = append(out, &Invocation{PID: k.pid, Inv: k.inv, HID: spans[i].HID})
			counts = append(counts, 0)
		}
		counts[n]++
	}
	for n, iv := range out {
		iv.Spans = make([]*Span, 0, counts[n])
	}
	for i := range spans {
		if keep != nil && !keep(&spans[i]) {
			continue
		}
		iv := out[index[key{spans[i].PID, spans[i].Inv}]]
		iv.Spans = append(iv.Spans, &spans[i])
	}
	slices.SortFunc(out, func(a, b *Invocation) int {
		return cmp.Or(cmp.Compare(a.PID, b.PID), cmp.Compare(a.Inv, b.Inv))
	})
	return out
}
