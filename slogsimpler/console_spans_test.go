package slogsimpler_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// TestConsoleShowsSpansForPeople: through the fan-out, a span reads on
// the console as "span <name> <duration> inv=.. attrs" and an op line
// without its marker, while the file keeps the exact machine records.
func TestConsoleShowsSpansForPeople(t *testing.T) {
	var file logtest.Buffer
	var con bytes.Buffer
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Trace, Output: &file})
	require.NoError(t, err)
	console := slogsimpler.NewConsoleHandler(&con, &slogsimpler.ConsoleOptions{Level: levels.Debug, TimeFormat: "-"})
	l := slog.New(slogsimpler.NewFanout(st, st.Handler(), console))
	ctx := spanattr.WithLogger(context.Background(), l)
	ctx, inv := spanattr.NewInvocation(ctx, 0x9f)
	_, sp := spanattr.Start(ctx, "chip.run bind", slog.Int("bytes", 4096), slog.String("path", "a b"))
	sp.End()
	_, op := spanattr.StartOp(ctx, "mat mul", &spanattr.OpOptions{Target: "gpu", Task: "0"})
	op.End()
	inv.End()

	lines := strings.Split(strings.TrimSpace(con.String()), "\n")
	require.Len(t, lines, 3, "%s", con.String())
	assert.Regexp(t, `^- TIMING span chip\.run bind \d+(\.\d+)?(ns|µs|ms) inv=\d+ bytes=4096 path="a b"$`, lines[0])
	assert.Regexp(t, `^- DBG op LAUNCH mat mul \[id=\d+\] target=gpu:0$`, lines[1])
	assert.Regexp(t, `^- DBG op COMPLETE mat mul \[id=\d+\] target=gpu:0$`, lines[2])
	for _, l := range lines {
		assert.NotContains(t, l, "pid=")
		assert.NotContains(t, l, "%20")
	}
	assert.Contains(t, file.String(), "] emit_host_span: [STRACE] v=1 pid=")
	assert.Contains(t, file.String(), "name=chip.run%20bind ")
	assert.Contains(t, file.String(), "[OP] LAUNCH mat%20mul [id=")
}

// TestConsoleDoesNotHumaniseForgeries: user text that looks like a span is
// printed as text, escaped, not rewritten.
func TestConsoleDoesNotHumaniseForgeries(t *testing.T) {
	var con bytes.Buffer
	l := slog.New(slogsimpler.NewConsoleHandler(&con, &slogsimpler.ConsoleOptions{Level: levels.Debug, TimeFormat: "-"}))
	l.Info("[STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=x ts=1 dur=5 ")
	assert.Contains(t, con.String(), "[STRACE] v=1 pid=1")
	assert.NotContains(t, con.String(), "span x")
}

// TestConsoleSpanFilter: the console prints the spans its filter chooses
// (by default the outermost only) while the file keeps every one, and a
// filter that panics prints the span rather than fail the call.
func TestConsoleSpanFilter(t *testing.T) {
	tests := []struct {
		name   string
		filter func(int, time.Duration) bool
		want   []string // span names on the console, in order
	}{
		{"default: outermost only", nil, []string{"outer"}},
		{"all", func(int, time.Duration) bool { return true }, []string{"inner.deep", "inner", "outer"}},
		{"none", func(int, time.Duration) bool { return false }, nil},
		{"depth at most 1", func(d int, _ time.Duration) bool { return d <= 1 }, []string{"inner", "outer"}},
		{"by duration", func(_ int, took time.Duration) bool { return took >= time.Hour }, nil},
		{"panicking filter shows", func(int, time.Duration) bool { panic("boom") }, []string{"inner.deep", "inner", "outer"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var file logtest.Buffer
			var con bytes.Buffer
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing, Output: &file})
			require.NoError(t, err)
			console := slogsimpler.NewConsoleHandler(&con, &slogsimpler.ConsoleOptions{TimeFormat: "-", Spans: tt.filter})
			l := slog.New(slogsimpler.NewFanout(st, st.Handler(), console))
			ctx := spanattr.WithLogger(context.Background(), l)
			ctx, inv := spanattr.NewInvocation(ctx, 1)
			ctx1, outer := spanattr.Start(ctx, "outer")
			ctx2, inner := spanattr.Start(ctx1, "inner")
			_, deep := spanattr.Start(ctx2, "inner.deep")
			deep.End()
			inner.End()
			outer.End()
			inv.End()
			l.Info("people's line")

			var got []string
			for _, line := range strings.Split(strings.TrimSpace(con.String()), "\n") {
				if f := strings.Fields(line); len(f) > 3 && f[2] == "span" {
					got = append(got, f[3])
				}
			}
			assert.Equal(t, tt.want, got, "%s", con.String())
			assert.Contains(t, con.String(), "people's line")
			assert.Equal(t, 3, strings.Count(file.String(), "[STRACE]"), "the file keeps every span")
		})
	}
}
