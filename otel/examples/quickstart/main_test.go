package main

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/otel/internal/otlptest"
)

func TestQuickstartExports(t *testing.T) {
	httpURL, grpcURL, sink, logs := otlptest.Both(t)
	for _, endpoint := range []string{httpURL, grpcURL} {
		sink.Reset()
		logs.Reset()
		var out, errb bytes.Buffer
		code := run([]string{"-endpoint", endpoint, "-dir", filepath.Join(t.TempDir(), "logs")}, &out, &errb)
		require.Equal(t, 0, code, errb.String())
		assert.Contains(t, out.String(), "exported to "+endpoint+": 48 spans, 19 log records; dropped: 0 spans, 0 log records")
		assert.Len(t, otlptest.Spans(sink), 48)
		assert.Len(t, otlptest.Logs(logs), 19)
	}
}

func TestQuickstartCollectorDown(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"-endpoint", "http://" + otlptest.FreeAddr(t), "-dir", filepath.Join(t.TempDir(), "logs")}, &out, &errb)
	assert.Equal(t, 1, code, "a run that lost spans says so")
	assert.Contains(t, out.String(), "exported to http://")
	assert.Contains(t, out.String(), ": 0 spans, 0 log records; dropped: 48 spans, ")
	assert.Contains(t, errb.String(), "OpenTelemetry spans or log records dropped", "the drop report reaches the console")
}
