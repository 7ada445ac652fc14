package simplerotel_test

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"simpler.dev/log/levels"
	simplerotel "simpler.dev/log/otel"
	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
	"simpler.dev/log/strace"
)

// Spans export live as they end: NewLive observes package spanattr, and
// Shutdown sends what is left. Any sdktrace.SpanExporter will do; a
// program passes NewSpanExporter's, this example an in-memory one.
func ExampleNewLive() {
	exp := keep{tracetest.NewInMemoryExporter()}
	live, err := simplerotel.NewLive(exp, &simplerotel.LiveOptions{ServiceName: "example"})
	if err != nil {
		fmt.Println(err)
		return
	}
	// A program logs through Setup's default logger with live.Handler()
	// among Options.Handlers; here the exporter's handler alone.
	ctx := spanattr.WithLogger(context.Background(), slog.New(live.Handler()))

	ctx, inv := spanattr.NewInvocation(ctx, 0x9f)
	ctx2, run := spanattr.Start(ctx, "chip.run", slog.Int("rank", 0))
	_, bind := spanattr.Start(ctx2, "chip.run.bind")
	bind.End()
	run.End()
	inv.End()
	if err := live.Shutdown(context.Background()); err != nil {
		fmt.Println(err)
	}

	spans := exp.GetSpans()
	parent := map[string]string{}
	for _, s := range spans {
		parent[s.SpanContext.SpanID().String()] = exampleName(s.Name)
	}
	var lines []string
	for _, s := range spans {
		lines = append(lines, fmt.Sprintf("%s <- %q", exampleName(s.Name), parent[s.Parent.SpanID().String()]))
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	c := live.Counts()
	fmt.Println("exported:", c.Exported, "dropped:", c.Dropped)
	// Output:
	// chip.run <- "invocation N"
	// chip.run.bind <- "chip.run"
	// invocation N <- ""
	// exported: 3 dropped: 0
}

// keep is an in-memory exporter whose Shutdown keeps the spans (the
// SDK's forgets them) so the example can print them.
type keep struct{ *tracetest.InMemoryExporter }

func (keep) Shutdown(context.Context) error { return nil }

// exampleLog writes a host log into dir: a WARN record, then an
// invocation with one span and an ERROR record written inside it.
func exampleLog(dir string) error {
	// The name carries the pid, as a state bound to dir names it: the
	// reader takes a record's process from it.
	f, err := os.Create(filepath.Join(dir, fmt.Sprintf("host.%d.log", os.Getpid())))
	if err != nil {
		return err
	}
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Destination: sink.Writer(f), Level: levels.Timing})
	if err != nil {
		return err
	}
	logger := slog.New(st.Handler())
	logger.Warn("starting") // the anchor comes with the first record; spans after it
	ctx := spanattr.WithLogger(context.Background(), logger)
	ctx, inv := spanattr.NewInvocation(ctx, 0x9f)
	ctx, run := spanattr.Start(ctx, "chip.run", slog.String("zip", "007"))
	logger.ErrorContext(ctx, "bind failed", "rank", 3)
	run.End()
	inv.End()
	if err := st.Close(); err != nil {
		return err
	}
	return f.Close()
}

// exampleHost writes the example's log and reads it back with p.
func exampleHost(p *strace.Parser) (strace.HostLog, error) {
	dir, err := os.MkdirTemp("", "otel-example")
	if err != nil {
		return strace.HostLog{}, err
	}
	defer os.RemoveAll(dir)
	if err := exampleLog(dir); err != nil {
		return strace.HostLog{}, err
	}
	return strace.ReadHost(p, dir, nil)
}

// exampleName hides the invocation number, which counts per process.
func exampleName(s string) string {
	if strings.HasPrefix(s, "invocation ") {
		return "invocation N"
	}
	return s
}

// The same spans, from a host log written earlier (or on another
// machine): strace reads it, Convert makes OpenTelemetry spans of it
// (the traces signal alone: NoRecords).
func ExampleConvert_spans() {
	host, err := exampleHost(nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	c := simplerotel.Convert([]strace.HostLog{host}, &simplerotel.Options{NoRecords: true})
	for _, s := range c.Spans {
		zip := ""
		for _, kv := range s.Attributes() {
			if kv.Key == "zip" {
				zip = fmt.Sprintf(" zip=%s(%q)", kv.Value.Type(), kv.Value.String())
			}
		}
		fmt.Printf("%s parent=%v%s\n", exampleName(s.Name()), s.Parent().IsValid(), zip)
	}
	fmt.Println("skipped:", len(c.SkippedSpans))
	// Output:
	// invocation N parent=false
	// chip.run parent=true zip=STRING("007")
	// skipped: 0
}

// Spans and the records written in them, from one pass over the log:
// each record carries the ids of the span it was written in.
func ExampleConvert() {
	host, err := exampleHost(&strace.Parser{ReadOptions: strace.ReadOptions{KeepRecords: levels.Warn}})
	if err != nil {
		fmt.Println(err)
		return
	}
	c := simplerotel.Convert([]strace.HostLog{host}, nil)
	span := map[trace.SpanID]string{}
	for _, s := range c.Spans {
		span[s.SpanContext().SpanID()] = exampleName(s.Name())
	}
	for _, r := range c.Records {
		in := "no span"
		if r.SpanID().IsValid() {
			in = span[r.SpanID()]
		}
		fmt.Printf("%v %q in %s\n", r.Severity(), r.Body().AsString(), in)
	}
	fmt.Println("spans:", len(c.Spans), "skipped:", len(c.SkippedSpans)+len(c.SkippedRecords))
	// Output:
	// WARN "starting" in no span
	// ERROR "bind failed" in chip.run
	// spans: 2 skipped: 0
}
