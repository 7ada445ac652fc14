package spanattr

import (
	"context"
	"encoding/hex"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"simpler.dev/log/internal/testkit/logtest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// The caller's traceparent in the W3C recommendation's example.
const (
	callerHeader = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	callerTrace  = "4bf92f3577b34da6a3ce929d0e0e4736"
	callerSpan   = "00f067aa0ba902b7"
)

func TestParseTraceparent(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		want     string // String() of the result; "" for an error
	}{
		{"the recommendation's example", callerHeader, callerHeader},
		{"not sampled", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00"},
		{"spaces around", " \t" + callerHeader + " ", callerHeader},
		{"unknown flags dropped", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-ff", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03"},
		{"a later version with more fields", "cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-what-the-future-holds", callerHeader},
		{"a later version, exactly four fields", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", callerHeader},
		{"version ff", "ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", ""},
		{"version 00 with more fields", callerHeader + "-x", ""},
		{"a later version glued", "01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01x", ""},
		{"upper-case hex", "00-4BF92F3577B34DA6A3CE929D0E0E4736-00F067AA0BA902B7-01", ""},
		{"zero trace id", "00-00000000000000000000000000000000-00f067aa0ba902b7-01", ""},
		{"zero span id", "00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01", ""},
		{"short", "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-1", ""},
		{"empty", "", ""},
		{"dashes moved", "00-4bf92f3577b34da6a3ce929d0e0e473-600f067aa0ba902b7-01", ""},
		{"not hex", "00-4bf92f3577b34da6a3ce929d0e0e473g-00f067aa0ba902b7-01", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			tc, err := ParseTraceparent(tt.in)
			if tt.want == "" {
				require.ErrorIs(t, err, ErrBadTraceparent)
				assert.False(t, tc.valid())
				return
			}
			require.NoError(t, err)
			assert.Equal(t, tt.want, tc.String())
		})
	}
}

func FuzzParseTraceparent(f *testing.F) {
	f.Add(callerHeader)
	f.Add("cc-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x")
	f.Add("00-00000000000000000000000000000000-00f067aa0ba902b7-01")
	f.Fuzz(func(t *testing.T, in string) {
		tc, err := ParseTraceparent(in)
		if err != nil {
			require.ErrorIs(t, err, ErrBadTraceparent)
			return
		}
		require.True(t, tc.valid())
		again, err := ParseTraceparent(tc.String())
		require.NoError(t, err, "what String writes is read back")
		assert.Equal(t, tc, again)
	})
}

// service is B of the scenario, with the root module alone: it
// reads the caller's traceparent, joins its trace, logs a record and one
// from another goroutine with the request's context, and calls the next
// service with a traceparent naming its span.
func service(logger *slog.Logger, next string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		ctx := WithLogger(r.Context(), logger)
		if tc, err := ParseTraceparent(r.Header.Get("traceparent")); err == nil {
			ctx = WithRemote(ctx, tc)
		}
		ctx, inv := NewInvocation(ctx, 0xb)
		defer inv.End()
		ctx, sp := Start(ctx, "b.handle")
		defer sp.End()
		logger.InfoContext(ctx, "b.record")
		var wg sync.WaitGroup
		wg.Go(func() { logger.WarnContext(ctx, "b.child") })
		wg.Wait()
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, next, nil)
		if tc, ok := TraceContextFrom(ctx); ok {
			req.Header.Set("traceparent", tc.String())
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		_ = resp.Body.Close()
	}
}

// TestJoinsCallersTrace is the distributed trace with the root module
// only: A calls B with a traceparent, B calls C. B's outermost span
// states the caller's context, its records carry A's trace id and their
// span's id, and C receives a traceparent naming B's span in A's trace.
func TestJoinsCallersTrace(t *testing.T) {
	var buf lockedBuffer
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Output: &buf})
	require.NoError(t, err)
	logger := slog.New(st.Handler())
	got := make(chan string, 1)
	c := httptest.NewServer(http.HandlerFunc(func(_ http.ResponseWriter, r *http.Request) { got <- r.Header.Get("traceparent") }))
	defer c.Close()
	b := httptest.NewServer(service(logger, c.URL))
	defer b.Close()

	req, err := http.NewRequest(http.MethodGet, b.URL, nil)
	require.NoError(t, err)
	req.Header.Set("traceparent", callerHeader)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	require.NoError(t, resp.Body.Close())
	require.Equal(t, http.StatusOK, resp.StatusCode)
	require.NoError(t, st.Flush(logtest.Within(time.Second)))

	var handle string
	records := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		switch {
		case strings.Contains(line, " name=b.handle "):
			handle = line
		case strings.Contains(line, "] b."):
			records[strings.Fields(line[strings.Index(line, "] b.")+2:])[0]] = line
		}
	}
	require.NotEmpty(t, handle, buf.String())
	body := handle[strings.Index(handle, "[STRACE]"):]
	s, attrs, err := envelope.ParseSpan([]byte(body))
	require.NoError(t, err)
	assert.Equal(t, "traceparent="+callerHeader, string(attrs), "the outermost span states the caller's context")
	_, id := s.IDs(st.Run().ID)
	spanID := hex.EncodeToString(id[:])

	assert.Equal(t, "00-"+callerTrace+"-"+spanID+"-01", <-got, "C continues under b.handle, in A's trace")
	for _, name := range []string{"b.record", "b.child"} {
		require.Contains(t, records, name)
		assert.True(t, strings.HasSuffix(records[name], " trace_id="+callerTrace+" span_id="+spanID),
			"%s carries A's trace and its span, last: %s", name, records[name])
	}
}

