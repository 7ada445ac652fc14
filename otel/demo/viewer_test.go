package main

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
)

// edge is one span of a shaped trace: its number and its parent's (0: no
// parent; a number no span has: an orphan).
type edge struct{ id, parent uint64 }

func sid(n uint64) pcommon.SpanID {
	var id pcommon.SpanID
	binary.BigEndian.PutUint64(id[:], n)
	return id
}

// shaped is one trace of the given spans, as a collector hands it over.
func shaped(traceByte byte, edges []edge) ptrace.Traces {
	td := ptrace.NewTraces()
	rs := td.ResourceSpans().AppendEmpty()
	rs.Resource().Attributes().PutStr("service.name", "svc")
	ss := rs.ScopeSpans().AppendEmpty().Spans()
	var tid pcommon.TraceID
	tid[0], tid[15] = traceByte, 1
	for i, e := range edges {
		s := ss.AppendEmpty()
		s.SetTraceID(tid)
		s.SetSpanID(sid(e.id))
		if e.parent != 0 {
			s.SetParentSpanID(sid(e.parent))
		}
		s.SetName(fmt.Sprintf("s%d", e.id))
		s.SetStartTimestamp(pcommon.Timestamp(1_000 + i))
		s.SetEndTimestamp(pcommon.Timestamp(2_000 + i))
	}
	return td
}

func chain(n int) []edge {
	out := make([]edge, n)
	for i := range out {
		out[i] = edge{uint64(i + 1), uint64(i)} // span 1 has parent 0: the root
	}
	return out
}

var shapes = []struct {
	name  string
	edges []edge
}{
	{"self-parented", []edge{{1, 1}}},
	{"two-span cycle", []edge{{1, 2}, {2, 1}}},
	{"cycle under a root", []edge{{1, 0}, {2, 3}, {3, 4}, {4, 2}}},
	{"cycle and a self-parent", []edge{{1, 2}, {2, 1}, {3, 3}}},
	{"orphans", []edge{{1, 99}, {2, 98}, {3, 1}}},
	{"duplicate ids", []edge{{1, 0}, {1, 0}, {2, 1}}},
	{"chain of 100000", chain(100_000)},
}

// TestLayoutAnyShape: every span of any trace, however its parents are
// tangled, is laid out exactly once and the trace has a root.
func TestLayoutAnyShape(t *testing.T) {
	for _, tt := range shapes {
		t.Run(tt.name, func(t *testing.T) {
			sink := new(consumertest.TracesSink)
			require.NoError(t, sink.ConsumeTraces(context.Background(), shaped(1, tt.edges)))
			traces := collect(sink, new(consumertest.LogsSink))
			require.Len(t, traces, 1)
			tr := traces[0]
			assert.Len(t, tr.Spans, len(tt.edges), "each span once")
			assert.NotEmpty(t, tr.Root)
			seen := map[*span]bool{}
			for _, s := range tr.Spans {
				assert.False(t, seen[s], "span %s twice", s.Name)
				seen[s] = true
			}
		})
	}
}

// TestViewerSurvivesAnyShape posts each shape to the viewer's sinks and
// asks for the list and the trace's page: both answer 200, and so does
// every later GET / (a bad trace must not take the list down with it).
func TestViewerSurvivesAnyShape(t *testing.T) {
	traces, logs := new(consumertest.TracesSink), new(consumertest.LogsSink)
	var errLog bytes.Buffer
	srv := httptest.NewUnstartedServer(viewer(traces, logs, &errLog))
	srv.Start()
	t.Cleanup(srv.Close)
	getOK := func(t *testing.T, url string) string {
		t.Helper()
		resp, err := http.Get(url)
		require.NoError(t, err)
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		require.NoError(t, err)
		assert.Equal(t, http.StatusOK, resp.StatusCode, "%s: %s", url, b)
		return string(b)
	}
	for i, tt := range shapes {
		t.Run(tt.name, func(t *testing.T) {
			require.NoError(t, traces.ConsumeTraces(context.Background(), shaped(byte(i+1), tt.edges)))
			list := getOK(t, srv.URL+"/")
			assert.Equal(t, i+1, strings.Count(list, `<a href="/trace/`), "every trace so far listed")
			var tid pcommon.TraceID
			tid[0], tid[15] = byte(i+1), 1
			if tt.name != "chain of 100000" { // its page is 100000 rows: the list is the check
				page := getOK(t, srv.URL+"/trace/"+tid.String())
				assert.Contains(t, page, `data-span="s`)
			}
		})
	}
	getOK(t, srv.URL+"/")
	assert.Empty(t, errLog.String(), "no failure logged")
}

// TestViewerLogsItsFailures: a handler that panics answers 500 and the
// panic is written to the viewer's error log, not lost.
func TestViewerLogsItsFailures(t *testing.T) {
	var errLog bytes.Buffer
	h := recovered(http.HandlerFunc(func(http.ResponseWriter, *http.Request) { panic("boom") }), &errLog)
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/", nil))
	assert.Equal(t, http.StatusInternalServerError, rec.Code)
	assert.Contains(t, errLog.String(), "boom")
	assert.Contains(t, errLog.String(), "GET /")
}
