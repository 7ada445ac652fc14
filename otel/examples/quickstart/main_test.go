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
	httpURL, grpcURL, sink := otlptest.Receiver(t)
	for _, endpoint := range []string{httpURL, grpcURL} {
		sink.Reset()
		var out, errb bytes.Buffer
		code := run([]string{"-endpoint", endpoint, "-dir", filepath.Join(t.TempDir(), "logs")}, &out, &errb)
		require.Equal(t, 0, code, errb.String())
		assert.Contains(t, out.String(), "spans exported to "+endpoint+": 48, dropped: 0")
		assert.Len(t, otlptest.Spans(sink), 48)
	}
}

func TestQuickstartCollectorDown(t *testing.T) {
	var out, errb bytes.Buffer
	code := run([]string{"-endpoint", "http://" + otlptest.FreeAddr(t), "-dir", filepath.Join(t.TempDir(), "logs")}, &out, &errb)
	assert.Equal(t, 1, code, "a run that lost spans says so")
	assert.Contains(t, out.String(), "spans exported to http://")
	assert.Contains(t, out.String(), ": 0, dropped: 48")
	assert.Contains(t, errb.String(), "OpenTelemetry spans dropped", "the drop report reaches the console")
}
