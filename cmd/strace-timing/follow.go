package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
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
	case c.stats == c.tables:
		return usageError{"argument --follow: with --stats or --tables (the report kept up to date as spans arrive)"}
	case len(other) > 0:
		return usageError{fmt.Sprintf("argument --follow: only with --stats or --tables, not with %s", other[0])}
	case slices.Contains(c.inputs, "-"):
		return usageError{"argument --follow: standard input (-) cannot be followed: name the files or their directory"}
	case c.every <= 0:
		return usageError{fmt.Sprintf("argument --every: %s is not a positive duration", c.every)}
	}
	return nil
}

// follow runs --follow: the inputs are read as they grow, the --stats
// report or the tables printed every c.every (the time of each at its
// head), and, on
// SIGINT or SIGTERM, the inputs read once more and a last report printed;
// it then returns 0.
func follow(c *config, stdout, stderr io.Writer) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	return followUntil(ctx, c, stdout, stderr)
}

// followUntil is follow until ctx is done.
func followUntil(ctx context.Context, c *config, stdout, stderr io.Writer) int {
	sb := straceview.NewStatsBuilder()
	p := strace.Parser{Select: c.sel, EachSpan: func(s *strace.Span) { sb.Add(0, s) }}
	spans, body := sb.Spans, func() { straceview.WriteStatsText(stdout, sb.Snapshot()) }
	if c.tables {
		// The tables need every span (they group them by invocation), so
		// the Parser keeps them; each report groups a copy, as the
		// Parser goes on placing its own.
		p.EachSpan = nil
		spans = func() int { return len(p.Spans) }
		body = func() {
			spans := slices.Clone(p.Spans)
			straceview.SplitRuns(spans)
			buckets := straceview.Buckets(straceview.Group(spans, straceview.InInvocation))
			if straceview.SimplerRuntime(spans) {
				straceview.WriteTables(stdout, buckets, c.show())
			} else {
				straceview.WriteServiceTables(stdout, buckets, c.show())
			}
		}
	}
	f := strace.NewFollower(&p, c.inputs...)
	said := map[string]bool{} // each file's error once, however many reports
	report := func(last bool) {
		if err := f.Poll(); err != nil {
			for _, e := range splitJoined(err) {
				if msg := e.Error(); !said[msg] {
					said[msg] = true
					fmt.Fprintln(stderr, "warning:", msg)
				}
			}
		}
		head := "following"
		if last {
			head = "last report"
		}
		fmt.Fprintf(stdout, "==> %s, %s: %d span(s)\n", head, time.Now().UTC().Format(time.RFC3339), spans())
		body()
		fmt.Fprintln(stdout)
	}
	tick := time.NewTicker(c.every)
	defer tick.Stop()
	report(false)
	for {
		select {
		case <-ctx.Done():
			report(true)
			return 0
		case <-tick.C:
			report(false)
		}
	}
}

// splitJoined is the errors errors.Join joined, or err alone.
func splitJoined(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	return []error{err}
}
