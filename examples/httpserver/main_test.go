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

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// TestServeAndShutDown runs the service on a loopback listener, sends a
// few requests, shuts it down as a signal would, and reads the log.
func TestServeAndShutDown(t *testing.T) {
	dir := t.TempDir()
	st, err := slogsimpler.NewState(nil)
	if err != nil {
		t.Fatal(err)
	}
	var console strings.Builder
	lg, err := slogsimpler.Setup(&slogsimpler.SetupOptions{Dir: dir, Level: levels.Debug, Console: &console, State: st})
	if err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serve(ctx, ln, lg.Logger) }()

	base := "http://" + ln.Addr().String()
	for _, tt := range []struct {
		path   string
		status int
	}{{"/items/7", 200}, {"/items/8", 200}, {"/items/x", 400}, {"/healthz", 200}, {"/nope", 404}} {
		resp, err := http.Get(base + tt.path)
		if err != nil {
			t.Fatal(err)
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d", tt.path, resp.StatusCode, tt.status)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("serve: %v", err)
	}
	if err := lg.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(st.Path())
	if err != nil {
		t.Fatal(err)
	}
	log := string(b)
	if n := strings.Count(log, "name=http.request "); n != 5 {
		t.Errorf("%d request spans, want 5", n)
	}
	if n := strings.Count(log, "name=http.items.lookup "); n != 2 {
		t.Errorf("%d lookup spans, want 2", n)
	}
	if !regexp.MustCompile(`\] request req\.method=GET req\.path=/items/x req\.remote=127\.0\.0\.1:\d+ status=400 took=\S+ inv=\d+`).MatchString(log) {
		t.Errorf("no request record for /items/x:\n%s", log)
	}
	if !strings.Contains(log, "shutting down") || strings.Contains(log, "[HOSTLOG_DROPS]") {
		t.Errorf("shutdown not logged or records dropped:\n%s", log)
	}
}
