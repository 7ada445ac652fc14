package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"log"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
	"golang.org/x/term"

	"simpler.dev/log/examples/quickstart/app"
	"simpler.dev/log/levels"
	simplerotel "simpler.dev/log/otel"
	"simpler.dev/log/slogsimpler"
)

const service = "quickstart"

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	cfg := config{
		otlp: envOr("OTEL_DEMO_OTLP", "127.0.0.1:0"),
		ui:   envOr("OTEL_DEMO_UI", "127.0.0.1:0"),
		dir:  envOr("OTEL_DEMO_DIR", "otel-demo-logs"),
	}
	wait := func(url string) {
		if term.IsTerminal(int(os.Stdin.Fd())) {
			fmt.Print("Press Enter to stop. ")
			line := make(chan struct{})
			go func() {
				_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
				close(line)
			}()
			select {
			case <-line:
			case <-ctx.Done():
			}
			return
		}
		fmt.Println("Serving until interrupted (Ctrl-C or SIGTERM).")
		<-ctx.Done()
	}
	if err := run(ctx, cfg, os.Stdout, wait); err != nil {
		fmt.Fprintln(os.Stderr, "otel-demo:", err)
		os.Exit(1)
	}
}

func envOr(k, def string) string {
	if v := os.Getenv(k); v != "" {
		return v
	}
	return def
}

type config struct {
	otlp, ui, dir string
	// errs receives the viewer's own failures (a request that panicked,
	// the server's errors); nil means standard error. Not the log
	// package: the quickstart's Setup routed it into the quickstart's
	// log, which is closed by the time the viewer serves.
	errs io.Writer
}

// run receives, runs the quickstart, serves the viewer and calls wait with
// its address; it returns when wait does.
func run(ctx context.Context, cfg config, out io.Writer, wait func(url string)) error {
	otlpAddr, err := freeAddr(cfg.otlp)
	if err != nil {
		return fmt.Errorf("OTLP address %s: %w", cfg.otlp, err)
	}
	traces, logs := new(consumertest.TracesSink), new(consumertest.LogsSink)
	stopReceiver, err := receive(ctx, otlpAddr, traces, logs)
	if err != nil {
		return err
	}
	defer stopReceiver()
	fmt.Fprintf(out, "Receiving OTLP/HTTP at http://%s (the OpenTelemetry Collector's own receiver).\n", otlpAddr)

	dir, err := filepath.Abs(cfg.dir)
	if err != nil {
		return err
	}
	fmt.Fprintf(out, "Running the quickstart, exporting its spans and records live; its log goes to %s\n", dir)
	sent, err := quickstart(ctx, "http://"+otlpAddr, dir)
	if err != nil {
		return err
	}
	// The receiver hands each request to the sinks before answering it,
	// and the exporters have been shut down: everything sent is there.
	fmt.Fprintf(out, "Received %d spans and %d log records (%s).\n", traces.SpanCount(), logs.LogRecordCount(), sent)
	if traces.SpanCount() == 0 {
		return errors.New("no span arrived")
	}

	l, err := net.Listen("tcp", cfg.ui)
	if err != nil {
		return fmt.Errorf("viewer address %s: %w", cfg.ui, err)
	}
	errs := cfg.errs
	if errs == nil {
		errs = os.Stderr
	}
	srv := &http.Server{Handler: viewer(traces, logs, errs), ReadHeaderTimeout: 10 * time.Second,
		ErrorLog: log.New(errs, "otel-demo: viewer: ", log.LstdFlags)}
	go func() { _ = srv.Serve(l) }()
	defer srv.Close()
	url := "http://" + l.Addr().String() + "/"
	fmt.Fprintf(out, "Open %s\n", url)
	wait(url)
	return nil
}

// freeAddr resolves host:0 to a port nothing listens on.
func freeAddr(addr string) (string, error) {
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// receive starts the Collector's OTLP/HTTP receiver for traces and logs.
func receive(ctx context.Context, addr string, traces *consumertest.TracesSink, logs *consumertest.LogsSink) (stop func(), err error) {
	f := otlpreceiver.NewFactory()
	cfg := f.CreateDefaultConfig().(*otlpreceiver.Config)
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = addr
	set := receivertest.NewNopSettings(f.Type())
	tr, err := f.CreateTraces(ctx, set, cfg, traces)
	if err != nil {
		return nil, err
	}
	lr, err := f.CreateLogs(ctx, set, cfg, logs) // the same receiver, its port shared
	if err != nil {
		return nil, err
	}
	if err := tr.Start(ctx, componenttest.NewNopHost()); err != nil {
		return nil, fmt.Errorf("starting the OTLP receiver: %w", err)
	}
	if err := lr.Start(ctx, componenttest.NewNopHost()); err != nil {
		return nil, fmt.Errorf("starting the OTLP receiver: %w", err)
	}
	return func() {
		_ = tr.Shutdown(context.Background())
		_ = lr.Shutdown(context.Background())
	}, nil
}

// quickstart runs the quickstart's jobs with Live exporting to endpoint.
func quickstart(ctx context.Context, endpoint, dir string) (string, error) {
	exp, err := simplerotel.NewSpanExporter(ctx, endpoint)
	if err != nil {
		return "", err
	}
	logExp, err := simplerotel.NewLogExporter(ctx, endpoint)
	if err != nil {
		return "", err
	}
	st, err := slogsimpler.NewState(nil) // the log's and the exporter's: spans placed by its anchor
	if err != nil {
		return "", err
	}
	live, err := simplerotel.NewLive(exp, &simplerotel.LiveOptions{ServiceName: service, Logs: logExp, State: st})
	if err != nil {
		return "", err
	}
	err = app.Run(app.Config{
		Dir: dir, Level: levels.Debug, Console: io.Discard, Out: io.Discard, State: st,
		Handlers:    []slog.Handler{live.Handler()},
		BeforeClose: func() error { return live.Shutdown(ctx) },
	})
	if err != nil {
		return "", err
	}
	c := live.Counts()
	return fmt.Sprintf("%d spans and %d log records sent, %d and %d lost", c.Exported, c.LogsExported, c.Dropped, c.LogsDropped), nil
}
