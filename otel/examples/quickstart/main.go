package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"time"

	"simpler.dev/log/examples/quickstart/app"
	"simpler.dev/log/levels"
	simplerotel "simpler.dev/log/otel"
	"simpler.dev/log/slogsimpler"
)

func main() { os.Exit(run(os.Args[1:], os.Stdout, os.Stderr)) }

func run(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("quickstart", flag.ContinueOnError)
	fs.SetOutput(stderr)
	endpoint := fs.String("endpoint", "http://127.0.0.1:4318", "OTLP endpoint: http(s)://host:port[/path] or grpc(s)://host:port")
	dir := fs.String("dir", "simpler-logs", "directory for host.<pid>.log")
	service := fs.String("service-name", "quickstart", "the resource's service.name")
	if err := fs.Parse(args); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	exp, err := simplerotel.NewSpanExporter(ctx, *endpoint)
	if err != nil {
		fmt.Fprintln(stderr, "quickstart:", err)
		return 2
	}
	logs, err := simplerotel.NewLogExporter(ctx, *endpoint)
	if err != nil {
		fmt.Fprintln(stderr, "quickstart:", err)
		return 2
	}
	// One state for the log and the exporter: spans are placed by the
	// anchor it writes. (A program with one run would use Default(); run
	// is called once per test.)
	st, err := slogsimpler.NewState(nil)
	if err != nil {
		fmt.Fprintln(stderr, "quickstart:", err)
		return 1
	}
	live, err := simplerotel.NewLive(exp, &simplerotel.LiveOptions{ServiceName: *service, Logs: logs, State: st})
	if err != nil {
		fmt.Fprintln(stderr, "quickstart:", err)
		return 1
	}
	err = app.Run(app.Config{
		Dir: *dir, Level: levels.Debug, Console: stderr, Out: stdout, State: st,
		// Records logged in a span at WARN and above become its events.
		Handlers: []slog.Handler{live.Handler()},
		// Export what has ended while the log can still report drops.
		BeforeClose: func() error { return live.Shutdown(ctx) },
	})
	if err != nil {
		fmt.Fprintln(stderr, "quickstart:", err)
		return 1
	}
	c := live.Counts()
	fmt.Fprintf(stdout, "exported to %s: %d spans, %d log records; dropped: %d spans, %d log records\n",
		*endpoint, c.Exported, c.LogsExported, c.Dropped, c.LogsDropped)
	if c.Dropped+c.LogsDropped > 0 {
		return 1
	}
	return 0
}
