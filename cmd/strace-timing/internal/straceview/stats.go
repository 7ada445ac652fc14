package straceview

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"hash/maphash"
	"io"
	"math"
	"math/big"
	"math/bits"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode/utf8"
	"unsafe"

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
	Host string `json:"host,omitempty"` // with --hosts: the LOG's label
	PID  int64  `json:"pid"`
	// Run and RunPlace tell apart the runs of a pid that had several
	// (strace.Run): the run's identity, and "run 2 of 3, started
	// 13:02:11". A pid's only run has neither.
	Run      string      `json:"run,omitempty"`
	RunPlace string      `json:"run_place,omitempty"`
	Spans    int         `json:"spans"`
	Names    []NameStats `json:"names"`
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
	labels := make([]string, len(hosts))
	for i, h := range hosts {
		labels[i] = h.Label
	}
	b := NewStatsBuilder(labels...)
	for h, hl := range hosts {
		for i := range hl.Parser.Spans {
			b.Add(h, &hl.Parser.Spans[i])
		}
	}
	return b.Stats()
}

// A StatsBuilder makes the --stats report from spans given one at a
// time, as a reader streams them (strace.Parser.EachSpan): it keeps each
// span's duration, 8 bytes, and nothing else of it, so the report of a
// log of any length takes memory that grows with its spans' count times
// 8 and its names and processes, never with the log (the percentiles are
// exact: nearest rank over every duration). It also notes whether the
// spans are of simpler's runtime (SimplerRuntime). The zero StatsBuilder
// is not ready: use NewStatsBuilder.
//
// A row (a host, a process and a name) is an entry in chunks found
// through index, a table of entry numbers, not a map: a map of a million
// rows held 125 bytes a row in its slots, the index holds 4 to 16, and it
// goes before the report's rows are made, as each chunk of entries goes
// once its rows are (so a log of a million names reads within twice its
// size).
type StatsBuilder struct {
	labels []string // the hosts', by index
	// rows holds the entries (a *durations stays valid).
	rows chunked[statEntry]
	// index is an open-addressed table of entry numbers + 1 (0: empty),
	// its length a power of two at least twice n; seed hashes its keys.
	index  []int32
	seed   maphash.Seed
	device map[string]bool
	spans  int
	// recent caches rows by where their name's bytes are (the parser
	// keeps one copy of each name of a log of a few): a log's spans come
	// from a few names and processes at a time, in turn, and one compare
	// here is cheaper than a hash of a name. A slot holds the last key
	// whose name's bytes fell in it.
	recent  [64]recentKey
	simpler bool
}

type statEntry struct {
	k statKey
	d durations
}

type recentKey struct {
	k statKey
	d *durations
}

// durations holds one key's durations in chunks, not one slice grown by
// doubling: a long log's durations take 8 bytes a span and a chunk's
// slack, never the copy of a slice being grown beside it. The first
// chunks double from one duration, so a key of one span (a log of a
// million names, or of processes) holds 8 bytes for it, not a chunk.
type durations struct {
	cur  []int64    // the chunk being filled
	full *[][]int64 // chunks filled, each at most durationChunk; nil for none (most keys: 32 bytes a key, not 48)
}

const durationChunk = 1 << 14

func (d *durations) add(v int64) {
	if len(d.cur) == cap(d.cur) {
		n := d.len()
		if d.cur != nil {
			if d.full == nil {
				d.full = new([][]int64)
			}
			*d.full = append(*d.full, d.cur)
		}
		d.cur = make([]int64, 0, min(durationChunk, max(1, n))) // small keys stay small
	}
	d.cur = append(d.cur, v)
}

// len is how many durations d holds.
func (d *durations) len() int {
	n := len(d.cur)
	if d.full != nil {
		for _, c := range *d.full {
			n += len(c)
		}
	}
	return n
}

// slice returns the durations in one slice, letting the chunks go as it
// copies them: at most one chunk more than the slice is held meanwhile.
func (d *durations) slice() []int64 {
	if d.full == nil {
		return d.cur
	}
	out := make([]int64, 0, d.len())
	for i, c := range *d.full {
		out = append(out, c...)
		(*d.full)[i] = nil
	}
	out = append(out, d.cur...)
	d.full, d.cur = nil, out
	return out
}

type statKey struct {
	host int
	proc
	name string
}

