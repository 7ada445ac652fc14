// Command strace-otlp sends the [STRACE] spans and the records of simpler
// host logs to an OpenTelemetry collector over OTLP (traces and logs),
// with the mapping of package simplerotel: one trace per invocation,
// parents from the log's nesting, WARN and ERROR records as the events of
// the span they were written in (ERROR its status), wall-clock times from
// each process's [CLOCK_ANCHOR], typed attributes, and ids derived from
// host, pid, invocation and position, so sending a log twice sends the
// same trace; records at or above --log-level as log records carrying the
// ids of their span.
//
//	strace-otlp --endpoint http://localhost:4318 host1/ host2/host.41.log
//	strace-otlp --endpoint grpc://localhost:4317 --label node-a logs/
//
// Each LOG (a file, a directory of host.*.log, or - for standard input) is
// one host, labelled by its directory name or --label. Spans of a process
// without an anchor, and device-clock spans, are skipped and counted unless
// --assume-wall says their ts is already Unix nanoseconds. The exit status
// is 0 when everything placed was accepted, 1 when the collector refused or
// could not be reached (the message says how much was sent) or when
// nothing could be sent, 2 for usage errors.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"simpler.dev/log/levels"
	simplerotel "simpler.dev/log/otel"
	"simpler.dev/log/strace"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

const usage = "usage: strace-otlp --endpoint URL [--signals traces,logs] [--log-level LEVEL] [--label NAME ...] [--service-name NAME] [--assume-wall] [--timeout D] LOG [LOG ...]"

// batch is how many spans, or log records, one export request carries.
const batch = 512

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
	)
	fs.StringVar(&endpoint, "endpoint", "", "the collector: http://host:4318 or https://... for OTLP/HTTP (/v1/traces is added to a URL without a path), grpc://host:4317 (plain) or grpcs://... for OTLP/gRPC")
	fs.Var(repeated{&labels}, "label", "the host name of each LOG, in order (repeatable; default: the LOG's directory or file name)")
	fs.StringVar(&service, "service-name", "simpler", "the resource's service.name")
	fs.BoolVar(&assumeWall, "assume-wall", false, "send spans of processes without a [CLOCK_ANCHOR], and device-clock spans, taking their ts as Unix nanoseconds")
	fs.DurationVar(&timeout, "timeout", 30*time.Second, "how long the whole export may take")
	fs.StringVar(&signals, "signals", signals, "what to send: traces (the spans, with WARN and ERROR records as their events), logs (the records, as OpenTelemetry log records with the ids of the span each was written in), or both")
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
	var err error
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
	var hosts []strace.HostLog
	for i, in := range inputs {
		// Records are kept for the spans' events (WARN and above) and for
		// the logs (from --log-level): none below both.
		keep := levels.Warn
		if logs {
			keep = min(keep, logLevel.Level())
		}
		h, err := strace.ReadHost(&strace.Parser{KeepRecords: keep}, in, stdin)
		if err != nil {
			fmt.Fprintf(stderr, "strace-otlp: %v\n", err)
			return 1
		}
		if i < len(labels) && labels[i] != "" {
			h.Label = labels[i]
		}
		hosts = append(hosts, h)
	}
	var paths []string
	for _, in := range inputs {
		if ps, err := strace.Inputs(in); err == nil {
			paths = append(paths, ps...)
		}
	}
	for _, g := range strace.RotationGaps(paths) {
		fmt.Fprintf(stderr, "warning: %s\n", g)
	}
	opts := &simplerotel.Options{ServiceName: service, AssumeWall: assumeWall, LogLevel: logLevel}
	var c simplerotel.Converted
	switch {
	case traces && logs:
		c = simplerotel.Convert(hosts, opts) // one pass: each span placed once
	case traces:
		c.Spans, c.SkippedSpans = simplerotel.FromLogs(hosts, opts)
	case logs:
		c.Records, c.SkippedRecords = simplerotel.LogRecords(hosts, opts)
	}
	spans, records, skipped, skippedRecords := c.Spans, c.Records, c.SkippedSpans, c.SkippedRecords
	warnSkipped(stderr, "span(s)", skipped)
	warnSkipped(stderr, "record(s)", skippedRecords)
	if len(spans) == 0 && len(records) == 0 {
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
	sent, err := export(ctx, len(spans), func(i, j int) error { return exp.ExportSpans(ctx, spans[i:j]) })
	var sentRecords int
	if err == nil && logs {
		sentRecords, err = export(ctx, len(records), func(i, j int) error { return logExp.Export(ctx, records[i:j]) })
	}
	if shutErr := shutdown(ctx, exp, logExp); err == nil {
		err = shutErr
	}
	if err != nil {
		fmt.Fprintf(stderr, "strace-otlp: %d of %d spans and %d of %d log records sent to %s before: %v\n", sent, len(spans), sentRecords, len(records), endpoint, err)
		return 1
	}
	fmt.Fprintf(stdout, "Sent %d spans and %d log records to %s (%d not sent)\n", sent, sentRecords, endpoint, len(skipped)+len(skippedRecords))
	return 0
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

// export sends n items in batches through send(i, j) and returns how
// many were accepted.
func export(ctx context.Context, n int, send func(i, j int) error) (int, error) {
	sent := 0
	for sent < n {
		j := min(sent+batch, n)
		if err := send(sent, j); err != nil {
			return sent, err
		}
		sent = j
	}
	return sent, ctx.Err()
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
