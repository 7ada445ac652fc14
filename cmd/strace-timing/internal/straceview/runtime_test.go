package straceview

import (
	"testing"

	"github.com/stretchr/testify/assert"

	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/strace"
)

func named(names ...string) []strace.Span {
	out := make([]strace.Span, len(names))
	for i, n := range names {
		out[i] = strace.Span{PID: 1, TID: 1, Inv: 1, Name: n, Dur: 10}
	}
	return out
}

// TestSimplerRuntime: any span of the runtime's families makes a log
// simpler's, whatever else it holds; a log without spans is read as
// simpler's; ext.* alone, or a service's own names, are not.
func TestSimplerRuntime(t *testing.T) {
	for _, tc := range []struct {
		name  string
		hosts [][]strace.Span
		want  bool
	}{
		{"chip.run", [][]strace.Span{named("chip.run", "chip.run.bind")}, true},
		{"a prewarm only", [][]strace.Span{named("chip.prewarm.build")}, true},
		{"a scheduler: node only", [][]strace.Span{named("node.submit")}, true},
		{"an L4 scheduler", [][]strace.Span{named("network2.dispatch")}, true},
		{"a core span", [][]strace.Span{named("core.exec")}, true},
		{"ours among a service's", [][]strace.Span{named("http.request", "db.query", "chip.run")}, true},
		{"no span at all", [][]strace.Span{nil}, true},
		{"no host at all", nil, true},
		{"a Go service", [][]strace.Span{named("http.request", "db.query")}, false},
		{"a word that only begins like ours", [][]strace.Span{named("chips.run", "nodes.x", "network4.x", "Chip.run")}, false},
		{"external producers only", [][]strace.Span{named("ext.pypto.decode_layer")}, false},
		{"a service and an empty host", [][]strace.Span{nil, named("http.request")}, false},
		{"a service and a simpler host", [][]strace.Span{named("http.request"), named("chip.run")}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, SimplerRuntime(tc.hosts...))
		})
	}
}

// TestByPIDNames: on a log without simpler's runtime spans the trace
// views name a process by its pid, and an ext-only process after its
// producer, never as simpler's chip child or callable.
func TestByPIDNames(t *testing.T) {
	spans := parseText(t, logtest.SpanRecord(5, 50, 0, "cache.refresh", 10, 5, "", 0)+
		logtest.SpanRecord(5, 50, 3, "http.request", 100, 50, "route=/x", 0)+
		logtest.SpanRecord(5, 51, 3, "db.query", 110, 20, "", 1)+
		logtest.SpanRecord(6, 60, 0, "ext.pypto.decode_layer", 100, 80, "", 0)+
		logtest.SpanRecord(7, 70, 0, "ext.pypto.step", 100, 80, "", 0)+
		logtest.SpanRecord(7, 70, 0, "job.run", 200, 80, "", 0))
	invs := Group(spans, InInvocation)
	t.Run("the Chrome trace", func(t *testing.T) {
		events := collected(ChromeTraceStreamByPID(invs, nil))
		assert.Equal(t, []string{"process (pid=5)", "process (pid=7)"}, metadata(events, "process_name"),
			"one lane a process, not one an invocation")
		assert.Equal(t, []string{"T0x32", "T0x33", "T0x46"}, metadata(events, "thread_name"), "a thread a goroutine")
		var inv []Event
		for _, e := range events.TraceEvents {
			if e.Name == "inv=3" {
				inv = append(inv, e)
			}
		}
		assert.Len(t, inv, 1, "the invocation, a slice")
		if len(inv) != 1 {
			return
		}
		assert.Equal(t, int64(50), inv[0].TID, "on its outermost span's thread")
		assert.Equal(t, 0.1, *inv[0].TS)
		assert.Equal(t, 0.05, *inv[0].Dur, "from its first start to its last end")
		assert.Equal(t, []string{"decode inv=0 (pid=5)", "decode inv=3 (pid=5)", "decode inv=0 (pid=7)"},
			metadata(collected(ChromeTraceStream(invs, Buckets(invs), nil)), "process_name"), "simpler's names, unchanged")
	})
	t.Run("the swimlane", func(t *testing.T) {
		assert.Equal(t, []string{"process (pid=5)", "external producer pypto (pid=6)", "process (pid=7)"},
			metadata(SwimlaneByPID(spans, nil), "process_name"))
		assert.Equal(t, []string{"simpler chip child (pid=5)", "external producer pypto (pid=6)", "simpler chip child (pid=7)"},
			metadata(Swimlane(spans, nil), "process_name"), "simpler's names, unchanged")
	})
	t.Run("the HTML timeline", func(t *testing.T) {
		meta, _ := decodePage(t, writePage(t, spans))
		var got []string
		for _, p := range meta.Processes {
			got = append(got, p.Label)
		}
		assert.Equal(t, []string{"process (pid=5)", "external producer pypto (pid=6)", "process (pid=7)"}, got,
			"a process of ext.* and its own spans is no simpler chip child")
	})
}
