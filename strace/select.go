package strace

import (
	"bufio"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"simpler.dev/log/internal/logname"
	"simpler.dev/log/internal/loose"
)

// A Selection picks what a [Parser] keeps of a log: the spans and records
// of some processes and runs, in a window of wall-clock time, as
// journalctl's --since, --until and _PID= pick a host's journal. It is
// applied as each file is read, before anything is held. The zero
// Selection picks everything.
type Selection struct {
	// Since and Until bound the window, [Since, Until): a span is picked
	// when its start is in it, a record when its own time is, both on
	// the wall clock through the anchor of their file. What cannot be
	// placed on the wall clock while it is read (before any anchor of its
	// process; a device's clock) is left out of a window, and counted
	// (Parser.Untimed). Zero: unbounded.
	Since, Until time.Time
	// PIDs picks these processes; empty: every one.
	PIDs []int64
	// Runs picks these runs, each named by its identity or a prefix of it
	// (the tag the reader prints, the one in host.<pid>-<tag>.log); empty:
	// every run. The unmarked run of a process (before runs were marked)
	// is picked by "-".
	Runs []string
}

// timed reports whether the selection has a window.
func (s *Selection) timed() bool { return !s.Since.IsZero() || !s.Until.IsZero() }

// picksProcess reports whether pid and run r (nil: none known) are picked.
func (s *Selection) picksProcess(pid int64, r *Run) bool {
	if len(s.PIDs) > 0 && !slices.Contains(s.PIDs, pid) {
		return false
	}
	if len(s.Runs) == 0 {
		return true
	}
	id := ""
	if r != nil {
		id = r.ID
	}
	for _, want := range s.Runs {
		if want == "-" && id == "" || want != "-" && id != "" && strings.HasPrefix(strings.ToLower(id), strings.ToLower(want)) {
			return true
		}
	}
	return false
}

// picksTime reports whether wall time at (Unix ns) is in the window.
func (s *Selection) picksTime(at int64) bool {
	return (s.Since.IsZero() || at >= s.Since.UnixNano()) && (s.Until.IsZero() || at < s.Until.UnixNano())
}

// pick decides for one span or record of pid and run r at monotonic time
// mono, placed by c: picked, or left out, and if so whether only because
// its wall-clock time is not known.
func (s *Selection) pick(pid int64, r *Run, c *clock, mono int64) (picked, untimed bool) {
	if !s.picksProcess(pid, r) {
		return false, false
	}
	if !s.timed() {
		return true, false
	}
	at, ok := c.WallAt(mono)
	if !ok {
		return false, true
	}
	return s.picksTime(at), false
}

// Check reports a selection that picks nothing whatever the log: a window
// that ends before it starts, a pid below 1.
func (s *Selection) Check() error {
	if !s.Since.IsZero() && !s.Until.IsZero() && !s.Until.After(s.Since) {
		return fmt.Errorf("strace: the window is empty: until %s is not after since %s", s.Until.Format(time.RFC3339), s.Since.Format(time.RFC3339))
	}
	for _, pid := range s.PIDs {
		if pid < 1 {
			return fmt.Errorf("strace: pid %d: a process id is 1 or more", pid)
		}
	}
	if slices.Contains(s.Runs, "") {
		return errors.New("strace: an empty run picks every run: give an identity, a prefix of it, or -")
	}
	return nil
}

// ParseSelection makes the Selection a command's --since, --until, --pid
// and --run ask for, nil when none is given; inputs are the command's LOG
// arguments. A time is an RFC 3339 time; a clock time, 15:04 or 15:04:05,
// on the log's first day (the local day of the earliest first
// [CLOCK_ANCHOR] of the files inputs name; standard input is not read for
// it); or a duration before now, such as 10m. A run is named by its
// identity or a prefix of it, in any case. Its errors name the option.
func ParseSelection(since, until string, pids, runs, inputs []string, now time.Time) (*Selection, error) {
	if since == "" && until == "" && len(pids) == 0 && len(runs) == 0 {
		return nil, nil
	}
	sel := &Selection{}
	for _, v := range pids {
		pid, err := strconv.ParseInt(v, 10, 64)
		if err != nil || pid < 1 {
			return nil, fmt.Errorf("--pid %q: not a process id (1 or more)", v)
		}
		sel.PIDs = append(sel.PIDs, pid)
	}
	for _, r := range runs {
		if r == "" {
			return nil, fmt.Errorf("--run \"\": give a run's identity, a prefix of it, or - for the unmarked run")
		}
		sel.Runs = append(sel.Runs, strings.ToLower(r))
	}
	for _, w := range []struct {
		name, text string
		to         *time.Time
	}{{"--since", since, &sel.Since}, {"--until", until, &sel.Until}} {
		if w.text == "" {
			continue
		}
		t, err := parseTime(w.text, inputs, now)
		if err != nil {
			return nil, fmt.Errorf("%s: %v", w.name, err)
		}
		*w.to = t
	}
	if err := sel.Check(); err != nil {
		return nil, err
	}
	return sel, nil
}

