package straceview

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"simpler.dev/log/strace"
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

// WriteTables prints simpler's per-callable TPOT table (busiest callable
// first): a header with the hid and the invocation count, the root span's
// mean, min and max over its invocations as "chip.run", then every other
// span name with its mean and count, most frequent first, indented by
// nesting, in µs with one decimal, exactly as strace_timing.py prints it.
// show, when not nil, rewrites each name and hid as printed ([Escape] for
// a terminal); nil prints them as decoded, the reference's bytes.
func WriteTables(w io.Writer, buckets []Bucket, show func(string) string) {
	writeTables(w, buckets, show, false)
}

// WriteServiceTables is [WriteTables] for a log without simpler's runtime
// spans ([SimplerRuntime]): a callable's roots are not chip.run there, so
// their line names them as they are named (http.request), or "root" when
// a callable's roots have several names.
func WriteServiceTables(w io.Writer, buckets []Bucket, show func(string) string) {
	writeTables(w, buckets, show, true)
}

// writeTables is WriteTables, with service the roots named by their names.
func writeTables(w io.Writer, buckets []Bucket, show func(string) string, service bool) {
	tables := make([]callableTable, 0, len(buckets))
	for _, b := range buckets {
		t := newCallableTable(b.HID, len(b.Invocations))
		for _, iv := range b.Invocations {
			if r := iv.Root(); r != nil {
				t.root(r.Name, r.Dur)
			}
			for name, s := range byName(iv) {
				if s.Depth != 0 {
					t.stage(name, s.Dur)
				}
			}
		}
		tables = append(tables, t)
	}
	printTables(w, tables, show, service)
}

// A callableTable is what a callable's table prints, gathered one
// invocation at a time in the table's order: its roots' durations and
// its stages' (each name's earliest span in an invocation, not at depth
// 0), which the means sum in that order.
type callableTable struct {
	hid         string
	invocations int
	roots       []int64
	// rootName is the first root's name, or "root" once two differ
	// (a service's tables print it; simpler's say chip.run).
	rootName string
	stages   map[string][]int64
}

func newCallableTable(hid string, invocations int) callableTable {
	return callableTable{hid: hid, invocations: invocations, rootName: "chip.run", stages: map[string][]int64{}}
}

// root adds the next invocation's root.
func (t *callableTable) root(name string, dur int64) {
	t.roots = append(t.roots, dur)
	switch {
	case len(t.roots) == 1:
		t.rootName = name
	case name != t.rootName:
		t.rootName = "root"
	}
}

// stage adds the next invocation's stage of that name.
func (t *callableTable) stage(name string, dur int64) {
	t.stages[name] = append(t.stages[name], dur)
}

// printTables prints tables as WriteTables does; service names the roots
// by their names.
func printTables(w io.Writer, tables []callableTable, show func(string) string, service bool) {
	bw := bufio.NewWriterSize(w, 64<<10) // a line a name: one write for many
	defer bw.Flush()
	w = bw
	if len(tables) == 0 {
		fmt.Fprintln(w, "No [STRACE] markers found.")
		return
	}
	for _, t := range tables {
		fmt.Fprintf(w, "callable hid=%s — %d invocation(s)\n", shown(show, t.hid), t.invocations)
		if roots := t.roots; len(roots) > 0 {
			rootName := "chip.run" // as simpler's reader names every root
			if service {
				rootName = shown(show, t.rootName)
			}
			fmt.Fprintf(w, "  %s: mean=%sus min=%sus max=%sus\n", rootName, fmtUS(meanNS(roots)), fmtUS(slices.Min(roots)), fmtUS(slices.Max(roots)))
		}
		stages := t.stages
		names := make([]string, 0, len(stages))
		for n := range stages {
			names = append(names, n)
		}
		slices.SortFunc(names, func(a, b string) int {
			return cmp.Or(cmp.Compare(len(stages[b]), len(stages[a])), cmp.Compare(a, b))
		})
		for _, n := range names {
			indent := "  " + strings.Repeat("  ", strings.Count(n, "."))
			fmt.Fprintf(w, "%s%s: mean=%sus (n=%d)\n", indent, shown(show, n), fmtUS(meanNS(stages[n])), len(stages[n]))
		}
		fmt.Fprintln(w)
	}
}

// meanNS is the mean of ds truncated to whole ns, as int(sum/len) is.
func meanNS(ds []int64) int64 {
	var sum float64
	for _, d := range ds {
		sum += float64(d)
	}
	return int64(sum / float64(len(ds)))
}

// fmtUS writes ns as µs with one decimal, as f"{ns / 1000.0:.1f}" does.
func fmtUS(ns int64) string { return strconv.FormatFloat(float64(ns)/1000, 'f', 1, 64) }

