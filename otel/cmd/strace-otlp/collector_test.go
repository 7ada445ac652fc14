package main

import (
	"bytes"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	collogspb "go.opentelemetry.io/proto/otlp/collector/logs/v1"
	coltracepb "go.opentelemetry.io/proto/otlp/collector/trace/v1"
	"google.golang.org/protobuf/proto"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
	"simpler.dev/log/otel/internal/otlptest"
)

// spansLog writes a log of one invocation of n spans: n+1 spans sent,
// the invocation's root included.
func spansLog(t *testing.T, n int) string {
	t.Helper()
	var b strings.Builder
	b.WriteString(otlptest.AnchorRecord(41, 1, anchorWall))
	for i := range n {
		b.WriteString(otlptest.SpanRecord(41, 7, 1, "chip.run.step", int64(100+i*10), 5, "", 0))
	}
	path := filepath.Join(t.TempDir(), "host.41.log")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	return path
}

// fakeCollector answers every OTLP/HTTP request with status and body
// (Content-Type ctype) and counts the requests.
func fakeCollector(t *testing.T, status int, ctype string, body []byte) (url string, requests *atomic.Int64) {
	t.Helper()
	requests = new(atomic.Int64)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		requests.Add(1)
		w.Header().Set("Content-Type", ctype)
		w.WriteHeader(status)
		_, _ = w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv.URL, requests
}

// TestCollectorErrorEscaped: a collector's error body reaches the
// terminal with its control bytes, escape sequences, bidi controls, line
// separators and invalid UTF-8 escaped, never raw.
func TestCollectorErrorEscaped(t *testing.T) {
	body := "\x1b[31mevil\x1b[0m\u202e\u2028\u0085\xff\r\nforged line\x07"
	url, requests := fakeCollector(t, http.StatusBadRequest, "text/plain", []byte(body))
	var out, errb bytes.Buffer
	code := run([]string{"--endpoint", url, "--signals", "traces", spansLog(t, 4)}, nil, &out, &errb)
	assert.Equal(t, 1, code)
	assert.Equal(t, int64(1), requests.Load())
	got := errb.String()
	assert.Contains(t, got, "0 of 5 spans")
	assert.Contains(t, got, `\x1b[31mevil\x1b[0m\u202e\u2028\u0085\xff\r\nforged line\a`)
	for _, raw := range []string{"\x1b", "\u202e", "\u2028", "\u0085", "\xff", "\r", "\a"} {
		assert.NotContains(t, got, raw, "%q raw on stderr", raw)
	}
	assert.Equal(t, 1, strings.Count(got, "\n"), "one line: the body cannot start another: %q", got)
}

// TestPartialSuccess: a collector that takes a batch but rejects part of
// it (OTLP partial success) is reported as what it is: how many were
// sent, how many it rejected and its message; exit status 1, since not
// everything placed was stored.
func TestPartialSuccess(t *testing.T) {
	resp, err := proto.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{
		RejectedSpans: 7, ErrorMessage: "7 spans too old \x1b[2J",
	}})
	require.NoError(t, err)
	for _, tt := range []struct {
		name     string
		spans    int // in the log; +1 sent for the invocation
		requests int64
		want     string
	}{
		{"one batch", 48, 1, "strace-otlp: 42 of 49 spans sent, 7 rejected by the collector: 7 spans too old \\x1b[2J"},
		{"three batches, each rejecting 7", 1200, 3, "strace-otlp: 1180 of 1201 spans sent, 21 rejected by the collector: 7 spans too old \\x1b[2J"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			url, requests := fakeCollector(t, http.StatusOK, "application/x-protobuf", resp)
			var out, errb bytes.Buffer
			code := run([]string{"--endpoint", url, "--signals", "traces", spansLog(t, tt.spans)}, nil, &out, &errb)
			assert.Equal(t, 1, code, "not everything was stored")
			assert.Equal(t, tt.requests, requests.Load(), "every batch sent: a partial success does not stop the export")
			assert.Contains(t, errb.String(), tt.want)
			assert.NotContains(t, errb.String(), "\x1b")
			assert.Empty(t, out.String())
		})
	}
}

// TestPartialSuccessWarning: a partial success that rejects nothing and
// says something is a warning; everything was sent, exit status 0.
func TestPartialSuccessWarning(t *testing.T) {
	resp, err := proto.Marshal(&coltracepb.ExportTraceServiceResponse{PartialSuccess: &coltracepb.ExportTracePartialSuccess{
		ErrorMessage: "sampling soon\u2028",
	}})
	require.NoError(t, err)
	url, _ := fakeCollector(t, http.StatusOK, "application/x-protobuf", resp)
	var out, errb bytes.Buffer
	assert.Equal(t, 0, run([]string{"--endpoint", url, "--signals", "traces", spansLog(t, 4)}, nil, &out, &errb), errb.String())
	assert.Contains(t, out.String(), "Sent 5 spans and 0 log records")
	assert.Contains(t, errb.String(), `warning: the collector took every one of the spans but said: sampling soon\u2028`)
}

// TestPartialSuccessLogs: the same for the logs signal, whose partial
// success counts rejected log records.
func TestPartialSuccessLogs(t *testing.T) {
	resp, err := proto.Marshal(&collogspb.ExportLogsServiceResponse{PartialSuccess: &collogspb.ExportLogsPartialSuccess{
		RejectedLogRecords: 3, ErrorMessage: "3 records too large",
	}})
	require.NoError(t, err)
	var b strings.Builder
	b.WriteString(otlptest.AnchorRecord(41, 1, anchorWall))
	for i := range 10 {
		r := envelope.Record{Header: envelope.Header{Mono: int64(100 + i), TID: 7, Level: levels.Info}, Message: "done"}
		var l envelope.Line
		l.Record(&r)
		b.Write(l.Finish())
	}
	path := filepath.Join(t.TempDir(), "host.41.log")
	require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o600))
	url, requests := fakeCollector(t, http.StatusOK, "application/x-protobuf", resp)
	var out, errb bytes.Buffer
	assert.Equal(t, 1, run([]string{"--endpoint", url, "--signals", "logs", path}, nil, &out, &errb))
	assert.Equal(t, int64(1), requests.Load())
	assert.Contains(t, errb.String(), "strace-otlp: 7 of 10 log records sent, 3 rejected by the collector: 3 records too large")
	assert.Empty(t, out.String())
}