// NewStatsBuilder returns a builder for the hosts labelled labels (one,
// "", without --hosts).
func NewStatsBuilder(labels ...string) *StatsBuilder {
	if len(labels) == 0 {
		labels = []string{""}
	}
	return &StatsBuilder{labels: labels, seed: maphash.MakeSeed(), device: map[string]bool{}}
}

// entry is entry i.
func (b *StatsBuilder) entry(i int) *statEntry { return b.rows.at(i) }

// find returns the durations of k, adding an entry for it if it has
// none (new reports whether it did).
func (b *StatsBuilder) find(k statKey) (d *durations, new bool) {
	if 2*(b.rows.len()+1) > len(b.index) {
		b.grow()
	}
	mask := uint64(len(b.index) - 1)
	for h := maphash.Comparable(b.seed, k) & mask; ; h = (h + 1) & mask {
		switch e := b.index[h]; {
		case e == 0:
			en := b.rows.add()
			en.k = k
			b.index[h] = int32(b.rows.len())
			return &en.d, true
		case b.entry(int(e-1)).k == k:
			return &b.entry(int(e - 1)).d, false
		}
	}
}

// grow doubles the index (from 1 024 slots) and places every entry again.
func (b *StatsBuilder) grow() {
	b.index = make([]int32, max(1024, 2*len(b.index)))
	mask := uint64(len(b.index) - 1)
	for i := range b.rows.len() {
		h := maphash.Comparable(b.seed, b.entry(i).k) & mask
		for b.index[h] != 0 {
			h = (h + 1) & mask
		}
		b.index[h] = int32(i + 1)
	}
}

// Add counts span s of host h (an index of the labels).
func (b *StatsBuilder) Add(h int, s *strace.Span) {
	b.spans++
	k := statKey{h, proc{realPID(s), s.Run}, s.Name}
	slot := &b.recent[(uintptr(unsafe.Pointer(unsafe.StringData(k.name)))>>3^uintptr(k.pid))%uintptr(len(b.recent))]
	d := slot.d
	if d == nil || slot.k != k {
		var added bool
		if d, added = b.find(k); added {
			switch Family(s.Name) {
			case "chip", "core", "node":
				b.simpler = true
			}
		}
		*slot = recentKey{k, d}
	}
	d.add(s.Dur)
	if s.IsDevice() {
		b.device[s.Name] = true
	}
}

// Spans is how many spans were added.
func (b *StatsBuilder) Spans() int { return b.spans }

// Names is how many (process, name) tables rows the builder holds: what
// it holds grows with them (an entry and a row each, about a hundred
// bytes), not with the spans (8 bytes each).
func (b *StatsBuilder) Names() int { return b.rows.len() }

// SimplerRuntime reports what SimplerRuntime would of the spans added:
// whether any is of simpler's runtime, or none was added.
func (b *StatsBuilder) SimplerRuntime() bool { return b.simpler || b.spans == 0 }

// Stats makes the report. It takes the durations kept as it goes: the
// builder is empty after it.
func (b *StatsBuilder) Stats() SpanStats { return b.report(false) }

// Snapshot makes the report of the spans added so far and keeps them:
// more can be added, and the next report counts them all (--follow). It
// holds, for a moment, the report beside what the builder holds.
func (b *StatsBuilder) Snapshot() SpanStats { return b.report(true) }

