package main

import (
	"context"
	"io"
	"net"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// TestServeAndShutDown runs the service on a loopback listener, sends a
// few requests, shuts it down as a signal would, and reads the log.
func TestServeAndShutDown(t *testing.T) {
	dir := t.TempDir()
	st, err := slogsimpler.NewState(nil)
	require.NoError(t, err)
	var console strings.Builder
	lg, err := slogsimpler.Setup(&slogsimpler.Options{Dir: dir, Level: levels.Debug, Console: &console, State: st})
	require.NoError(t, err)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln, lg.Logger) }()

	base := "http://" + ln.Addr().String()
	for _, tt := range []struct {
		path   string
		status int
	}{{"/items/7", 200}, {"/items/8", 200}, {"/items/x", 400}, {"/healthz", 200}, {"/nope", 404}} {
		resp, err := http.Get(base + tt.path)
		require.NoError(t, err)
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		assert.EqualValues(t, tt.status, resp.StatusCode, "%s: status %d, want %d", tt.path, resp.StatusCode, tt.status)
	}
	cancel()
	require.EqualValues(t, nil, <-done)
	require.NoError(t, lg.Close())
	b, err := os.ReadFile(st.Path())
	require.NoError(t, err)
	log := string(b)
	assert.EqualValues(t, 5, strings.Count(log, "name=http.request "))
	assert.EqualValues(t, 2, strings.Count(log, "name=http.items.lookup "))
	assert.True(t, regexp.MustCompile(`\] request req\.method=GET req\.path=/items/x req\.remote=127\.0\.0\.1:\d+ status=400 took=\S+ inv=\d+`).MatchString(log), "no request record for /items/x:\n%s", log)
	assert.False(t, !strings.Contains(log, "shutting down") || strings.Contains(log, "[HOSTLOG_DROPS]"), "shutdown not logged or records dropped:\n%s", log)
}
