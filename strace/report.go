package strace

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
)

// Stats are durations in ns.
type Stats struct {
	N              int
	Mean, Min, Max float64
	Median         float64
}

// Summarize computes count, mean, min, max and median of durs.
func Summarize(durs []int64) Stats {
	if len(durs) == 0 {
		return Stats{}
	}
	s := slices.Clone(durs)
	slices.Sort(s)
	var sum float64
	for _, d := range s {
		sum += float64(d)
	}
	st := Stats{N: len(s), Mean: sum / float64(len(s)), Min: float64(s[0]), Max: float64(s[len(s)-1])}
	if n := len(s); n%2 == 1 {
		st.Median = float64(s[n/2])
	} else {
		st.Median = (float64(s[n/2-1]) + float64(s[n/2])) / 2
	}
	return st
}

func us(ns float64) string { return fmt.Sprintf("%.1f", ns/1000) }

// WriteTables prints one table per callable (busiest first): the root
// span's mean/min/max over its invocations, then every other span name
// with count, mean, min and max, in µs, indented by nesting.
func WriteTables(w io.Writer, buckets []Bucket) {
	if len(buckets) == 0 {
		fmt.Fprintln(w, "No [STRACE] markers found.")
		return
	}
	for _, b := range buckets {
		fmt.Fprintf(w, "callable hid=%s (%s) — %d invocation(s)\n", b.HID, Label(buckets, b.HID), len(b.Invocations))
		var roots []int64
		rootName := ""
		stages := map[string][]int64{}
		for _, iv := range b.Invocations {
			if r := iv.Root(); r != nil {
				roots = append(roots, r.Dur)
				rootName = r.Name
			}
			for name, s := range iv.ByName() {
				if s.Depth != 0 {
					stages[name] = append(stages[name], s.Dur)
				}
			}
		}
		if len(roots) > 0 {
			st := Summarize(roots)
			fmt.Fprintf(w, "  %s: n=%d mean=%sus min=%sus max=%sus\n", rootName, st.N, us(st.Mean), us(st.Min), us(st.Max))
		}
		names := make([]string, 0, len(stages))
		for n := range stages {
			names = append(names, n)
		}
		slices.SortFunc(names, func(a, b string) int {
			return cmp.Or(cmp.Compare(len(stages[b]), len(stages[a])), cmp.Compare(a, b))
		})
		for _, n := range names {
			st := Summarize(stages[n])
			indent := "  " + strings.Repeat("  ", strings.Count(n, "."))
			fmt.Fprintf(w, "%s%s: n=%d mean=%sus min=%sus max=%sus\n", indent, n, st.N, us(st.Mean), us(st.Min), us(st.Max))
		}
		fmt.Fprintln(w)
	}
}

// WriteTree prints each callable's spans nested by dotted name (a.b.c
// under a.b), each with its median duration across invocations in µs;
// device (clk=dev) spans are tagged [dev].
func WriteTree(w io.Writer, buckets []Bucket) {
	if len(buckets) == 0 {
		fmt.Fprintln(w, "No [STRACE] markers found.")
		return
	}
	for _, b := range buckets {
		n := len(b.Invocations)
		suffix := " — 1 invocation"
		if n > 1 {
			suffix = fmt.Sprintf(" — median of %d invocation(s)", n)
		}
		fmt.Fprintf(w, "callable hid=%s (%s)%s\n", b.HID, Label(buckets, b.HID), suffix)
		samples := map[string][]int64{}
		for _, iv := range b.Invocations {
			for name, s := range iv.ByName() {
				samples[name] = append(samples[name], s.Dur)
			}
		}
		ref := b.Invocations[n-1] // structure from the last invocation
		byName := ref.ByName()
		children := map[string][]*Span{}
		var roots []*Span
		for _, s := range byName {
			parent, _, ok := cutLast(s.Name)
			if _, has := byName[parent]; ok && has {
				children[parent] = append(children[parent], s)
			} else {
				roots = append(roots, s)
			}
		}
		var emit func(s *Span, depth int)
		emit = func(s *Span, depth int) {
			tag := ""
			if s.IsDevice() {
				tag = " [dev]"
			}
			_, leaf, ok := cutLast(s.Name)
			if !ok {
				leaf = s.Name
			}
			fmt.Fprintf(w, "%s%-22s%6s  %12s us\n", strings.Repeat("  ", depth), leaf, tag, us(Summarize(samples[s.Name]).Median))
			kids := children[s.Name]
			slices.SortFunc(kids, func(a, b *Span) int { return cmp.Or(cmp.Compare(a.TS, b.TS), cmp.Compare(a.Name, b.Name)) })
			for _, k := range kids {
				emit(k, depth+1)
			}
		}
		slices.SortFunc(roots, func(a, b *Span) int { return cmp.Or(cmp.Compare(a.TS, b.TS), cmp.Compare(a.Name, b.Name)) })
		for _, r := range roots {
			emit(r, 0)
		}
		fmt.Fprintln(w)
	}
}

func cutLast(name string) (parent, leaf string, ok bool) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return "", name, false
	}
	return name[:i], name[i+1:], true
}
