package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"reflect"
	"runtime/debug"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"simpler.dev/log/levels"
	simplerotel "simpler.dev/log/otel"
	"simpler.dev/log/strace"
)

func main() {
	// Most of the heap is the log being sent, read once and held to the
	// end, while what is made from it lives for one export request: the
	// default pacing (GOGC=100) lets the heap grow to twice the log
	// before each collection, 480 MB resident for a 208 MB log of 10^6
	// spans and 5×10^5 records, where collecting at one and a half times
	// peaks at 370 MB for some 10 % more CPU (a collection marks the held
	// log, ~20 ms, twice as often). GOGC in the environment still rules.
	if _, set := os.LookupEnv("GOGC"); !set {
		debug.SetGCPercent(50)
	}
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

const usage = "usage: strace-otlp --endpoint URL [--signals traces,logs] [--log-level LEVEL] [--label NAME ...] [--service-name NAME] [--assume-wall] [--timeout D] [--since T] [--until T] [--pid N ...] [--run TAG ...] [--max-spans N] LOG [LOG ...]"

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strace-otlp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		endpoint, service string
		labels            []string
		assumeWall        bool
		timeout           time.Duration
		signals           = "traces,logs"
		logLevel          = levels.Level(levels.Info)
		since, until      string
		pids, runs        []string
	)
	fs.StringVar(&endpoint, "endpoint", "", "the collector: http://host:4318 or https://... for OTLP/HTTP (/v1/traces is added to a URL without a path), grpc://host:4317 (plain) or grpcs://... for OTLP/gRPC")
	fs.Var(repeated{&labels}, "label", "the host name of each LOG, in order (repeatable; default: the LOG's directory or file name)")
	fs.StringVar(&service, "service-name", "simpler", "the resource's service.name")
	fs.BoolVar(&assumeWall, "assume-wall", false, "send spans of processes without a [CLOCK_ANCHOR], and device-clock spans, taking their ts as Unix nanoseconds")
	fs.DurationVar(&timeout, "timeout", 30*time.Second, "how long the whole export may take")
	fs.StringVar(&signals, "signals", signals, "what to send: traces (the spans, with WARN and ERROR records as their events), logs (the records, as OpenTelemetry log records with the ids of the span each was written in), or both")
	fs.StringVar(&since, "since", "", "send only the spans that start, and the records written, at or after `T`: RFC 3339, a clock time 15:04[:05] on the log's first day, or a duration before now such as 10m")
	fs.StringVar(&until, "until", "", "send only what starts before `T` (as --since)")
	fs.Var(repeated{&pids}, "pid", "send only this process's spans and records (repeatable)")
	fs.Var(repeated{&runs}, "run", "send only this run's spans and records: its identity or a prefix (the tag in host.<pid>-<tag>.log), - for a process's unmarked run (repeatable)")
	maxSpans := defaultMaxSpans
	fs.IntVar(&maxSpans, "max-spans", maxSpans, "the most spans one LOG may send (each LOG is held whole while it is sent, about 1.3 times its size): past them nothing is sent and the command asks for a window; 0 for no bound")
	fs.TextVar(&logLevel, "log-level", logLevel, "the level from which records are sent as log records: trace, debug, info, timing, warn or error")
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			fmt.Fprintln(stdout, usage)
			fs.SetOutput(stdout)
			fs.PrintDefaults()
			return 0
		}
		fmt.Fprintf(stderr, "%s\nstrace-otlp: %v\n", usage, err)
		return 2
	}
	inputs := fs.Args()
	switch {
	case endpoint == "":
		fmt.Fprintf(stderr, "%s\nstrace-otlp: --endpoint is required\n", usage)
		return 2
	case len(inputs) == 0:
		fmt.Fprintf(stderr, "%s\nstrace-otlp: no LOG given\n", usage)
		return 2
	case len(labels) > len(inputs):
		fmt.Fprintf(stderr, "%s\nstrace-otlp: more --label than LOG\n", usage)
		return 2
	}
	sel, err := strace.ParseSelection(since, until, pids, runs, inputs, time.Now())
	if err != nil {
		fmt.Fprintf(stderr, "%s\nstrace-otlp: %v\n", usage, err)
		return 2
	}
	var traces, logs bool
	for _, s := range strings.Split(signals, ",") {
		switch strings.TrimSpace(s) {
		case "traces":
			traces = true
		case "logs":
			logs = true
		default:
			fmt.Fprintf(stderr, "%s\nstrace-otlp: --signals %q: want traces, logs or traces,logs\n", usage, signals)
			return 2
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	var exp sdktrace.SpanExporter
	var logExp sdklog.Exporter
	if traces {
		exp, err = simplerotel.NewSpanExporter(ctx, endpoint)
	}
	if err == nil && logs {
		logExp, err = simplerotel.NewLogExporter(ctx, endpoint)
	}
	if err != nil {
		fmt.Fprintf(stderr, "%s\nstrace-otlp: --%v\n", usage, err)
		return 2
	}
	// Every LOG is listed before any is read or sent: a LOG that names
	// nothing readable fails the command with nothing sent.
	var paths []string
	for _, in := range inputs {
		ps, err := strace.Inputs(in)
		if err != nil {
			fmt.Fprintf(stderr, "strace-otlp: %v\n", err)
			return 1
		}
		paths = append(paths, ps...)
	}
	for _, g := range strace.RotationGaps(paths) {
		fmt.Fprintf(stderr, "warning: %s\n", g)
	}
	if maxSpans > 0 {
		if code := refuseLarge(inputs, sel, maxSpans, stderr); code != 0 {
			return code
		}
	}
	// Streaming: one host is read at a time, and each part of it is
	// exported as it is made and dropped, so the command holds one host's
	// parsed spans and records and one part of OpenTelemetry ones, never
	// every host's, nor the whole log's OpenTelemetry spans (a 10^6-span
	// log needed 12 times its size when everything was built first).
	// Converting a host alone gives what converting it among others does:
	// ids, resources and parents are per host. After a batch the
	// collector refused, the rest is only counted, for the report.
	var spansOut, recordsOut tally
	each := func(part simplerotel.Converted) bool {
		if n := len(part.Spans); n > 0 {
			spansOut.total += n
			if err == nil {
				err = spansOut.add(n, exp.ExportSpans(ctx, part.Spans))
			}
		}
		if n := len(part.Records); n > 0 {
			recordsOut.total += n
			if err == nil {
				err = recordsOut.add(n, logExp.Export(ctx, part.Records))
			}
		}
		if err == nil {
			err = ctx.Err()
		}
		return true
	}
	// One pass for both signals: each span placed once. A logs-only send
	// makes no spans (NoSpans), so it builds none.
	opts := &simplerotel.Options{ServiceName: service, AssumeWall: assumeWall, LogLevel: logLevel, Each: each,
		NoSpans: !traces, NoRecords: !logs}
	var skipped, skippedRecords []simplerotel.Skipped
	var left struct{ spans, untimed, files int } // what the selection left out
	for i, in := range inputs {
		// Records are kept for the spans' events (WARN and above) and for
		// the logs (from --log-level): none below both.
		keep := levels.Warn
		if logs {
			keep = min(keep, logLevel.Level())
		}
		// Unparsed: each record is read once, when it is sent, and held
		// as its line until then, about a third of the memory of a
		// parsed one.
		h, readErr := strace.ReadHost(&strace.Parser{ReadOptions: strace.ReadOptions{KeepRecords: keep, KeepUnparsed: true, Select: sel}}, in, stdin)
		if errors.Is(readErr, strace.ErrDamaged) { // what the damaged files held before it is sent
			for _, line := range strings.Split(readErr.Error(), "\n") {
				fmt.Fprintln(stderr, "strace-otlp: warning:", line)
			}
			readErr = nil
		}
		if readErr != nil {
			shutdown(ctx, exp, logExp)
			fmt.Fprintf(stderr, "strace-otlp: %v (%d of %d spans and %d of %d log records of the LOGs before it sent to %s)\n",
				readErr, spansOut.sent, spansOut.total, recordsOut.sent, recordsOut.total, endpoint)
			return 1
		}
		if i < len(labels) && labels[i] != "" {
			h.Label = labels[i]
		}
		if sel != nil {
			left.spans += h.Parser.Deselected
			left.untimed += h.Parser.Untimed
			left.files += h.Parser.SkippedFiles
		}
		c := simplerotel.Convert([]strace.HostLog{h}, opts)
		skipped, skippedRecords = append(skipped, c.SkippedSpans...), append(skippedRecords, c.SkippedRecords...)
	}
	if sel != nil {
		fmt.Fprintf(stderr, "strace-otlp: the selection (--since, --until, --pid, --run) left out %d spans", left.spans)
		if left.untimed > 0 {
			fmt.Fprintf(stderr, ", %d of them for want of a wall-clock time", left.untimed)
		}
		fmt.Fprintf(stderr, "; %d files not read\n", left.files)
	}
	warnSkipped(stderr, "span(s)", skipped)
	warnSkipped(stderr, "record(s)", skippedRecords)
	if spansOut.total == 0 && recordsOut.total == 0 {
		shutdown(ctx, exp, logExp)
		what := []string{}
		if traces {
			what = append(what, fmt.Sprintf("%d span(s)", len(skipped)))
		}
		if logs {
			what = append(what, fmt.Sprintf("%d record(s) at or above %v", len(skippedRecords), logLevel))
		}
		fmt.Fprintf(stderr, "strace-otlp: nothing sent: the logs held %s, and none could be placed on the wall clock\n", strings.Join(what, " and "))
		return 1
	}
	if shutErr := shutdown(ctx, exp, logExp); err == nil {
		err = shutErr
	}
	return report(stdout, stderr, endpoint, spansOut, recordsOut, len(skipped)+len(skippedRecords), err)
}

// report says what was sent and returns the exit status: 0 when the
// collector took everything placed, 1 when it refused or could not be
// reached (how much it took first, and why) or when it took a batch but
// rejected part of it (OTLP partial success: how many, and its message).
// A partial success is a failure to the caller: records it asked to store
// are not stored, and a script must be able to tell. Everything the
// collector says is escaped (printable) before it reaches the terminal.
func report(stdout, stderr io.Writer, endpoint string, spans, records tally, notSent int, err error) int {
	if err != nil {
		fmt.Fprintf(stderr, "strace-otlp: %d of %d spans and %d of %d log records sent to %s before: %s\n",
			spans.sent, spans.total, records.sent, records.total, endpoint, printable(err.Error()))
		spans.warnRejected(stderr, "spans")
		records.warnRejected(stderr, "log records")
		return 1
	}
	if spans.rejected > 0 || records.rejected > 0 {
		spans.warnRejected(stderr, "spans")
		records.warnRejected(stderr, "log records")
		return 1
	}
	// A partial success that rejected nothing but says something is a
	// warning (OTLP): everything was taken.
	for _, t := range []struct {
		tally
		what string
	}{{spans, "spans"}, {records, "log records"}} {
		if t.msg != "" {
			fmt.Fprintf(stderr, "warning: the collector took every one of the %s but said: %s\n", t.what, printable(t.msg))
		}
	}
	fmt.Fprintf(stdout, "Sent %d spans and %d log records to %s (%d not sent)\n", spans.sent, records.sent, endpoint, notSent)
	return 0
}

// A tally is what one signal's export came to: how many were handed to
// the collector (total), how many it took and how many it rejected in a
// partial success, with its last message.
type tally struct {
	sent, rejected, total int
	msg                   string
}

// add counts a batch of n the collector answered with err: taken, taken
// in part (OTLP partial success: counted, and nil returned, for the
// export goes on), or refused (err returned).
func (t *tally) add(n int, err error) error {
	if rejected, msg, ok := partialSuccess(err); ok {
		rejected = min(max(rejected, 0), int64(n))
		t.rejected += int(rejected)
		t.sent += n - int(rejected)
		if msg != "" || t.msg == "" {
			t.msg = msg
		}
		return nil
	}
	if err != nil {
		return err
	}
	t.sent += n
	return nil
}

func (t tally) warnRejected(stderr io.Writer, what string) {
	if t.rejected == 0 {
		return
	}
	fmt.Fprintf(stderr, "strace-otlp: %d of %d %s sent, %d rejected by the collector: %s\n", t.sent, t.total, what, t.rejected, printable(t.msg))
}

// warnSkipped says, by reason, what could not be sent.
func warnSkipped(stderr io.Writer, what string, skipped []simplerotel.Skipped) {
	reasons := map[string]int{}
	for _, s := range skipped {
		reasons[s.Reason]++
	}
	for _, reason := range slices.Sorted(maps.Keys(reasons)) {
		fmt.Fprintf(stderr, "warning: %d %s not sent: %s (--assume-wall sends them taking ts as Unix ns)\n", reasons[reason], what, reason)
	}
}

// shutdown shuts the exporters there are down.
func shutdown(ctx context.Context, exp sdktrace.SpanExporter, logExp sdklog.Exporter) error {
	ctx = context.WithoutCancel(ctx)
	var err error
	if exp != nil {
		err = exp.Shutdown(ctx)
	}
	if logExp != nil {
		if e := logExp.Shutdown(ctx); err == nil {
			err = e
		}
	}
	return err
}

// partialSuccess reports whether err is nothing but OTLP partial
// successes, and if so how many items they say were rejected and the
// last non-empty message. The OTLP exporters return a partial success as
// an error of a type in their internal packages (PartialSuccess, with
// RejectedItems and ErrorMessage), which no other package can name or
// errors.As into, so it is recognised by its type's name and fields. Any
// other error in the tree means the batch failed.
func partialSuccess(err error) (rejected int64, msg string, ok bool) {
	if err == nil {
		return 0, "", false
	}
	var walk func(err error) bool
	walk = func(err error) bool {
		switch e := err.(type) {
		case interface{ Unwrap() []error }:
			for _, inner := range e.Unwrap() {
				if inner != nil && !walk(inner) {
					return false
				}
			}
			return true
		case interface{ Unwrap() error }:
			return walk(e.Unwrap())
		}
		v := reflect.ValueOf(err)
		if v.Kind() != reflect.Struct || v.Type().Name() != "PartialSuccess" {
			return false
		}
		n, m := v.FieldByName("RejectedItems"), v.FieldByName("ErrorMessage")
		if !n.IsValid() || n.Kind() != reflect.Int64 || !m.IsValid() || m.Kind() != reflect.String {
			return false
		}
		rejected += n.Int()
		if m.String() != "" {
			msg = m.String()
		}
		return true
	}
	return rejected, msg, walk(err)
}

// printable escapes what a collector (or any peer) said for a terminal,
// as the library's console does: control bytes (ESC, CR, LF included),
// DEL, C1 controls, bidi controls, line and paragraph separators and any
// other non-printing rune as Go escapes (\x1b, \u202e), invalid UTF-8 as
// \xNN; the rest as it is. It cannot start a line, move the cursor or
// reorder what follows.
func printable(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			b.WriteByte(c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			fmt.Fprintf(&b, `\x%02x`, c)
		case c < utf8.RuneSelf || !unicode.IsPrint(r):
			q := strconv.QuoteRune(r)
			b.WriteString(q[1 : len(q)-1])
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	return b.String()
}

// repeated is a flag.Value that collects a flag given several times, in
// order.
type repeated struct{ list *[]string }

func (r repeated) String() string {
	if r.list == nil {
		return ""
	}
	return strings.Join(*r.list, ",")
}

func (r repeated) Set(v string) error { *r.list = append(*r.list, v); return nil }

// defaultMaxSpans is --max-spans' default: a LOG is held whole while it
// is sent (its spans placed, its records as lines: about 1.3 times the
// log, TestHeldWhileSending), some 500 MB at this bound for a runtime's
// log of about 180 bytes a span.
const defaultMaxSpans = 2_000_000

// refuseLarge reads each LOG once, counting the spans the selection
// keeps and holding none (strace.Parser.EachSpan), and past max in one
// says so, with what to do, and returns 1; 0 to go on. Standard input,
// which cannot be read twice, is not counted.
func refuseLarge(inputs []string, sel *strace.Selection, max int, stderr io.Writer) int {
	for _, in := range inputs {
		if in == "-" {
			continue
		}
		n := 0
		q := &strace.Parser{ReadOptions: strace.ReadOptions{Select: sel, EachSpan: func(*strace.Span) { n++ }}}
		if _, err := strace.ReadHost(q, in, nil); err != nil && !errors.Is(err, strace.ErrDamaged) {
			return 0 // the send's reading says why, in its own words
		}
		if n <= max {
			continue
		}
		what := fmt.Sprintf("holds %d spans", n)
		if sel != nil {
			what = fmt.Sprintf("keeps %d spans of the selection (of %d)", n, n+q.Deselected)
		}
		fmt.Fprintf(stderr, "strace-otlp: %s %s, past --max-spans %d (a LOG is held whole while it is sent, about 1.3 times its size): nothing sent; select a window (--since, --until), a process (--pid) or a run (--run), or raise --max-spans (0: no bound)\n", in, what, max)
		return 1
	}
	return 0
}
