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
	// among SetupOptions.Handlers; here the exporter's handler alone.
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
	name := func(s string) string { // invocation numbers count per process
		if strings.HasPrefix(s, "invocation ") {
			return "invocation N"
		}
		return s
	}
	for _, s := range spans {
		parent[s.SpanContext.SpanID().String()] = name(s.Name)
	}
	var lines []string
	for _, s := range spans {
		lines = append(lines, fmt.Sprintf("%s <- %q", name(s.Name), parent[s.Parent.SpanID().String()]))
	}
	slices.Sort(lines)
	for _, l := range lines {
		fmt.Println(l)
	}
	fmt.Println("exported:", live.Exported(), "dropped:", live.Drops().Total())
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

// The same spans, from a host log written earlier (or on another
// machine): strace reads it, FromLogs makes OpenTelemetry spans of it.
func ExampleFromLogs() {
	dir, _ := os.MkdirTemp("", "otel-example")
	defer os.RemoveAll(dir)
	f, err := os.Create(filepath.Join(dir, "host.1.log"))
	if err != nil {
		fmt.Println(err)
		return
	}
	st, err := slogsimpler.NewState(&slogsimpler.Options{Destination: sink.Writer(f), Level: levels.Timing})
	if err != nil {
		fmt.Println(err)
		return
	}
	logger := slog.New(st.Handler())
	logger.Warn("starting") // the anchor comes with the first record; spans after it
	ctx := spanattr.WithLogger(context.Background(), logger)
	ctx, inv := spanattr.NewInvocation(ctx, 0x9f)
	_, run := spanattr.Start(ctx, "chip.run", slog.String("zip", "007"))
	run.End()
	inv.End()
	_ = st.Close(0)
	_ = f.Close()

	host, err := strace.ReadHost(nil, dir, nil)
	if err != nil {
		fmt.Println(err)
		return
	}
	name := func(s string) string { // invocation numbers count per process
		if strings.HasPrefix(s, "invocation ") {
			return "invocation N"
		}
		return s
	}
	spans, skipped := simplerotel.FromLogs([]strace.HostLog{host}, nil)
	for _, s := range spans {
		zip := ""
		for _, kv := range s.Attributes() {
			if kv.Key == "zip" {
				zip = fmt.Sprintf(" zip=%s(%q)", kv.Value.Type(), kv.Value.Emit())
			}
		}
		fmt.Printf("%s parent=%v%s\n", name(s.Name()), s.Parent().IsValid(), zip)
	}
	fmt.Println("skipped:", len(skipped))
	// Output:
	// invocation N parent=false
	// chip.run parent=true zip=STRING("007")
	// skipped: 0
}