// parseTime reads one time of ParseSelection.
func parseTime(text string, inputs []string, now time.Time) (time.Time, error) {
	if t, err := time.Parse(time.RFC3339Nano, text); err == nil {
		return t, nil
	}
	for _, layout := range []string{"15:04:05", "15:04"} {
		if t, err := time.Parse(layout, text); err == nil {
			day, ok := logDay(inputs)
			if !ok {
				return time.Time{}, fmt.Errorf("%q is a clock time, and the log has no [CLOCK_ANCHOR] to give its day", text)
			}
			y, m, d := day.Date()
			// time.Parse takes a fraction after the seconds (15:04:05.5)
			// whatever the layout says: it is kept.
			return time.Date(y, m, d, t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), day.Location()), nil
		}
	}
	if d, err := time.ParseDuration(text); err == nil && d >= 0 {
		return now.Add(-d), nil
	}
	return time.Time{}, fmt.Errorf("not a time: %q: give RFC 3339 (2026-12-06T15:04:05Z), a clock time on the log's first day (15:04 or 15:04:05), or a duration before now (10m, 1h30m)", text)
}

// logDay is the local time of the earliest first [CLOCK_ANCHOR] among
// the files inputs name: the log's first day, whatever order the files'
// names give (a pid that wrapped around names a later run's file first).
func logDay(inputs []string) (time.Time, bool) {
	earliest, found := int64(0), false
	for _, in := range inputs {
		if in == "-" {
			continue
		}
		paths, err := Inputs(in)
		if err != nil {
			continue
		}
		for _, path := range paths {
			if wall, ok := firstAnchor(path); ok && (!found || wall < earliest) {
				earliest, found = wall, true
			}
		}
	}
	return time.Unix(0, earliest).Local(), found
}

// firstAnchor returns the first [CLOCK_ANCHOR] among the first 64 KiB of
// the file at path (through gzip for a .gz), and whether there is one:
// where a file of a run begins on the wall clock (each file starts with
// its process's anchor).
func firstAnchor(path string) (wallNS int64, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return 0, false
	}
	defer f.Close()
	var r io.Reader = f
	if strings.HasSuffix(path, logname.Gz) {
		zr, err := gzip.NewReader(f)
		if err != nil {
			return 0, false
		}
		r = zr
	}
	sc := bufio.NewScanner(io.LimitReader(r, 64<<10))
	sc.Buffer(make([]byte, 0, 4096), 64<<10)
	for sc.Scan() {
		if a, ok := loose.ScanAnchor(sc.Bytes()); ok {
			return a.Wall, true
		}
	}
	return 0, false
}

