package simplerotel

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/otel/sdk/resource"
	"go.opentelemetry.io/otel/trace"

	"simpler.dev/log/levels"
	"simpler.dev/log/otel/internal/otlptest"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
	"simpler.dev/log/strace"
)

// runRecord is the [HOSTLOG_RUN] a file of run id of pid starts with.
func runRecord(pid int64, id string, start int64) string {
	return fmt.Sprintf("[mono_ns=1][T0x0][INFO] host_log_run: [HOSTLOG_RUN] v=1 pid=%d run=%s start_ns=%d\n", pid, id, start)
}

// runLog is a file one run of pid 1 wrote: n invocations of two spans
// and a record each.
func runLog(id string, start int64, n int) string {
	var b strings.Builder
	if id != "" {
		b.WriteString(runRecord(1, id, start))
	}
	b.WriteString(otlptest.AnchorRecord(1, 0, start))
	for inv := uint64(1); inv <= uint64(n); inv++ {
		ts := int64(inv) * 1000
		b.WriteString(span(1, inv, 1, "db.query", ts+10, 100))
		fmt.Fprintf(&b, "[mono_ns=%d][T0x1][INFO] main.serve: [main.go:9] served\n", ts+50)
		b.WriteString(span(1, inv, 0, "http.request", ts, 500))
	}
	return b.String()
}

func instanceID(r *resource.Resource) string {
	v, _ := r.Set().Value("service.instance.id")
	return v.AsString()
}

// TestRunsAreInstances: two runs with one pid in one log set (two
// containers' pid 1 on a shared volume, or a restart) are two service
// instances: each run's spans and records carry its service.instance.id,
// and no trace holds spans of both, though their inv numbers collide. A
// log from before runs were marked has no instance id, as before.
func TestRunsAreInstances(t *testing.T) {
	const a, b = "aaaaaaaa-0000-4000-8000-000000000001", "bbbbbbbb-0000-4000-8000-000000000002"
	p := &strace.Parser{ReadOptions: strace.ReadOptions{KeepRecords: levels.Info}}
	for _, text := range []string{runLog(a, 1e18, 5), runLog(b, 1e18+1e9, 5)} {
		require.NoError(t, p.Read(strings.NewReader(text)))
	}
	c := Convert([]strace.HostLog{{Label: "h", Parser: p}}, nil)
	require.Len(t, c.Spans, 2*5*3, "two runs of five invocations: a root and two spans each")
	runsOf := map[trace.TraceID]map[string]bool{}
	for _, s := range c.Spans {
		id := instanceID(s.Resource())
		require.Contains(t, []string{a, b}, id, "%s", s.Name())
		if runsOf[s.SpanContext().TraceID()] == nil {
			runsOf[s.SpanContext().TraceID()] = map[string]bool{}
		}
		runsOf[s.SpanContext().TraceID()][id] = true
		pid, _ := s.Resource().Set().Value("process.pid")
		assert.Equal(t, int64(1), pid.AsInt64(), "the real pid")
	}
	assert.Len(t, runsOf, 10, "one trace per run and invocation")
	for tr, ids := range runsOf {
		assert.Len(t, ids, 1, "trace %s holds spans of one run", tr)
	}
	require.Len(t, c.Records, 10)
	for _, r := range c.Records {
		id := instanceID(r.Resource())
		assert.Contains(t, []string{a, b}, id)
		assert.True(t, runsOf[r.TraceID()][id], "a record is in a trace of its own run")
	}

	// A log from before runs were marked: one process, no instance id.
	q := &strace.Parser{}
	require.NoError(t, q.Read(strings.NewReader(runLog("", 1e18, 2))))
	old := Convert([]strace.HostLog{{Label: "h", Parser: q}}, nil)
	require.NotEmpty(t, old.Spans)
	for _, s := range old.Spans {
		assert.Empty(t, instanceID(s.Resource()))
	}
}

// TestLiveInstanceID: the live exporter's resource carries the state's
// run as service.instance.id, the same identity its log's files start
// with.
func TestLiveInstanceID(t *testing.T) {
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing})
	require.NoError(t, err)
	exp := &recorder{}
	live, err := NewLive(exp, &LiveOptions{State: st})
	require.NoError(t, err)
	ctx, inv := spanattr.NewInvocation(spanContext(live), 0x9f)
	_, sp := spanattr.Start(ctx, "work")
	sp.End()
	inv.End()
	require.NoError(t, live.Shutdown(context.Background()))
	require.NotEmpty(t, exp.spans)
	want := st.Run().ID
	require.NotEmpty(t, want)
	for _, s := range exp.spans {
		assert.Equal(t, want, instanceID(s.Resource()), "%s", s.Name())
	}
}