// report makes the report; keep keeps the builder's entries, which only
// a Stats lets go as it goes.
func (b *StatsBuilder) report(keep bool) SpanStats {
	out := SpanStats{Overall: ProcessStats{Spans: b.spans}}
	if !keep {
		b.index = nil // the rows are found by number from here on
		clear(b.recent[:])
	}
	// The sorts, most of the work on a long log, on every core.
	work := make(chan *durations)
	var wg sync.WaitGroup
	for range runtime.GOMAXPROCS(0) {
		wg.Go(func() {
			for d := range work {
				slices.Sort(d.slice())
			}
		})
	}
	for i := range b.rows.len() {
		work <- &b.entry(i).d
	}
	close(work)
	wg.Wait()
	// The entries by process (one sort of their numbers, not a map of
	// processes: a million processes grew one a split at a time), then
	// each entry's process number in procOf, and each process's rows in
	// a slice of its own size, counted first.
	order := make([]int32, b.rows.len())
	for i := range order {
		order[i] = int32(i)
	}
	sameProc := func(x, y int32) int {
		a, c := &b.entry(int(x)).k, &b.entry(int(y)).k
		return cmp.Or(cmp.Compare(a.host, c.host), compareProcs(a.proc, c.proc))
	}
	slices.SortFunc(order, sameProc)
	procOf := make([]int32, b.rows.len())
	for i, e := range order {
		if i == 0 || sameProc(order[i-1], e) != 0 {
			k := &b.entry(int(e)).k
			p := ProcessStats{Host: b.labels[k.host], PID: k.pid}
			if place := runText(k.run); place != "" {
				p.Run, p.RunPlace = k.run.ID, place
			}
			out.Processes = append(out.Processes, p)
		}
		procOf[e] = int32(len(out.Processes) - 1)
		out.Processes[len(out.Processes)-1].Spans++ // the rows, for now
	}
	for i := range out.Processes {
		p := &out.Processes[i]
		p.Names, p.Spans = make([]NameStats, 0, p.Spans), 0
	}
	// The overall table, which needs every process's durations of a
	// name, is made before any row lets its durations go. With one
	// process it is that process's rows.
	one := len(out.Processes) == 1
	if !one {
		slices.SortFunc(order, func(x, y int32) int {
			return strings.Compare(b.entry(int(x)).k.name, b.entry(int(y)).k.name)
		})
		for i := 0; i < len(order); {
			j := i + 1
			name := b.entry(int(order[i])).k.name
			for j < len(order) && b.entry(int(order[j])).k.name == name {
				j++
			}
			d := b.entry(int(order[i])).d.cur // a name of one process only is its process's, sorted already
			if j > i+1 {
				ds := make([][]int64, 0, j-i)
				for _, e := range order[i:j] {
					ds = append(ds, b.entry(int(e)).d.cur)
				}
				d = slices.Concat(ds...)
			}
			out.Overall.Names = append(out.Overall.Names, nameStats(name, d, b.device[name]))
			i = j
		}
		sortNames(out.Overall.Names)
	}
	order = nil
	// Each chunk of entries goes once its rows are made, so that the rows
	// take the place of what they summarise rather than add to it.
	for i := range b.rows.len() {
		e := b.entry(i)
		p := &out.Processes[procOf[i]]
		p.Names = append(p.Names, nameStats(e.k.name, e.d.cur, b.device[e.k.name]))
		p.Spans += len(e.d.cur)
		if !keep {
			b.rows.done(i)
		}
	}
	if !keep {
		b.rows.reset()
	}
	for i := range out.Processes {
		sortNames(out.Processes[i].Names)
	}
	if one { // the overall table is the process's own (shared: neither is written after)
		out.Overall.Names = out.Processes[0].Names
	}
	return out
}

func sortNames(ns []NameStats) {
	slices.SortFunc(ns, func(a, b NameStats) int {
		if c := cmp.Compare(b.TotalNS, a.TotalNS); c != 0 {
			return c
		}
		return cmp.Compare(a.Name, b.Name) // only at equal totals
	})
}

// nameStats sorts d in place.
func nameStats(name string, d []int64, device bool) NameStats {
	slices.Sort(d)
	st := NameStats{Name: name, Count: len(d), MaxNS: d[len(d)-1], Device: device}
	// The sum is exact, in 128 bits (hi·2^64 + lo, two's complement): a
	// million spans of 2^63-1 ns each fit, so the total saturates only
	// where it is printed, and the mean is the nearest float64 to the
	// exact one, not a float sum's rounding.
	var hi int64
	var lo uint64
	for _, v := range d {
		var carry uint64
		lo, carry = bits.Add64(lo, uint64(v), 0)
		hi += v>>63 + int64(carry) // v>>63: the sign extension, 0 or -1
	}
	switch {
	case hi == 0 && lo <= math.MaxInt64, hi == -1 && lo > math.MaxInt64:
		st.TotalNS = int64(lo)
	case hi >= 0:
		st.TotalNS, st.Overflow = math.MaxInt64, true
	default:
		st.TotalNS, st.Overflow = math.MinInt64, true
	}
	if hi == 0 && lo < 1<<53 {
		// Both exact in a float64, whose division rounds the exact
		// quotient to the nearest: the same as below, without the
		// allocations a million rows of one span each paid for it.
		st.MeanNS = float64(lo) / float64(len(d))
	} else {
		sum := new(big.Int).Lsh(big.NewInt(hi), 64)
		sum.Add(sum, new(big.Int).SetUint64(lo))
		st.MeanNS, _ = new(big.Rat).SetFrac(sum, big.NewInt(int64(len(d)))).Float64()
	}
	rank := func(p int) int64 { // nearest rank: ceil(p/100 · n), 1-based
		return d[max((p*len(d)+99)/100, 1)-1]
	}
	st.P50NS, st.P90NS, st.P99NS = rank(50), rank(90), rank(99)
	return st
}

