package slogsimpler

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
	"simpler.dev/log/spanattr"
)

// rollupConsole is a console on a buffer whose rollup runs on a clock the
// test moves and whose window ends only when the test says (tick).
func rollupConsole(t *testing.T, spans func(int, time.Duration) bool) (*bytes.Buffer, *ConsoleHandler, *time.Time) {
	t.Helper()
	var con bytes.Buffer
	c := newConsole(&con, ConsoleOptions{Level: levels.Info, TimeFormat: "-", Spans: spans}, true)
	clock := time.Unix(1_000_000, 0)
	if c.roll != nil {
		c.roll.now = func() time.Time { return clock }
		c.roll.after = func(time.Duration, func()) *time.Timer { return time.NewTimer(time.Hour) }
	}
	return &con, c, &clock
}

// consoleLines returns the lines printed since the last call.
func consoleLines(con *bytes.Buffer) []string {
	s := strings.TrimSpace(con.String())
	con.Reset()
	if s == "" {
		return nil
	}
	return strings.Split(s, "\n")
}

func TestConsoleRollup(t *testing.T) {
	con, c, clock := rollupConsole(t, nil)
	l := slog.New(c)
	ctx := spanattr.WithLogger(context.Background(), l)
	span := func(name string, dur time.Duration) {
		spanattr.Emit(ctx, name, envelope.Mono(time.Now()), dur)
	}

	t.Run("a few of a name print, one by one", func(t *testing.T) {
		for range 3 {
			span("chip.run", 2*time.Second)
		}
		assert.Len(t, consoleLines(con), 3)
		*clock = clock.Add(1500 * time.Millisecond)
		c.roll.tick()
		assert.Empty(t, consoleLines(con), "nothing rolled up, no summary")
	})

	t.Run("many of a name roll up into one line a second", func(t *testing.T) {
		for range rollupShown + 2 {
			span("http.request", 3*time.Millisecond)
		}
		lines := consoleLines(con)
		require.Len(t, lines, rollupShown, "%q", lines)
		for _, line := range lines {
			assert.Contains(t, line, "TIMING span http.request 3ms")
		}
		*clock = clock.Add(time.Second)
		c.roll.tick()
		assert.Equal(t, []string{"- TIMING spans http.request ×10 p50 3ms p99 3ms max 3ms (last 1s)"}, consoleLines(con))
	})

	t.Run("while busy only the summary prints, and slow or failed spans at once", func(t *testing.T) {
		for range 20 {
			span("http.request", 3*time.Millisecond)
		}
		assert.Empty(t, consoleLines(con), "a busy name prints nothing alone")
		span("http.request", 40*time.Millisecond) // ten times the median and more
		assert.Equal(t, []string{"- TIMING span http.request 40ms"}, consoleLines(con))

		sctx, sp := spanattr.Start(ctx, "http.request")
		l.ErrorContext(sctx, "upstream failed")
		sp.End()
		lines := consoleLines(con)
		require.Len(t, lines, 2, "%q", lines)
		assert.Contains(t, lines[0], "ERR upstream failed")
		assert.Regexp(t, `TIMING span http\.request \S+ failed$`, lines[1], "a failed span says so")

		*clock = clock.Add(time.Second)
		c.roll.tick()
		assert.Equal(t, []string{"- TIMING spans http.request ×22 p50 3ms p99 40ms max 40ms (last 1s)"}, consoleLines(con))
	})

	t.Run("a name that quiets down prints one by one again", func(t *testing.T) {
		span("http.request", time.Millisecond)
		span("http.request", time.Millisecond)
		assert.Empty(t, consoleLines(con), "still rolled up: it was busy the second before")
		*clock = clock.Add(time.Second)
		c.roll.tick()
		assert.Equal(t, []string{"- TIMING spans http.request ×2 p50 1ms p99 1ms max 1ms (last 1s)"}, consoleLines(con))
		span("http.request", time.Millisecond)
		assert.Len(t, consoleLines(con), 1, "a quiet second: it prints alone")
	})

	t.Run("Close prints the counts of the second so far", func(t *testing.T) {
		for range rollupShown + 2 {
			span("rpc", time.Millisecond)
		}
		assert.Len(t, consoleLines(con), rollupShown)
		*clock = clock.Add(250 * time.Millisecond)
		c.roll.flush()
		assert.Equal(t, []string{"- TIMING spans rpc ×10 p50 1ms p99 1ms max 1ms (last 250ms)"}, consoleLines(con))
	})

	t.Run("a name with control bytes is escaped in the summary", func(t *testing.T) {
		for range rollupShown + 1 {
			span("evil\x1b[2Jname", time.Millisecond)
		}
		consoleLines(con)
		c.roll.flush()
		lines := consoleLines(con)
		require.Len(t, lines, 1)
		assert.NotContains(t, lines[0], "\x1b")
	})
}

// TestConsoleRollupOffWithAFilter: a Spans filter of the program's
// chooses span by span; nothing rolls up.
func TestConsoleRollupOffWithAFilter(t *testing.T) {
	con, c, _ := rollupConsole(t, func(int, time.Duration) bool { return true })
	require.Nil(t, c.roll)
	ctx := spanattr.WithLogger(context.Background(), slog.New(c))
	for range 10 {
		spanattr.Emit(ctx, "http.request", envelope.Mono(time.Now()), time.Millisecond)
	}
	assert.Len(t, consoleLines(con), 10)
}
