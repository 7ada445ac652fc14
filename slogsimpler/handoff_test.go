package slogsimpler

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime"
	"simpler.dev/log/internal/testkit/logtest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
)

// TestHandoffWritesWhatTheCallerWould: records a running writer renders
// (plain ones, see internal/handoff) and records their callers render,
// mixed in one goroutine, come out byte for byte as a synchronous state
// writes them, in the order they were logged, with the same fitted and
// cut counts.
func TestHandoffWritesWhatTheCallerWould(t *testing.T) {
	huge := strings.Repeat("x", 1024)               // past handoff.MaxText: rendered by its caller
	long := strings.Repeat("y", envelope.MaxRecord) // the longest a plain record holds
	at := time.Date(2026, 12, 2, 6, 0, 0, 0, time.UTC)
	var pcs [1]uintptr
	runtime.Callers(1, pcs[:])
	rec := func(level slog.Level, msg string, attrs ...slog.Attr) slog.Record {
		r := slog.NewRecord(at, level, msg, pcs[0])
		r.AddAttrs(attrs...)
		at = at.Add(time.Microsecond)
		return r
	}
	type logged struct {
		with []slog.Attr
		r    slog.Record
	}
	var in []logged
	for i := range 50 {
		in = append(in,
			logged{nil, rec(slog.LevelInfo, "plain", slog.Int("i", i), slog.String("path", "/v1/items"))},
			logged{nil, rec(slog.LevelWarn, "an error", slog.Any("err", errors.New("boom")))},
			logged{nil, rec(slog.LevelWarn, "not plain", slog.Any("ids", []int{1, 2}))},
			logged{[]slog.Attr{slog.String("svc", "api")}, rec(slog.LevelInfo, "with attrs", slog.Bool("ok", true))},
			logged{nil, rec(slog.LevelInfo, "fitted", slog.String("sql", huge), slog.Int("attempt", 3))},
			logged{nil, rec(slog.LevelInfo, "fitted", slog.String("a", long), slog.String("b", long))},
			logged{nil, rec(slog.LevelInfo, huge)}, // cut: no attributes to fit
			logged{nil, rec(slog.LevelInfo, long)},
			logged{nil, rec(slog.LevelError, "flushed: rendered by its caller")}, // FlushLevel
		)
	}
	write := func(async bool) (string, Counts) {
		var buf lockedBuffer
		st, err := NewState(&StateOptions{Level: levels.Info, Output: &buf})
		require.NoError(t, err)
		if async {
			require.NoError(t, st.Start())
		}
		h := st.Handler()
		for _, l := range in {
			var hh slog.Handler = h
			if l.with != nil {
				hh = h.WithAttrs(l.with)
			}
			require.NoError(t, hh.Handle(context.Background(), l.r.Clone()))
		}
		require.NoError(t, st.Shutdown(logtest.Within(10*time.Second)))
		return buf.String(), st.Counts()
	}
	sync, sc := write(false)
	async, ac := write(true)
	// Each begins with a [CLOCK_ANCHOR] (spans are on at INFO): the
	// synchronous state's at its first record, the started one's at Start.
	sl, al := strings.SplitAfter(sync, "\n"), strings.SplitAfter(async, "\n")
	require.Len(t, sl, len(in)+2, "the synchronous state wrote %.600s", sync)
	require.Len(t, al, len(sl), "the started state wrote %.600s", async)
	for i := 1; i < len(sl); i++ {
		if !assert.Equal(t, sl[i], al[i], "line %d", i) {
			break
		}
	}
	assert.EqualValues(t, 100, sc.Fitted)
	assert.EqualValues(t, 100, sc.Cut)
	assert.Equal(t, [2]uint64{sc.Fitted, sc.Cut}, [2]uint64{ac.Fitted, ac.Cut}, "fitted and cut")
	assert.Zero(t, ac.Dropped)
}

// TestHandoffThroughQuiesce: goroutines logging plain and other records
// while the state is quiesced, started again and closed keep each
// goroutine's records in its order, and every record is written or
// counted.
func TestHandoffThroughQuiesce(t *testing.T) {
	const goroutines, each = 8, 1500
	var buf lockedBuffer
	st, err := NewState(&StateOptions{Level: levels.Info, Output: &buf})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	l := slog.New(st.Handler())
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Go(func() {
			for i := range each {
				if i%10 == 0 {
					l.Info("r", "g", g, "seq", i, "ids", []int{g, i}) // rendered in the call
				} else {
					l.Info("r", "g", g, "seq", i) // by the writer while it runs
				}
			}
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	for switches := 0; ; switches++ {
		select {
		case <-done:
		default:
			require.NoError(t, st.Quiesce(logtest.Within(5*time.Second)))
			require.NoError(t, st.Start())
			continue
		}
		t.Logf("%d quiesces while logging", switches)
		break
	}
	require.NoError(t, st.Shutdown(logtest.Within(5*time.Second)))
	c := st.Counts()
	assert.Zero(t, c.Pending)
	lines := parseLines(t, []byte(buf.String()))
	assert.EqualValues(t, len(lines), c.Written, "lines against Counts().Written")
	next := make([]int, goroutines)
	seen := 0
	for _, p := range lines {
		if p.Msg != "r" {
			continue // the [CLOCK_ANCHOR]
		}
		var g, seq int
		_, err := fmt.Sscanf(p.Attrs["g"]+" "+p.Attrs["seq"], "%d %d", &g, &seq)
		require.NoError(t, err, "%q", p.Raw)
		require.GreaterOrEqual(t, seq, next[g], "goroutine %d: record %d after %d", g, seq, next[g]-1)
		next[g] = seq + 1
		seen++
	}
	assert.EqualValues(t, goroutines*each, uint64(seen)+c.Dropped, "records written and dropped: %+v", c)
}