// SkipFiles returns the paths (as Inputs gives them) whose records can
// meet sel, and how many it left out without reading them: a file named
// for another process than sel's, and a file of a rotated set whose
// wall-clock range, from its first anchor to the next file's, ends before
// the window begins, or that follows a file begun at or after the window's
// end (a span is written as it ends, so the first file after the window is
// read for spans that began in it; one that began in the window and ended
// two files later is not). A file whose range its anchors do not tell is
// kept.
func SkipFiles(paths []string, sel *Selection) (kept []string, skipped int) {
	if sel == nil {
		return paths, 0
	}
	type file struct {
		path  string
		seq   int
		start int64
		ok    bool
	}
	sets := map[string][]*file{}
	var order []*file
	for _, path := range paths {
		f := &file{path: path}
		order = append(order, f)
		name := strings.TrimSuffix(filepath.Base(path), logname.Gz)
		set, seq, ok := logname.Parse(name)
		if !ok {
			continue
		}
		if len(sel.PIDs) > 0 {
			if pid, err := strconv.ParseInt(logname.PID(set), 10, 64); err == nil && !slices.Contains(sel.PIDs, pid) {
				f.path = "" // another process's file
				continue
			}
		}
		if seq == 0 {
			seq = int(^uint(0) >> 1) // the current file follows its rotated ones
		}
		f.seq = seq
		key := filepath.Join(filepath.Dir(path), set)
		sets[key] = append(sets[key], f)
	}
	if sel.timed() {
		for _, fs := range sets {
			slices.SortFunc(fs, func(a, b *file) int { return a.seq - b.seq })
			for _, f := range fs {
				f.start, f.ok = firstAnchor(f.path)
			}
			for i, f := range fs {
				if !f.ok {
					continue
				}
				// A span is written as it ends: the first file begun after
				// the window is read for the spans that began in it.
				if !sel.Until.IsZero() && i > 0 && fs[i-1].ok && fs[i-1].start >= sel.Until.UnixNano() {
					f.path = "" // the file before it began at or after the window's end
					continue
				}
				if i+1 < len(fs) && fs[i+1].ok && !sel.Since.IsZero() && fs[i+1].start <= sel.Since.UnixNano() {
					f.path = "" // the next file began before the window did
				}
			}
		}
	}
	for _, f := range order {
		if f.path == "" {
			skipped++
			continue
		}
		kept = append(kept, f.path)
	}
	return kept, skipped
}

// placeEach places s, a span about to be given to EachSpan, on the wall
// clock by the last anchor of its process before it in its file, as a
// kept span is placed: a span of a block read in parallel (Parser.absorb)
// that its block's own anchors placed stays as it is; one before any of
// them follows the file's anchors as they stood before the block (what
// the block saw first).
func placeEach(p *Parser, s *Span) {
	if s.flipped != 0 || p.file.last == 0 {
		return // placed by its block, or no anchor in its file so far (a map lookup a span cost --stats 5 %)
	}
	if !s.IsDevice() {
		placeByAnchor(p, s)
	}
}

// pickKept lets span i go, the last kept, when p.Select leaves it out and
// can say so now: when it is placed (or never will be: a device's clock),
// or when the selection has no window. One placed only at its file's end
// (no anchor of its process before it in the file) waits for selectFile.
// What a reading holds is then what it picks, not a whole file until the
// file's end: a window of 2.5 % of a one-file 4 M-span log held 1 GB.
func pickKept(p *Parser, i int) {
	if p.Select == nil {
		return
	}
	pending := len(p.pendSpans) > 0 && p.pendSpans[len(p.pendSpans)-1] == i
	if pending && p.Select.timed() {
		return
	}
	if pickSpan(p, &p.Spans[i]) {
		return
	}
	if pending {
		p.pendSpans = p.pendSpans[:len(p.pendSpans)-1]
	}
	p.Spans[i] = Span{}
	p.Spans = p.Spans[:i]
}

// pickSpan reports whether p.Select picks span s as it is placed,
// counting it in Deselected (and Untimed) when not.
func pickSpan(p *Parser, s *Span) bool {
	ok, untimed := p.Select.pick(s.PID, s.Run, &s.clock, s.TS)
	if !ok {
		p.Deselected++
		if untimed {
			p.Untimed++
		}
	}
	return ok
}

// keep compacts list[from:] to the elements pick keeps, in order.
func keep[T any](list []T, from int, pick func(*T) bool) []T {
	kept := from
	for i := from; i < len(list); i++ {
		if pick(&list[i]) {
			list[kept] = list[i]
			kept++
		}
	}
	clear(list[kept:])
	return list[:kept]
}

// selectFile applies p.Select to what the file just read added: the
// spans from index spans on and the records from records and lines on,
// placed by then as they will be.
func selectFile(p *Parser, spans, records, lines int) {
	if p.Select == nil {
		return
	}
	p.Spans = keep(p.Spans, spans, func(s *Span) bool { return pickSpan(p, s) })
	p.Records = keep(p.Records, records, func(r *Record) bool {
		ok, _ := p.Select.pick(r.PID, r.Run, &r.clock, r.Mono)
		return ok
	})
	p.RecordLines = keep(p.RecordLines, lines, func(l *RecordLine) bool {
		ok, _ := p.Select.pick(l.PID, l.Run, &l.clock, l.Mono)
		return ok
	})
}
