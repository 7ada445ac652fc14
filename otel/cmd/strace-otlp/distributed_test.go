package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/contrib/instrumentation/net/http/otelhttp"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/propagation"

	simplerotel "simpler.dev/log/otel"
	"simpler.dev/log/otel/internal/otlptest"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// The distributed trace (SPEC §13, "Traces that cross processes"): a
// caller A sends a W3C traceparent to a service B, which logs, logs from
// another goroutine with the request's context, and calls a downstream
// C. B is a process of its own (this test binary started as it), A and C
// servers of the test, and what B exports live and what strace-otlp
// sends of its log arrive at the OpenTelemetry Collector's own receiver.

const (
	traceB         = "SLOGSIMPLER_TRACE_B"          // B's mode: otel (OpenTelemetry in B) or plain (the root module only)
	traceBDir      = "SLOGSIMPLER_TRACE_B_DIR"      // B's log directory
	traceBNext     = "SLOGSIMPLER_TRACE_B_NEXT"     // C's URL
	traceBEndpoint = "SLOGSIMPLER_TRACE_B_ENDPOINT" // the receiver, for live export (otel)

	callerHeader = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	callerTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan   = "00f067aa0ba902b7"
)

// serviceB is B: with OpenTelemetry it reads and writes the traceparent
// with OpenTelemetry's own propagator (otel), or through otelhttp's
// handler and transport (otelhttp), and exports live; plain, it uses
// spanattr's helpers and no OpenTelemetry at all (the bridge this
// package's import set is removed). It prints its address,
// serves until /quit, and exits 0 when everything was exported.
func serviceB(mode string) int {
	fail := func(err error) int { fmt.Fprintln(os.Stderr, "B:", err); return 1 }
	ctx := context.Background()
	var handlers []slog.Handler
	var live *simplerotel.Live
	otelIn := mode != "plain"
	if otelIn {
		endpoint := os.Getenv(traceBEndpoint)
		exp, err := simplerotel.NewSpanExporter(ctx, endpoint)
		if err != nil {
			return fail(err)
		}
		lexp, err := simplerotel.NewLogExporter(ctx, endpoint)
		if err != nil {
			return fail(err)
		}
		live, err = simplerotel.NewLive(exp, &simplerotel.LiveOptions{ServiceName: "b", Logs: lexp})
		if err != nil {
			return fail(err)
		}
		handlers = append(handlers, live.Handler())
	} else {
		spanattr.SetBridge(nil) // as in a program without the otel module
	}
	lg, err := slogsimpler.Setup(&slogsimpler.Options{Dir: os.Getenv(traceBDir), NoConsole: true, Handlers: handlers})
	if err != nil {
		return fail(err)
	}
	next := os.Getenv(traceBNext)
	prop := propagation.TraceContext{}
	client := http.DefaultClient
	if mode == "otelhttp" {
		// As a service instrumented with otelhttp runs: the propagator
		// set globally, the handler and the transport wrapped (no SDK
		// tracer: otelhttp's own spans are OpenTelemetry's no-op ones).
		otel.SetTextMapPropagator(prop)
		client = &http.Client{Transport: otelhttp.NewTransport(http.DefaultTransport)}
	}
	quit := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/quit", func(http.ResponseWriter, *http.Request) { close(quit) })
	handle := func(w http.ResponseWriter, r *http.Request) {
		ctx := r.Context()
		switch mode {
		case "otel":
			ctx = prop.Extract(ctx, propagation.HeaderCarrier(r.Header))
		case "plain":
			if tc, err := spanattr.ParseTraceparent(r.Header.Get("traceparent")); err == nil {
				ctx = spanattr.WithRemote(ctx, tc)
			}
		}
		ctx, inv := spanattr.NewInvocation(ctx, 0xb)
		defer inv.End()
		ctx, sp := spanattr.Start(ctx, "b.handle")
		defer sp.End()
		slog.InfoContext(ctx, "b.record")
		var wg sync.WaitGroup
		wg.Go(func() { slog.WarnContext(ctx, "b.child") })
		wg.Wait()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
		switch mode {
		case "otel":
			prop.Inject(ctx, propagation.HeaderCarrier(req.Header))
		case "plain":
			if tc, ok := spanattr.TraceContextFrom(ctx); ok {
				req.Header.Set("traceparent", tc.String())
			}
		}
		resp, err := client.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		_ = resp.Body.Close()
	}
	if mode == "otelhttp" {
		mux.Handle("/", otelhttp.NewHandler(http.HandlerFunc(handle), "b"))
	} else {
		mux.HandleFunc("/", handle)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return fail(err)
	}
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(ln) }()
	fmt.Println("listening", ln.Addr())
	<-quit
	_ = srv.Shutdown(ctx)
	if live != nil {
		if err := live.Shutdown(ctx); err != nil {
			return fail(err)
		}
		if c := live.Counts(); c.Dropped+c.LogsDropped != 0 {
			return fail(fmt.Errorf("live export lost spans or records: %+v", c))
		}
	}
	if err := lg.Close(); err != nil {
		return fail(err)
	}
	return 0
}

