package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/signal"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"simpler.dev/log/cmd/strace-timing/internal/straceview"
	"simpler.dev/log/strace"
)

// followArgs checks the options --follow goes with: the --stats report
// (a summary a reader can keep up to date as spans arrive, in memory that
// grows with names, not spans) or simpler's --tables, alone, of files and
// directories (standard input has no files to follow).
func (c *config) followArgs(everySet bool) error {
	if !c.follow {
		if everySet {
			return usageError{"argument --every: only with --follow"}
		}
		return nil
	}
	var other []string
	for _, o := range []struct {
		set  bool
		name string
	}{
		{c.tree, "--tree"}, {c.rounds, "--rounds-table"}, {c.overlap, "--assert-native-overlap"},
		{c.statsJSON != "", "--stats-json"}, {c.traceOut != "", "--trace-out"},
		{c.swimlane != "", "--swimlane"}, {c.html != "", "--html"}, {c.goTr != "", "--go-trace"}, {c.hosts, "--hosts"},
	} {
		if o.set {
			other = append(other, o.name)
		}
	}
	switch {
	case !c.stats && !c.tables:
		return usageError{"argument --follow: needs --stats or --tables (the report it keeps up to date)"}
	case c.stats && c.tables:
		return usageError{"argument --follow: --stats or --tables, not both"}
	case len(other) > 0:
		return usageError{fmt.Sprintf("argument --follow: not with %s (it keeps --stats or --tables up to date, nothing else)", other[0])}
	case slices.Contains(c.inputs, "-"):
		return usageError{"argument --follow: standard input (-) cannot be followed: name the files or their directory"}
	case c.every <= 0:
		return usageError{fmt.Sprintf("argument --every: %s is not a positive duration", c.every)}
	}
	return nil
}

// follow runs --follow: the inputs are read as they grow, the --stats
// report or the tables printed every c.every (the time of each at its
// head), and, on SIGINT or SIGTERM, the inputs read once more and a last
// report printed; it then returns 0.
func follow(c *config, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return followUntil(ctx, c, stdout, stderr)
}

// followUntil is follow until ctx is done.
func followUntil(ctx context.Context, c *config, stdout, stderr io.Writer) int {
	// The report and the tables are made as the spans stream by (their
	// builders hold no span), so a service followed for a week is
	// followed in the memory its names and invocations take.
	var p strace.Parser
	var spans func() int
	var body func()
	if c.tables {
		tb := straceview.NewTablesBuilder()
		p = strace.Parser{ReadOptions: strace.ReadOptions{Select: c.sel, EachSpan: tb.Add}}
		spans = tb.Spans
		body = func() { tb.WriteSoFar(stdout, c.show(), !tb.SimplerRuntime()) }
	} else {
		sb := straceview.NewStatsBuilder()
		p = strace.Parser{ReadOptions: strace.ReadOptions{Select: c.sel, EachSpan: func(s *strace.Span) { sb.Add(0, s) }}}
		spans = sb.Spans
		body = func() { straceview.WriteStatsText(stdout, sb.Snapshot()) }
	}
	for _, in := range c.inputs {
		if _, err := os.Stat(in); errors.Is(err, fs.ErrNotExist) {
			fmt.Fprintf(stderr, "note: %s does not exist yet; it is followed once it does\n", in)
		}
	}
	f := strace.NewFollower(&p, c.inputs...)
	said := map[string]bool{} // each file's error once, however many polls
	missed := 0               // rotated files retention removed unread, in all
	poll := func() {
		if err := f.Poll(); err != nil {
			for _, e := range splitJoined(err) {
				msg := e.Error()
				for _, m := range missedFiles.FindAllStringSubmatch(msg, -1) {
					n, _ := strconv.Atoi(m[1])
					missed += n
				}
				if !said[msg] {
					said[msg] = true
					fmt.Fprintln(stderr, "warning:", msg)
				}
			}
		}
	}
	// The reader's warnings (incomplete records, drops the log reports,
	// two runs in a file) are said when a new kind appears, and all of
	// them with the last report; the rotated files retention removed
	// before the first report, once.
	kinds := map[string]bool{} // a warning's words, its numbers left out
	warnings := func(last bool) {
		var b strings.Builder
		warn(&b, &p, spans())
		for line := range strings.Lines(b.String()) {
			if kind := digits.ReplaceAllString(line, "N"); last || !kinds[kind] {
				kinds[kind] = true
				io.WriteString(stderr, line)
			}
		}
	}
	report := func(last bool) {
		poll()
		warnings(last)
		if last && missed > 0 {
			fmt.Fprintf(stderr, "warning: in all, %d rotated file(s) were removed before they were read whole (retention ran ahead of the reader): what was unread of them is not in this report\n", missed)
		}
		head := "following"
		if last {
			head = "last report"
		}
		fmt.Fprintf(stdout, "==> %s, %s: %d span(s)\n", head, time.Now().UTC().Format(time.RFC3339), spans())
		body()
		fmt.Fprintln(stdout)
	}
	// Read more often than reported (at most every half second): a
	// rotated file retention removes before it is read whole is lost to
	// the report.
	reading := time.NewTicker(min(c.every, 500*time.Millisecond))
	defer reading.Stop()
	reporting := time.NewTicker(c.every)
	defer reporting.Stop()
	report(false)
	warnGaps(stderr, c.inputs)
	for {
		select {
		case <-ctx.Done():
			report(true)
			return 0
		case <-reporting.C:
			report(false)
		case <-reading.C:
			poll()
		}
	}
}

// missedFiles finds the counts in strace.Follower's error for rotated
// files removed before they were read whole.
var missedFiles = regexp.MustCompile(`(\d+) rotated file\(s\) of `)

// digits finds the numbers of a warning, which change from report to
// report while its kind does not.
var digits = regexp.MustCompile(`[0-9]+`)

// splitJoined is the errors errors.Join joined, or err alone.
func splitJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}

// every is --every's value: a duration, said plainly when it is not one
// (flag's own says "parse error").
type every time.Duration

func (e *every) String() string { return time.Duration(*e).String() }

func (e *every) Set(s string) error {
	d, err := time.ParseDuration(s)
	if err != nil {
		return fmt.Errorf("%q is not a duration: give one with its unit (5s, 1m)", s)
	}
	*e = every(d)
	return nil
}