// TestNoTraceNoBytes: without a caller's trace, spans and records are
// written as before: no traceparent=, no trace_id=.
func TestNoTraceNoBytes(t *testing.T) {
	logger, buf, st := newLogger(t, levels.Info)
	ctx, inv := NewInvocation(WithLogger(context.Background(), logger), 1)
	ctx, sp := Start(ctx, "plain", slog.Int("k", 1))
	logger.InfoContext(ctx, "in the span", "k", 2)
	sp.End()
	inv.End()
	require.NoError(t, st.Flush(logtest.Within(time.Second)))
	out := buf.String()
	assert.NotContains(t, out, "traceparent=")
	assert.NotContains(t, out, "trace_id=")
	assert.Contains(t, out, " name=plain ")
	assert.Contains(t, out, "] in the span k=2\n")
}

// TestTraceContextFrom: what a downstream call continues, for each kind
// of context.
func TestTraceContextFrom(t *testing.T) {
	logger, _, st := newLogger(t, levels.Timing)
	base := WithLogger(context.Background(), logger)
	caller, err := ParseTraceparent(callerHeader)
	require.NoError(t, err)

	_, ok := TraceContextFrom(base)
	assert.False(t, ok, "a logger alone is in no trace")
	_, ok = TraceContextFrom(context.Background())
	assert.False(t, ok)

	remote := WithRemote(base, caller)
	tc, ok := TraceContextFrom(remote)
	require.True(t, ok)
	assert.Equal(t, caller, tc, "before any span, the caller's own context goes on")
	assert.Equal(t, base, WithRemote(base, TraceContext{}), "an invalid context changes nothing")

	ictx, inv := NewInvocation(remote, 7)
	defer inv.End()
	tc, ok = TraceContextFrom(ictx)
	require.True(t, ok)
	wantTrace, invID := (&envelope.Span{PID: st.Run().PID, Inv: inv.ID(), Depth: -1}).IDs(st.Run().ID)
	assert.Equal(t, caller.TraceID, tc.TraceID, "a joined invocation is in the caller's trace")
	assert.Equal(t, invID, tc.SpanID)
	assert.Equal(t, byte(1), tc.Flags, "the caller's flags go on")

	own, own2 := NewInvocation(base, 8)
	defer own2.End()
	tc, ok = TraceContextFrom(own)
	require.True(t, ok)
	wantTrace, _ = (&envelope.Span{PID: st.Run().PID, Inv: own2.ID(), Depth: -1}).IDs(st.Run().ID)
	assert.Equal(t, wantTrace, tc.TraceID, "an invocation that joined nothing has its own, derived")

	top, sp := Start(base, "outside")
	defer sp.End()
	tc, ok = TraceContextFrom(top)
	require.True(t, ok)
	rec := sp.rec
	tid, sid := rec.IDs(st.Run().ID)
	assert.Equal(t, TraceContext{TraceID: tid, SpanID: sid, Flags: 1}, tc, "a span outside any invocation roots a trace of its own")
}

// TestStartsStrictlyIncrease: two spans one goroutine starts never share
// a start, whatever the clock's resolution, so their ids differ.
func TestStartsStrictlyIncrease(t *testing.T) {
	logger, _, _ := newLogger(t, levels.Timing)
	ctx := WithLogger(context.Background(), logger)
	last := int64(-1)
	ids := map[[8]byte]bool{}
	for range 10000 {
		_, sp := Start(ctx, "tight")
		require.Greater(t, sp.rec.TS, last)
		last = sp.rec.TS
		_, id := sp.rec.IDs("run")
		ids[id] = true
		sp.End()
	}
	assert.Len(t, ids, 10000)
}

// TestJoinedRecordFitted: a record too long for the bound keeps its
// trace ids whole when it is fitted, with or without other attributes.
func TestJoinedRecordFitted(t *testing.T) {
	logger, buf, st := newLogger(t, levels.Info)
	caller, err := ParseTraceparent(callerHeader)
	require.NoError(t, err)
	ctx, inv := NewInvocation(WithRemote(WithLogger(context.Background(), logger), caller), 1)
	defer inv.End()
	long := strings.Repeat("m", 700)
	logger.InfoContext(ctx, long, "v", strings.Repeat("v", 700))
	logger.InfoContext(ctx, long)
	require.NoError(t, st.Flush(logtest.Within(time.Second)))
	var lines []string
	for _, l := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		if strings.Contains(l, "] mmm") {
			lines = append(lines, l)
		}
	}
	require.Len(t, lines, 2)
	for _, l := range lines {
		assert.LessOrEqual(t, len(l)+1, envelope.MaxRecord)
		assert.Regexp(t, ` trace_id=`+callerTrace+` span_id=[0-9a-f]{16}$`, l)
	}
}
