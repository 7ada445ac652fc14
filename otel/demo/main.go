// Demo shows the quickstart's spans in Jaeger: it builds Jaeger v2
// all-in-one (this module's tool dependency), starts it on loopback with
// memory storage, runs the quickstart with its spans exported live over
// OTLP, asks Jaeger's query API what arrived, prints it with the URL to
// open, and stops Jaeger (on a terminal, when you press Enter).
//
//	make otel-demo          # from the repository's root
//	cd otel/demo && go run .
//
// The first run builds Jaeger, which takes a few minutes; later runs use
// the Go build cache.
package main

import (
	"bufio"
	"bytes"
	"context"
	_ "embed"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"golang.org/x/term"
)

//go:embed jaeger.yaml
var config []byte

const (
	otlpHTTP = "127.0.0.1:4318"
	ui       = "http://127.0.0.1:16686"
	health   = "http://127.0.0.1:13133/status"
	service  = "quickstart"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "otel-demo:", err)
		os.Exit(1)
	}
}

func run() error {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for _, addr := range []string{otlpHTTP, "127.0.0.1:4317", "127.0.0.1:16686", "127.0.0.1:16685", "127.0.0.1:13133"} {
		if l, err := net.Listen("tcp", addr); err != nil {
			return fmt.Errorf("%s is taken (another Jaeger or collector running?): %w", addr, err)
		} else {
			l.Close()
		}
	}
	tmp, err := os.MkdirTemp("", "otel-demo-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)

	fmt.Println("Building Jaeger v2 (the first time takes a few minutes)...")
	bin := filepath.Join(tmp, "jaeger")
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "github.com/jaegertracing/jaeger/cmd/jaeger")
	build.Stdout, build.Stderr = os.Stdout, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("building Jaeger: %w", err)
	}
	cfg := filepath.Join(tmp, "jaeger.yaml")
	if err := os.WriteFile(cfg, config, 0o600); err != nil {
		return err
	}
	jlog, err := os.Create(filepath.Join(tmp, "jaeger.log"))
	if err != nil {
		return err
	}
	defer jlog.Close()
	jaeger := exec.Command(bin, "--config", cfg)
	jaeger.Stdout, jaeger.Stderr = jlog, jlog
	if err := jaeger.Start(); err != nil {
		return fmt.Errorf("starting Jaeger: %w", err)
	}
	exited := make(chan error, 1)
	go func() { exited <- jaeger.Wait() }()
	defer func() {
		_ = jaeger.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(10 * time.Second):
			_ = jaeger.Process.Kill()
			<-exited
		}
		fmt.Println("Jaeger stopped.")
	}()
	if err := ready(ctx, exited); err != nil {
		out, _ := os.ReadFile(jlog.Name())
		return fmt.Errorf("%w\nJaeger's log:\n%s", err, out)
	}
	fmt.Println("Jaeger is up; running the quickstart with live export to http://" + otlpHTTP)

	qs := exec.CommandContext(ctx, "go", "run", "./examples/quickstart",
		"-endpoint", "http://"+otlpHTTP, "-dir", filepath.Join(tmp, "logs"), "-service-name", service)
	qs.Dir = ".."
	qs.Stdout, qs.Stderr = os.Stdout, os.Stderr
	if err := qs.Run(); err != nil {
		return fmt.Errorf("quickstart: %w", err)
	}

	traces, spans, err := arrived(ctx)
	if err != nil {
		return err
	}
	fmt.Printf("\nJaeger holds %d traces, %d spans from service %q.\nOpen %s/search?service=%s\n", traces, spans, service, ui, service)
	if traces == 0 {
		return errors.New("no trace arrived")
	}
	if term.IsTerminal(int(os.Stdin.Fd())) {
		fmt.Print("Press Enter to stop Jaeger. ")
		line := make(chan struct{})
		go func() {
			_, _ = bufio.NewReader(os.Stdin).ReadString('\n')
			close(line)
		}()
		select {
		case <-line:
		case <-ctx.Done():
		case <-exited:
		}
	}
	return nil
}

// ready waits for Jaeger's health check, at most a minute.
func ready(ctx context.Context, exited <-chan error) error {
	deadline := time.Now().Add(time.Minute)
	for time.Now().Before(deadline) {
		select {
		case err := <-exited:
			return fmt.Errorf("jaeger exited at start: %v", err)
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		if resp, err := http.Get(health); err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
		}
	}
	return errors.New("jaeger was not ready within a minute")
}

// arrived asks Jaeger's query API for the service's traces until two
// answers agree (its batch processor forwards within a second), at most
// ten seconds.
func arrived(ctx context.Context) (traces, spans int, err error) {
	last := -1
	for range 50 {
		select {
		case <-ctx.Done():
			return 0, 0, ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
		resp, err := http.Get(ui + "/api/traces?service=" + service + "&limit=1000&lookback=1h")
		if err != nil {
			continue
		}
		var body bytes.Buffer
		_, _ = body.ReadFrom(resp.Body)
		resp.Body.Close()
		var got struct {
			Data []struct {
				Spans []json.RawMessage `json:"spans"`
			} `json:"data"`
		}
		if resp.StatusCode != http.StatusOK || json.Unmarshal(body.Bytes(), &got) != nil {
			continue
		}
		traces, spans = len(got.Data), 0
		for _, t := range got.Data {
			spans += len(t.Spans)
		}
		if spans > 0 && spans == last {
			return traces, spans, nil
		}
		last = spans
	}
	if last >= 0 {
		return traces, spans, nil
	}
	return 0, 0, errors.New("jaeger's query API did not answer")
}