// WriteTree prints each callable's spans nested by dotted name (a.b.c
// under a.b), each with its median duration across invocations in µs;
// device (clk=dev) spans are tagged [dev]. show is as for [WriteTables].
func WriteTree(w io.Writer, buckets []Bucket, show func(string) string) {
	if len(buckets) == 0 {
		fmt.Fprintln(w, "No [STRACE] markers found.")
		return
	}
	for i, b := range buckets {
		treeHead(w, b.HID, i == 0, len(b.Invocations), show)
		writeAggTree(w, b.Invocations, show)
		fmt.Fprintln(w)
	}
}

// treeHead prints the line a callable's tree begins with: its hid, its
// label (the busiest when first), its n invocations.
func treeHead(w io.Writer, hid string, first bool, n int, show func(string) string) {
	suffix := " — 1 invocation"
	if n > 1 {
		suffix = fmt.Sprintf(" — median of %d invocation(s)", n)
	}
	fmt.Fprintf(w, "callable hid=%s (%s)%s\n", shown(show, hid), shown(show, label(hid, first, n)), suffix)
}

// writeAggTree prints one callable's tree as simpler's reader does. The
// structure is the last invocation's spans, every one of them (a span name
// repeated in it is a row each), nested by dotted name, siblings in start
// order; each row shows the median, across invocations, of that name's
// earliest span. Under a span whose children include orch and sched (they
// run concurrently), one "Effective" row shows the median merged window
// orch ∪ sched and the next line the two side by side.
func writeAggTree(w io.Writer, invs []*Invocation, show func(string) string) {
	byNames := make([]map[string]*strace.Span, len(invs))
	samples := map[string][]int64{}
	for i, iv := range invs {
		byNames[i] = byName(iv)
		for name, s := range byNames[i] {
			samples[name] = append(samples[name], s.Dur)
		}
	}
	ref := invs[len(invs)-1]
	refSpans := make([]treeSpan, len(ref.Spans))
	for i, s := range ref.Spans {
		refSpans[i] = treeSpan{s.Name, s.TS, s.IsDevice()}
	}
	effective := func(orch, sched string) []int64 {
		var effs []int64
		for _, bn := range byNames {
			o, sc := bn[orch], bn[sched]
			if o != nil && sc != nil {
				effs = append(effs, max(spanEnd(o), spanEnd(sc))-min(o.TS, sc.TS))
			}
		}
		return effs
	}
	writeTreeOf(w, refSpans, samples, effective, show)
}

// A treeSpan is what the tree prints of a span of the invocation it is
// drawn from: its name, start and clock.
type treeSpan struct {
	name   string
	ts     int64
	device bool
}

// writeTreeOf prints one callable's tree, as writeAggTree describes: ref
// is the last invocation's spans in log order; samples each name's
// earliest span's duration in every invocation; effective the merged
// window orch ∪ sched of every invocation that has both.
func writeTreeOf(w io.Writer, ref []treeSpan, samples map[string][]int64, effective func(orch, sched string) []int64, show func(string) string) {
	med := func(name string) float64 { return Summarize(samples[name]).Median / 1000 }
	present := map[string]bool{}
	for _, s := range ref {
		present[s.name] = true
	}
	children := map[string][]*treeSpan{}
	var roots []*treeSpan
	for i := range ref {
		s := &ref[i]
		if parent, _, ok := cutLast(s.name); ok && present[parent] {
			children[parent] = append(children[parent], s)
		} else {
			roots = append(roots, s)
		}
	}
	byTS := func(a, b *treeSpan) int { return cmp.Compare(a.ts, b.ts) }
	var emit func(s *treeSpan, indent int)
	emit = func(s *treeSpan, indent int) {
		tag := ""
		if s.device {
			tag = " [dev]"
		}
		_, leaf, _ := cutLast(s.name)
		fmt.Fprintf(w, "%s%-22s%6s  %12.1f us\n", strings.Repeat("  ", indent), shown(show, leaf), tag, med(s.name))
		kids := slices.Clone(children[s.name])
		slices.SortStableFunc(kids, byTS)
		var orch, sched *treeSpan
		for _, k := range kids {
			switch _, l, _ := cutLast(k.name); l {
			case "orch":
				if orch == nil {
					orch = k
				}
			case "sched":
				if sched == nil {
					sched = k
				}
			}
		}
		for _, c := range kids {
			_, cleaf, _ := cutLast(c.name)
			switch {
			case cleaf == "orch" && sched != nil:
				effs := effective(c.name, sched.name)
				base := strings.Repeat("  ", indent+1)
				fmt.Fprintf(w, "%s%-22s [dev]  %12.1f us\n", base, "Effective", Summarize(effs).Median/1000)
				fmt.Fprintf(w, "%s  orch %.1f  ∥  sched %.1f   (concurrent)\n", base, med(c.name), med(sched.name))
			case cleaf == "sched" && orch != nil:
				// shown beside orch on the Effective line above
			default:
				emit(c, indent+1)
			}
		}
	}
	slices.SortStableFunc(roots, byTS)
	for _, r := range roots {
		emit(r, 0)
	}
}

func cutLast(name string) (parent, leaf string, ok bool) {
	i := strings.LastIndexByte(name, '.')
	if i < 0 {
		return "", name, false
	}
	return name[:i], name[i+1:], true
}
