package straceview

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"simpler.dev/log/internal/satmath"
)

// The spans a round's columns come from, and the columns in print order.
// "Effective" is the merged window orch ∪ sched, from the two spans'
// device-clock ts and dur.
var (
	roundSpans   = [...]string{"chip.run", "chip.run.runner_run.device_wall", "", "chip.run.runner_run.device_wall.orch", "chip.run.runner_run.device_wall.sched"}
	roundColumns = [...]string{"Host", "Device", "Effective", "Orch", "Sched"}
)

const (
	colHost = iota
	colDevice
	colEffective
	colOrch
	colSched
)

// roundMetrics returns one invocation's columns in µs: span durations,
// and Effective = max(orch end, sched end) - min(orch start, sched start),
// 0 when neither span is there (a missing span reads 0 too).
func roundMetrics(iv *Invocation) [5]float64 {
	names := byName(iv)
	return roundMetricsOf(func(name string) (ts, dur int64, ok bool) {
		if s := names[name]; s != nil {
			return s.TS, s.Dur, true
		}
		return 0, 0, false
	})
}

// roundMetricsOf is roundMetrics of an invocation whose earliest span of
// each name (byName's) earliest gives: its start and duration.
func roundMetricsOf(earliest func(name string) (ts, dur int64, ok bool)) [5]float64 {
	var m [5]float64
	for c, name := range roundSpans {
		if _, dur, ok := earliest(name); name != "" && ok {
			m[c] = float64(dur) / 1000
		}
	}
	var start, end int64
	seen := false
	for _, name := range []string{roundSpans[colOrch], roundSpans[colSched]} {
		ts, dur, ok := earliest(name)
		if !ok {
			continue
		}
		if !seen || ts < start {
			start = ts
		}
		if e := satmath.Add(ts, dur); !seen || e > end {
			end = e
		}
		seen = true
	}
	if seen {
		m[colEffective] = float64(end-start) / 1000
	}
	return m
}

// WriteRounds prints simpler's per-round table for the busiest callable,
// the format tools/benchmark_rounds.sh parses: one row per invocation in
// inv order with Host, Device, Effective, Orch and Sched in µs (a column
// every row reads 0 for is left out), then "Avg Host: …" with the other
// shown columns' averages over their nonzero rounds, and, past 20 rounds,
// averages with the 10 lowest and 10 highest dropped.
func WriteRounds(w io.Writer, buckets []Bucket) {
	if len(buckets) == 0 || len(buckets[0].Invocations) == 0 {
		fmt.Fprintln(w, "No [STRACE] markers found.")
		return
	}
	invs := slices.Clone(buckets[0].Invocations) // busiest; ties: first seen
	slices.SortStableFunc(invs, func(a, b *Invocation) int { return cmp.Compare(a.Inv, b.Inv) })
	rows := make([][5]float64, len(invs))
	for i, iv := range invs {
		rows[i] = roundMetrics(iv)
	}
	printRounds(w, rows)
}

// printRounds prints WriteRounds' table of rows, the busiest callable's
// invocations' columns in inv order.
func printRounds(w io.Writer, rows [][5]float64) {
	n := len(rows)
	host := make([]float64, n)
	for i, r := range rows {
		host[i] = r[colHost]
	}
	slices.Sort(host)
	nonzero := map[int][]float64{}
	shown := []int{colHost}
	for c := colDevice; c < len(roundColumns); c++ {
		var vals []float64
		for _, r := range rows {
			if r[c] > 0 {
				vals = append(vals, r[c])
			}
		}
		if len(vals) > 0 {
			slices.Sort(vals)
			nonzero[c] = vals
			shown = append(shown, c)
		}
	}
	var header strings.Builder
	fmt.Fprintf(&header, "  %-6s", "Round")
	for _, c := range shown {
		fmt.Fprintf(&header, "  %12s", roundColumns[c]+" (us)")
	}
	fmt.Fprintln(w, header.String())
	fmt.Fprintln(w, "  "+strings.Repeat("-", header.Len()-2))
	for i, r := range rows {
		fmt.Fprintf(w, "  %-6d", i)
		for _, c := range shown {
			fmt.Fprintf(w, "  %12.1f", r[c])
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintf(w, "  Avg Host: %.1f us", sum(host)/float64(n))
	for _, c := range shown[1:] {
		fmt.Fprintf(w, "  |  Avg %s: %.1f us", roundColumns[c], sum(nonzero[c])/float64(len(nonzero[c])))
		if c == colDevice {
			fmt.Fprintf(w, " [%d/%d]", len(nonzero[c]), n)
		}
	}
	fmt.Fprintf(w, "  (%d rounds)\n", n)
	const trim = 10
	if n > 2*trim {
		used := n - 2*trim
		fmt.Fprintf(w, "  Trimmed Avg Host: %.1f us", sum(host[trim:n-trim])/float64(used))
		if dev := nonzero[colDevice]; len(dev) > 2*trim {
			fmt.Fprintf(w, "  |  Trimmed Avg Device: %.1f us", sum(dev[trim:len(dev)-trim])/float64(len(dev)-2*trim))
		}
		fmt.Fprintf(w, "  (dropped %d low + %d high, %d rounds used)\n", trim, trim, used)
	}
}

// sum adds vs in order (sorted, as the reference adds them, so the last
// bits of the float agree).
func sum(vs []float64) float64 {
	var s float64
	for _, v := range vs {
		s += v
	}
	return s
}
