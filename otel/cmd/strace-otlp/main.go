// Command strace-otlp sends the [STRACE] spans of simpler host logs to an
// OpenTelemetry collector over OTLP, with the mapping of package
// simplerotel: one trace per invocation, parents from the log's nesting,
// wall-clock times from each process's [CLOCK_ANCHOR], typed attributes,
// and ids derived from host, pid, invocation and position, so sending a
// log twice sends the same trace.
//
//	strace-otlp --endpoint http://localhost:4318 host1/ host2/host.41.log
//	strace-otlp --endpoint grpc://localhost:4317 --label node-a logs/
//
// Each LOG (a file, a directory of host.*.log, or - for standard input) is
// one host, labelled by its directory name or --label. Spans of a process
// without an anchor, and device-clock spans, are skipped and counted unless
// --assume-wall says their ts is already Unix nanoseconds. The exit status
// is 0 when every placed span was accepted, 1 when the collector refused or
// could not be reached (the message says how many spans were sent) or when
// every span was skipped, 2 for usage errors.
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

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	simplerotel "simpler.dev/log/otel"
	"simpler.dev/log/strace"
)

func main() { os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr)) }

const usage = "usage: strace-otlp --endpoint URL [--label NAME ...] [--service-name NAME] [--assume-wall] [--timeout D] LOG [LOG ...]"

// batch is how many spans one export request carries.
const batch = 512

func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("strace-otlp", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	var (
		endpoint, service string
		labels            []string
		assumeWall        bool
		timeout           time.Duration
	)
	fs.StringVar(&endpoint, "endpoint", "", "the collector: http://host:4318 or https://... for OTLP/HTTP (/v1/traces is added to a URL without a path), grpc://host:4317 (plain) or grpcs://... for OTLP/gRPC")
	fs.Var(repeated{&labels}, "label", "the host name of each LOG, in order (repeatable; default: the LOG's directory or file name)")
	fs.StringVar(&service, "service-name", "simpler", "the resource's service.name")
	fs.BoolVar(&assumeWall, "assume-wall", false, "send spans of processes without a [CLOCK_ANCHOR], and device-clock spans, taking their ts as Unix nanoseconds")
	fs.DurationVar(&timeout, "timeout", 30*time.Second, "how long the whole export may take")
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
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	exp, err := simplerotel.NewSpanExporter(ctx, endpoint)
	if err != nil {
		fmt.Fprintf(stderr, "%s\nstrace-otlp: --%v\n", usage, err)
		return 2
	}
	var hosts []strace.HostLog
	for i, in := range inputs {
		h, err := strace.ReadHost(in, stdin)
		if err != nil {
			fmt.Fprintf(stderr, "strace-otlp: %v\n", err)
			return 1
		}
		if i < len(labels) && labels[i] != "" {
			h.Label = labels[i]
		}
		hosts = append(hosts, h)
	}
	spans, skipped := simplerotel.FromLogs(hosts, &simplerotel.Options{ServiceName: service, AssumeWall: assumeWall})
	reasons := map[string]int{}
	for _, s := range skipped {
		reasons[s.Reason]++
	}
	for _, reason := range slices.Sorted(maps.Keys(reasons)) {
		fmt.Fprintf(stderr, "warning: %d span(s) not sent: %s (--assume-wall sends them taking ts as Unix ns)\n", reasons[reason], reason)
	}
	if len(spans) == 0 && len(skipped) > 0 {
		_ = exp.Shutdown(context.WithoutCancel(ctx))
		fmt.Fprintf(stderr, "strace-otlp: nothing sent: all %d span(s) were skipped\n", len(skipped))
		return 1
	}
	sent, err := export(ctx, exp, spans)
	shutErr := exp.Shutdown(context.WithoutCancel(ctx))
	if err == nil {
		err = shutErr
	}
	if err != nil {
		fmt.Fprintf(stderr, "strace-otlp: %d of %d spans sent to %s before: %v\n", sent, len(spans), endpoint, err)
		return 1
	}
	fmt.Fprintf(stdout, "Sent %d spans to %s (%d not sent)\n", sent, endpoint, len(skipped))
	return 0
}

// export sends spans in batches and returns how many were accepted.
func export(ctx context.Context, exp sdktrace.SpanExporter, spans []sdktrace.ReadOnlySpan) (int, error) {
	sent := 0
	for len(spans) > 0 {
		n := min(batch, len(spans))
		if err := exp.ExportSpans(ctx, spans[:n]); err != nil {
			return sent, err
		}
		sent += n
		spans = spans[n:]
	}
	return sent, nil
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