// TestDistributedTrace runs A → B → C on loopback, B as its own process,
// with OpenTelemetry in B (its propagator alone, or otelhttp) and without
// it.
func TestDistributedTrace(t *testing.T) {
	for _, mode := range []string{"otel", "otelhttp", "plain"} {
		t.Run(mode, func(t *testing.T) { distributed(t, mode) })
	}
}

func distributed(t *testing.T, mode string) {
	httpURL, _, traces, logs := otlptest.Both(t)
	got := make(chan string, 1)
	c := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got <- r.Header.Get("traceparent") }))
	defer c.Close()

	dir := filepath.Join(t.TempDir(), "logs")
	b := exec.Command(os.Args[0], "-test.run=^$")
	b.Env = append(os.Environ(), traceB+"="+mode, traceBDir+"="+dir, traceBNext+"="+c.URL, traceBEndpoint+"="+httpURL)
	var bErr lockedBuffer // read while B runs, when it fails to start
	b.Stderr = &bErr
	out, err := b.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, b.Start())
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = b.Wait()
		require.NoError(t, err, "B did not start: %s", bErr.String())
	}
	addr := "http://" + strings.TrimSpace(strings.TrimPrefix(line, "listening "))

	// A calls B with its traceparent.
	req, err := http.NewRequest(http.MethodGet, addr+"/", nil)
	require.NoError(t, err)
	req.Header.Set("traceparent", callerHeader)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	toC := <-got
	resp, err = http.Get(addr + "/quit")
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.NoError(t, b.Wait(), "B: %s", bErr.String())

	// C continues under a span of B's, in A's trace.
	cParts := strings.Split(toC, "-")
	require.Len(t, cParts, 4, "C received %q", toC)
	assert.Equal(t, callerTrace, cParts[1], "C is in A's trace")
	handleID := cParts[2]
	assert.NotEqual(t, callerSpan, handleID, "C continues under B, not beside it")

	// B's file: A's trace id on its records, for grep.
	files, err := filepath.Glob(filepath.Join(dir, "host.*.log"))
	require.NoError(t, err)
	require.Len(t, files, 1)
	text, err := os.ReadFile(files[0])
	require.NoError(t, err)
	for _, msg := range []string{"b.record", "b.child"} {
		assert.Regexp(t, `\] `+msg+` trace_id=`+callerTrace+` span_id=`+handleID+`\n`, string(text), "B's file holds A's trace id on %s", msg)
	}
	assert.Contains(t, string(text), " name=b.handle ", "B's span")
	assert.Regexp(t, ` name=b\.handle ts=\d+ dur=\d+ traceparent=`+callerHeader+`\n`, string(text), "its record states the caller's context")

	check := func(t *testing.T, how string) {
		t.Helper()
		spans := map[string]otlptest.Span{}
		for _, s := range otlptest.Spans(traces) {
			spans[s.Name] = s
		}
		handle, ok := spans["b.handle"]
		require.True(t, ok, "%s: b.handle sent: %v", how, spans)
		var root otlptest.Span
		for name, s := range spans {
			if strings.HasPrefix(name, "invocation ") {
				root = s
			}
		}
		assert.Equal(t, callerTrace, hex.EncodeToString(handle.TraceID[:]), "%s: b.handle in A's trace", how)
		assert.Equal(t, handleID, hex.EncodeToString(handle.ID[:]), "%s: the span C continues under is b.handle", how)
		assert.Equal(t, callerTrace, hex.EncodeToString(root.TraceID[:]), "%s: B's top span in A's trace", how)
		assert.Equal(t, callerSpan, hex.EncodeToString(root.Parent[:]), "%s: B's top span under A's", how)
		assert.Equal(t, root.ID, handle.Parent, "%s: b.handle under B's invocation", how)
		n := 0
		for _, r := range otlptest.Logs(logs) {
			if r.Body == "b.record" || r.Body == "b.child" {
				n++
				assert.Equal(t, callerTrace, hex.EncodeToString(r.TraceID[:]), "%s: %s in A's trace", how, r.Body)
				assert.Equal(t, handleID, hex.EncodeToString(r.SpanID[:]), "%s: %s in b.handle", how, r.Body)
				assert.NotContains(t, r.Attrs, "trace_id", "%s: the ids are the record's ids, not attributes", how)
			}
		}
		assert.Equal(t, 2, n, "%s: both records sent", how)
	}
	if mode != "plain" {
		t.Run("live", func(t *testing.T) { check(t, "live") })
	} else {
		assert.Empty(t, otlptest.Spans(traces), "nothing exported live without OpenTelemetry")
	}
	traces.Reset()
	logs.Reset()
	var o, e bytes.Buffer
	require.Equal(t, 0, run([]string{"--endpoint", httpURL, "--service-name", "b", dir}, nil, &o, &e), e.String())
	t.Run("from the log", func(t *testing.T) { check(t, "strace-otlp") })
}

// lockedBuffer is a bytes.Buffer safe to write from os/exec's copying
// goroutine and read from the test's.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
