package slogsimpler_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"os"
	"strings"
	"testing"
	"testing/slogtest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/atrace"
	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// redact hides the value of every attribute named "password", at any
// depth, and drops every attribute named "drop".
func redact(groups []string, a slog.Attr) slog.Attr {
	switch a.Key {
	case "password":
		return slog.String(a.Key, "REDACTED")
	case "drop":
		return slog.Attr{}
	}
	return a
}

func TestReplaceAttrSlogtest(t *testing.T) {
	var buf bytes.Buffer
	h := slogsimpler.WithReplaceAttr(slog.NewJSONHandler(&buf, nil), func(_ []string, a slog.Attr) slog.Attr { return a })
	err := slogtest.TestHandler(h, func() []map[string]any { return parseJSONLines(t, buf.Bytes()) })
	require.NoError(t, err)
}

// TestReplaceAttrReachesNoDestination: through Setup, a redacted value is
// in neither the file, the console nor the trace recorder's dump; the
// groups a value is in are passed; spans keep their trust.
func TestReplaceAttrReachesNoDestination(t *testing.T) {
	old := slog.Default()
	defer slog.SetDefault(old)
	dir := t.TempDir()
	st, err := slogsimpler.NewState(nil)
	require.NoError(t, err)
	rec, err := atrace.New(&atrace.Options{State: st, Root: dir})
	require.NoError(t, err)
	var con bytes.Buffer
	var seen [][]string
	lg, err := slogsimpler.Setup(&slogsimpler.Options{
		Dir: dir, State: st, Console: &con, ConsoleLevel: levels.Debug, Level: levels.Debug,
		Handlers: []slog.Handler{rec},
		ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {
			if a.Key == "password" {
				seen = append(seen, groups)
			}
			return redact(groups, a)
		},
	})
	require.NoError(t, err)
	slog.With("password", "hunter2").WithGroup("db").Info("login", "password", "hunter3", "drop", "x", slog.Group("req", "password", "hunter4"))
	ctx := spanattr.WithLogger(context.Background(), slog.Default())
	_, sp := spanattr.Start(ctx, "stage")
	sp.End()
	dump, err := rec.Dump()
	require.NoError(t, err)
	require.NoError(t, lg.Close())
	file := readFile(t, st.Path())
	ring := readFile(t, dump+"/schedule_tracer_host.txt")
	for name, out := range map[string]string{"file": file, "console": con.String(), "recorder": ring} {
		assert.NotContains(t, out, "hunter", name)
		assert.NotContains(t, out, "drop=", name)
		assert.Equal(t, 3, strings.Count(out, "REDACTED"), name)
	}
	assert.Equal(t, [][]string{nil, {"db"}, {"db", "req"}}, seen)
	assert.Contains(t, file, "] emit_host_span: [STRACE] v=1 ", "a span's trust survives the rewrite")
}

func BenchmarkReplaceAttr(b *testing.B) {
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Debug, Destination: sink.Writer(discard{})})
	require.NoError(b, err)
	for _, tt := range []struct {
		name string
		f    func([]string, slog.Attr) slog.Attr
	}{{"nil", nil}, {"redact", redact}} {
		b.Run(tt.name, func(b *testing.B) {
			l := slog.New(slogsimpler.WithReplaceAttr(st.Handler(), tt.f))
			b.ReportAllocs()
			for b.Loop() {
				l.Info("login", "user", "ada", "password", "hunter2", "status", 200)
			}
		})
	}
}

func parseJSONLines(t *testing.T, b []byte) []map[string]any {
	t.Helper()
	var ms []map[string]any
	for _, line := range bytes.Split(bytes.TrimSpace(b), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		var m map[string]any
		require.NoError(t, json.Unmarshal(line, &m))
		ms = append(ms, m)
	}
	return ms
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return string(b)
}

type discard struct{}

func (discard) Write(p []byte) (int, error) { return len(p), nil }