// WriteStatsText prints the report as aligned tables in µs: one per
// process when there are several, then all of them together. Names and
// host labels are always printed through [Escape]: the report has no
// reference whose bytes it must keep, and a name decoded from %XX can
// hold escape sequences and bidi controls.
func WriteStatsText(w io.Writer, st SpanStats) {
	// Through a buffer: a table a process is three lines, and a log of a
	// million processes wrote each in a write call of its own (5.5 s).
	bw := bufio.NewWriterSize(w, 64<<10)
	defer bw.Flush()
	w = bw
	if st.Overall.Spans == 0 {
		fmt.Fprintln(w, "No [STRACE] markers found.")
		return
	}
	if len(st.Processes) > 1 {
		for _, p := range st.Processes {
			title := fmt.Sprintf("pid %d%s", p.PID, p.runSuffix())
			if p.Host != "" {
				title = fmt.Sprintf("host %s pid %d%s", Escape(p.Host), p.PID, p.runSuffix())
			}
			writeStatsTable(w, fmt.Sprintf("%s — %d span(s)", title, p.Spans), p.Names)
			fmt.Fprintln(w)
		}
		writeStatsTable(w, fmt.Sprintf("all %d processes — %d span(s)", len(st.Processes), st.Overall.Spans), st.Overall.Names)
		return
	}
	p := st.Processes[0]
	title := fmt.Sprintf("pid %d%s — %d span(s)", p.PID, p.runSuffix(), p.Spans)
	if p.Host != "" {
		title = fmt.Sprintf("host %s pid %d%s — %d span(s)", Escape(p.Host), p.PID, p.runSuffix(), p.Spans)
	}
	writeStatsTable(w, title, p.Names)
}

// runSuffix is " (run 2 of 3, started 13:02:11)" for one of a pid's
// runs, "" for its only one.
func (p *ProcessStats) runSuffix() string {
	if p.RunPlace == "" {
		return ""
	}
	return " (" + p.RunPlace + ")"
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
		if n.Overflow && n.TotalNS > 0 {
			total = ">" + total
		} else if n.Overflow {
			total = "<" + total
		}
		fmt.Fprintf(w, "  %s  %8d  %12s  %10s  %10s  %10s  %10s  %10s\n", pad(displayName(n)), n.Count, total,
			meanUS(n.MeanNS), exactUS(n.P50NS), exactUS(n.P90NS), exactUS(n.P99NS), exactUS(n.MaxNS))
	}
}

// displayName marks device-clock spans, as the tree does, and escapes
// what a terminal would obey in a hostile name.
func displayName(n NameStats) string {
	name := Escape(n.Name)
	if n.Device {
		name += " [dev]"
	}
	return name
}

// exactUS writes ns in µs to one decimal, rounded half away from zero,
// without the float64 rounding that would change the digits of a large
// total. The magnitude is taken as a uint64, so every int64, MinInt64
// included, prints as a well-formed number (never "-1.-5").
func exactUS(ns int64) string {
	mag := uint64(ns)
	sign := ""
	if ns < 0 {
		mag = -mag // two's complement: |MinInt64| = 2^63 fits a uint64
		sign = "-"
	}
	tenths := mag / 100
	if mag%100 >= 50 {
		tenths++
	}
	if tenths == 0 {
		sign = "" // no "-0.0"
	}
	return sign + strconv.FormatUint(tenths/10, 10) + "." + strconv.FormatUint(tenths%10, 10)
}

// meanUS writes a mean in ns as exactUS does. The mean of int64 durations
// lies in the int64 range, but as a float64 it can round just past it
// (the mean of spans of 2^63-1 ns is 2^63 as a float64), where converting
// it to int64 would wrap to MinInt64: it is clamped to the range first.
func meanUS(mean float64) string {
	switch {
	case math.IsNaN(mean):
		return exactUS(0)
	case mean >= math.MaxInt64: // the float64 2^63
		return exactUS(math.MaxInt64)
	case mean <= math.MinInt64:
		return exactUS(math.MinInt64)
	}
	return exactUS(int64(math.Round(mean)))
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
