package straceview

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"simpler.dev/log/strace"
)

// The statistics are for every user, not only one running an LLM: every
// span of every family counts (the reference's tables keep only the first
// span of each name per invocation, and only spans in invocations), and
// they are grouped by name alone.

// NameStats are the durations of every span of one name, in ns. The
// percentiles are exact nearest-rank ones: Pxx is the smallest duration
// with at least xx % of the spans at or below it, so it is always a
// duration some span had.
type NameStats struct {
	Name     string  `json:"name"`
	Count    int     `json:"count"`
	TotalNS  int64   `json:"total_ns"`
	MeanNS   float64 `json:"mean_ns"`
	P50NS    int64   `json:"p50_ns"`
	P90NS    int64   `json:"p90_ns"`
	P99NS    int64   `json:"p99_ns"`
	MaxNS    int64   `json:"max_ns"`
	Device   bool    `json:"device,omitempty"` // clk=dev: device-clock durations
	Overflow bool    `json:"total_saturated,omitempty"`
}

// ProcessStats are one process's spans by name, most total time first.
type ProcessStats struct {
	Host  string      `json:"host,omitempty"` // with --hosts: the LOG's label
	PID   int64       `json:"pid"`
	Spans int         `json:"spans"`
	Names []NameStats `json:"names"`
}

// SpanStats is the --stats report: per process, and over all of them.
type SpanStats struct {
	Processes []ProcessStats `json:"processes"`
	Overall   ProcessStats   `json:"overall"`
}

// Statistics computes the --stats report over the spans of each host
// (one, labelled "", without --hosts). Alignment plays no part: a
// duration needs no wall clock, so a host without an anchor counts too.
func Statistics(hosts []strace.HostLog) SpanStats {
	type key struct {
		host int
		pid  int64
		name string
	}
	durs := map[key][]int64{}
	device := map[string]bool{}
	all := map[string][]int64{}
	perProc := map[[2]int64]int{}
	var out SpanStats
	for h, hl := range hosts {
		for i := range hl.Parser.Spans {
			s := &hl.Parser.Spans[i]
			durs[key{h, s.PID, s.Name}] = append(durs[key{h, s.PID, s.Name}], s.Dur)
			perProc[[2]int64{int64(h), s.PID}]++
			if s.IsDevice() {
				device[s.Name] = true
			}
		}
		out.Overall.Spans += len(hl.Parser.Spans)
	}
	byProc := map[[2]int64][]NameStats{}
	for k, d := range durs {
		pk := [2]int64{int64(k.host), k.pid}
		byProc[pk] = append(byProc[pk], nameStats(k.name, d, device[k.name]))
		all[k.name] = append(all[k.name], d...)
	}
	procs := slices.SortedFunc(maps.Keys(byProc), func(a, b [2]int64) int { return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1])) })
	for _, pk := range procs {
		p := ProcessStats{Host: hosts[pk[0]].Label, PID: pk[1], Spans: perProc[pk], Names: byProc[pk]}
		sortNames(p.Names)
		out.Processes = append(out.Processes, p)
	}
	for name, d := range all {
		out.Overall.Names = append(out.Overall.Names, nameStats(name, d, device[name]))
	}
	sortNames(out.Overall.Names)
	return out
}

func sortNames(ns []NameStats) {
	slices.SortFunc(ns, func(a, b NameStats) int {
		return cmp.Or(cmp.Compare(b.TotalNS, a.TotalNS), cmp.Compare(a.Name, b.Name))
	})
}

// nameStats sorts d in place.
func nameStats(name string, d []int64, device bool) NameStats {
	slices.Sort(d)
	st := NameStats{Name: name, Count: len(d), MaxNS: d[len(d)-1], Device: device}
	var sum float64
	for _, v := range d {
		sum += float64(v)
		if next := st.TotalNS + v; next < st.TotalNS {
			st.TotalNS, st.Overflow = 1<<63-1, true
		} else if !st.Overflow {
			st.TotalNS = next
		}
	}
	st.MeanNS = sum / float64(len(d))
	rank := func(p int) int64 { // nearest rank: ceil(p/100 · n), 1-based
		return d[max((p*len(d)+99)/100, 1)-1]
	}
	st.P50NS, st.P90NS, st.P99NS = rank(50), rank(90), rank(99)
	return st
}

// WriteStatsText prints the report as aligned tables in µs: one per
// process when there are several, then all of them together.
func WriteStatsText(w io.Writer, st SpanStats) {
	if st.Overall.Spans == 0 {
		fmt.Fprintln(w, "No [STRACE] markers found.")
		return
	}
	if len(st.Processes) > 1 {
		for _, p := range st.Processes {
			title := fmt.Sprintf("pid %d", p.PID)
			if p.Host != "" {
				title = fmt.Sprintf("host %s pid %d", p.Host, p.PID)
			}
			writeStatsTable(w, fmt.Sprintf("%s — %d span(s)", title, p.Spans), p.Names)
			fmt.Fprintln(w)
		}
		writeStatsTable(w, fmt.Sprintf("all %d processes — %d span(s)", len(st.Processes), st.Overall.Spans), st.Overall.Names)
		return
	}
	p := st.Processes[0]
	title := fmt.Sprintf("pid %d — %d span(s)", p.PID, p.Spans)
	if p.Host != "" {
		title = fmt.Sprintf("host %s pid %d — %d span(s)", p.Host, p.PID, p.Spans)
	}
	writeStatsTable(w, title, p.Names)
}

func writeStatsTable(w io.Writer, title string, names []NameStats) {
	fmt.Fprintln(w, title)
	width := len("span")
	for _, n := range names {
		width = max(width, utf8.RuneCountInString(displayName(n)))
	}
	pad := func(s string) string { return s + strings.Repeat(" ", width-utf8.RuneCountInString(s)) }
	fmt.Fprintf(w, "  %s  %8s  %12s  %10s  %10s  %10s  %10s  %10s\n", pad("span"), "count", "total (us)", "mean", "p50", "p90", "p99", "max")
	for _, n := range names {
		total := exactUS(n.TotalNS)
		if n.Overflow {
			total = ">" + total
		}
		fmt.Fprintf(w, "  %s  %8d  %12s  %10s  %10s  %10s  %10s  %10s\n", pad(displayName(n)), n.Count, total,
			exactUS(int64(math.Round(n.MeanNS))), exactUS(n.P50NS), exactUS(n.P90NS), exactUS(n.P99NS), exactUS(n.MaxNS))
	}
}

// displayName marks device-clock spans, as the tree does, and makes
// control characters in a hostile name visible rather than let them
// move the terminal's cursor.
func displayName(n NameStats) string {
	name := strings.Map(func(r rune) rune {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return '?'
		}
		return r
	}, n.Name)
	if n.Device {
		name += " [dev]"
	}
	return name
}

// exactUS writes ns ≥ 0 in µs to one decimal, rounded half up, without
// the float64 rounding that would change the digits of a large total.
func exactUS(ns int64) string {
	tenths := ns / 100
	if ns%100 >= 50 {
		tenths++
	}
	return strconv.FormatInt(tenths/10, 10) + "." + strconv.FormatInt(tenths%10, 10)
}

// WriteStatsJSON writes the report as one JSON document, durations in ns.
func WriteStatsJSON(w io.Writer, st SpanStats) error {
	if st.Processes == nil {
		st.Processes = []ProcessStats{}
	}
	if st.Overall.Names == nil {
		st.Overall.Names = []NameStats{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", " ")
	return enc.Encode(st)
}
