package straceview

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/strace"
)

// The reference's cases about host phase records and the ext. namespace
// (the contract an external producer codes to), ported. Each one says
// what a producer cannot do to our views, so each is a named subtest.

func parseText(t *testing.T, text string) []strace.Span {
	t.Helper()
	var p strace.Parser
	require.NoError(t, p.Read(strings.NewReader(text)))
	return p.Spans
}

// metadata is the args.name of every kind metadata event, in lane order.
func metadata(doc Document, kind string) []string {
	var out []string
	for _, e := range doc.Events() {
		if e.Ph == "M" && e.Name == kind {
			out = append(out, e.Args["name"].(string))
		}
	}
	return out
}

// lanes maps lane tid to lane name.
func lanes(doc Document) map[int64]string {
	out := map[int64]string{}
	for _, e := range doc.Events() {
		if e.Ph == "M" && e.Name == "thread_name" {
			out[e.TID] = e.Args["name"].(string)
		}
	}
	return out
}

func sliceNames(doc Document) map[string]bool {
	out := map[string]bool{}
	for _, e := range doc.Events() {
		if e.Ph == "X" {
			out[e.Name] = true
		}
	}
	return out
}

func TestReferenceHostPhaseRecords(t *testing.T) {
	t.Run("the loader keeps only well-formed passes", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "host_phase_records.jsonl")
		require.NoError(t, os.WriteFile(path, []byte(strings.Join([]string{
			`{"pid": 7, "inv": 1, "records": [{"phase": "args", "start_ns": 10, "end_ns": 20}]}`,
			"null", "[1, 2, 3]", "42", `"a string"`,
			`{"pid": 7, "inv": 2, "records": "not-a-list"}`,
			`{"pid": 7, "inv": 3, "records": [`,
			"",
			`{"pid": 7, "inv": 4, "records": []}`,
		}, "\n")+"\n"), 0o600))
		passes, err := LoadHostPhaseRecords([]string{path})
		require.NoError(t, err)
		var invs []any
		for _, p := range passes {
			invs = append(invs, p["inv"])
		}
		assert.Equal(t, []any{json.Number("1"), json.Number("4")}, invs)
	})

	bind := func(ts int64) []strace.Span {
		return parseText(t, logtest.SpanRecord(9, 9, 5, "chip.run.bind", ts, 500, "", 0))
	}
	t.Run("a record's kind decides its depth and lane", func(t *testing.T) {
		spans := bind(1_000)
		passes := []map[string]any{{"pid": float64(9), "inv": float64(5), "records": []any{
			map[string]any{"phase": "args", "start_ns": float64(1_000), "end_ns": float64(1_100), "detail": float64(4096), "tid": float64(9)},
			map[string]any{"phase": "record_node", "start_ns": float64(1_150), "end_ns": float64(1_230), "detail": float64(4), "tid": float64(42)},
			map[string]any{"phase": "graph_submit", "start_ns": float64(1_200), "end_ns": float64(1_250), "detail": float64(77), "tid": float64(9)},
		}}}
		out, orphaned, _, covered := HostRecordSpans(GenerationAnchored, spans, passes)
		assert.Equal(t, 0, orphaned)
		assert.Equal(t, map[[2]int64]bool{{9, 5}: true}, covered)
		byName := map[string]strace.Span{}
		for _, s := range out {
			byName[s.Name] = s
		}
		require.Contains(t, byName, "chip.run.bind.args")
		assert.Equal(t, spans[0].Depth+1, byName["chip.run.bind.args"].Depth)
		assert.Equal(t, spans[0].Depth+2, byName["chip.run.bind.host_orch.graph_submit"].Depth)
		assert.Equal(t, int64(1_000), byName["chip.run.bind.args"].TS)
		assert.Equal(t, int64(100), byName["chip.run.bind.args"].Dur)
		assert.Equal(t, int64(42), byName["chip.run.bind.host_orch.record_node"].TID)
		assert.Equal(t, int64(9), byName["chip.run.bind.host_orch.graph_submit"].TID)

		got := lanes(Swimlane(append(spans, out...), nil))
		assert.Equal(t, "graph submit main", got[9])
		assert.Equal(t, "graph record worker", got[42])
	})
	t.Run("a legacy recording without tids stays on the main lane", func(t *testing.T) {
		spans := bind(900)
		passes := []map[string]any{{"pid": float64(9), "inv": float64(5), "records": []any{
			map[string]any{"phase": "record_node", "start_ns": float64(1_000), "end_ns": float64(1_080), "detail": float64(4)},
			map[string]any{"phase": "build_definition", "start_ns": float64(1_100), "end_ns": float64(1_180), "detail": float64(4)},
			map[string]any{"phase": "graph_submit", "start_ns": float64(1_200), "end_ns": float64(1_250), "detail": float64(77)},
		}}}
		out, dropped, _, _ := HostRecordSpans(GenerationAnchored, spans, passes)
		assert.Equal(t, 0, dropped)
		for _, s := range out {
			assert.Equal(t, int64(9), s.TID, s.Name)
		}
		assert.Equal(t, "graph submit main", lanes(Swimlane(append(spans, out...), nil))[9])
	})
	t.Run("a pass with no matching bind is dropped and counted", func(t *testing.T) {
		passes := []map[string]any{{"pid": float64(9), "inv": float64(999), "records": []any{
			map[string]any{"phase": "args", "start_ns": float64(1_000), "end_ns": float64(1_100)},
		}}}
		out, orphaned, _, covered := HostRecordSpans(GenerationAnchored, bind(1_000), passes)
		assert.Empty(t, out)
		assert.Equal(t, 1, orphaned)
		assert.Empty(t, covered)
	})
}

func TestReferenceExternalProducers(t *testing.T) {
	t.Run("a malformed ext name is external but attributed to nobody", func(t *testing.T) {
		assert.Equal(t, "pypto", strace.ExternalProducer("ext.pypto.decode_layer"))
		assert.Equal(t, "pypto", strace.ExternalProducer("ext.pypto.attention.qk"))
		for _, name := range []string{"ext.pypto", "ext.", "ext..decode_layer", "ext.pypto.", "ext.pypto..detail"} {
			assert.Equal(t, "external", Family(name), name)
			assert.Empty(t, strace.ExternalProducer(name), name)
		}
		assert.Empty(t, strace.ExternalProducer("node.dispatch"))
		assert.Empty(t, strace.ExternalProducer("chip.run"))
	})
	t.Run("an ext name cannot impersonate one of our level words", func(t *testing.T) {
		for _, word := range []string{"core", "chip", "node", "network1", "network2", "network3", "host"} {
			name := "ext." + word + ".foo"
			assert.Equal(t, "external", Family(name), name)
			assert.Equal(t, word, strace.ExternalProducer(name), name)
			_, ok := NodeLeaf(name)
			assert.False(t, ok, name)
		}
	})
	t.Run("ext spans stay out of the invocation views", func(t *testing.T) {
		spans := parseText(t,
			logtest.SpanRecord(41, 410, 7, "chip.run", 100, 500, "run_id=7 slot_id=0", 0)+
				logtest.SpanRecord(41, 410, 0, "ext.pypto.decode_layer", 120, 80, "", 0)+
				logtest.SpanRecord(41, 410, 0, "ext.pypto.attention", 140, 20, "", 0))
		invs := Group(spans, InInvocation)
		require.Len(t, invs, 1)
		assert.Equal(t, [2]any{int64(41), uint64(7)}, [2]any{invs[0].PID, invs[0].Inv})
		require.Len(t, invs[0].Spans, 1)
		assert.Equal(t, "chip.run", invs[0].Spans[0].Name)
		doc := collected(ChromeTraceStream(invs, Buckets(invs), nil))
		assert.NotContains(t, sliceNames(doc), "ext.pypto.decode_layer")
	})
	t.Run("an ext-only process is the producer's, on its own lane", func(t *testing.T) {
		doc := Swimlane(parseText(t,
			logtest.SpanRecord(90, 900, 0, "ext.pypto.decode_layer", 100, 80, "", 0)+
				logtest.SpanRecord(90, 900, 0, "ext.pypto.attention", 110, 20, "", 0)), nil)
		assert.Equal(t, map[string]bool{"ext.pypto.decode_layer": true, "ext.pypto.attention": true}, sliceNames(doc))
		assert.Equal(t, []string{"external producer pypto (pid=90)"}, metadata(doc, "process_name"))
		assert.Equal(t, []string{"ext pypto"}, metadata(doc, "thread_name"))
	})
	t.Run("a shared process stays ours", func(t *testing.T) {
		doc := Swimlane(parseText(t,
			logtest.SpanRecord(41, 410, 7, "node.graph_build", 100, 200, "run_id=7 role=facade", 0)+
				logtest.SpanRecord(41, 411, 0, "ext.pypto.decode_layer", 120, 60, "", 0)), nil)
		assert.Equal(t, []string{"simpler node (pid=41)"}, metadata(doc, "process_name"))
		assert.Equal(t, map[int64]string{410: "orchestrator / facade", 411: "ext pypto"}, lanes(doc))
	})
	t.Run("a device-clock span still proves the process is ours", func(t *testing.T) {
		doc := Swimlane(parseText(t,
			logtest.SpanRecord(41, 410, 0, "ext.pypto.decode_layer", 120, 60, "", 0)+
				logtest.SpanRecord(41, 410, 7, "chip.run.runner_run.device_wall", 300, 40, "clk=dev", 1)), nil)
		assert.Equal(t, []string{"simpler chip child (pid=41)"}, metadata(doc, "process_name"))
		assert.Equal(t, map[string]bool{"ext.pypto.decode_layer": true}, sliceNames(doc))
	})
	t.Run("ext attributes cannot take one of our lane names", func(t *testing.T) {
		doc := Swimlane(parseText(t,
			logtest.SpanRecord(90, 900, 0, "ext.pypto.decode_layer", 100, 80, "role=facade", 0)+
				logtest.SpanRecord(90, 901, 0, "ext.pypto.step", 100, 80, "role=scheduler worker_id=3", 0)), nil)
		assert.Equal(t, map[int64]string{900: "ext pypto", 901: "ext pypto"}, lanes(doc))
	})
	t.Run("ext spans cannot reshape our slot lanes or dispatch flows", func(t *testing.T) {
		var lines []string
		lines = append(lines, runRecords(run{epoch: 1, slot: 0, prepare: window{50, 20}, device: window{100, 100}, release: 200})...)
		lines = append(lines, runRecords(run{epoch: 2, slot: 1, prepare: window{150, 30}, device: window{240, 100}, release: 340})...)
		lines = append(lines, runRecords(run{epoch: 3, slot: 0, prepare: window{300, 30}, device: window{380, 100}, release: 480})...)
		baseline := Swimlane(parseLines(t, lines), nil)
		lines = append(lines, strings.TrimSuffix(logtest.SpanRecord(7, 7, 0, "ext.pypto.decode_layer", 60, 400, "run_id=0 task_slot=12 slot_id=99 role=facade", 0), "\n"))
		mixed := Swimlane(parseLines(t, lines), nil)

		flows := func(doc Document) []Event {
			var out []Event
			for _, e := range doc.Events() {
				if e.Ph == "s" || e.Ph == "f" {
					out = append(out, e)
				}
			}
			return out
		}
		assert.Equal(t, []string{"pipeline slot 0 (tid 7)", "pipeline slot 1 (tid 7)"}, metadata(baseline, "thread_name"))
		assert.Equal(t, append([]string{"ext pypto"}, metadata(baseline, "thread_name")...), metadata(mixed, "thread_name"))
		assert.Equal(t, flows(baseline), flows(mixed))
		found := false
		for _, e := range mixed.Events() {
			if e.Name == "ext.pypto.decode_layer" {
				found = true
				assert.Equal(t, int64(7), e.TID, "on the thread's real tid")
			}
		}
		assert.True(t, found)
	})
}

func TestReferenceRoundsHostAndDeviceOnly(t *testing.T) {
	var lines []string
	for _, r := range []struct {
		inv       int
		host, dev int64
	}{{1, 100_000, 20_000}, {2, 120_000, 24_000}} {
		lines = append(lines, logtest.HostSpanRecord(1, uint64(r.inv), "chip.run", "", 0, 0, r.host)+
			logtest.HostSpanRecord(1, uint64(r.inv), "chip.run.runner_run.device_wall", "clk=dev", 2, 0, r.dev))
	}
	invs := Group(parseLines(t, lines), InInvocation)
	var b bytes.Buffer
	WriteRounds(&b, Buckets(invs))
	out := b.String()
	for _, want := range []string{"Host (us)", "Device (us)", "Avg Host: 110.0 us", "Avg Device: 22.0 us [2/2]"} {
		assert.Contains(t, out, want)
	}
	for _, absent := range []string{"Effective (us)", "Orch (us)", "Sched (us)"} {
		assert.NotContains(t, out, absent)
	}
}

// TestJSONInt checks the numbers a pass may carry read as Python's int()
// reads them.
func TestJSONInt(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   any
		want int64
		ok   bool
	}{
		{"integer number", json.Number("42"), 42, true},
		{"fraction truncates", json.Number("1.9"), 1, true},
		{"negative fraction truncates toward zero", json.Number("-1.9"), -1, true},
		{"exponent", json.Number("1e3"), 1000, true},
		{"float64 from a hand-built pass", float64(7), 7, true},
		{"numeric string", " 12 ", 12, true},
		{"true", true, 1, true},
		{"too large", json.Number("1e300"), 0, false},
		{"word", "seven", 0, false},
		{"null", nil, 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, ok := jsonInt(tt.in)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestReferenceInvocationViews(t *testing.T) {
	t.Run("scheduler spans leave the invocation views unchanged", func(t *testing.T) {
		old := logtest.SpanRecord(61, 610, 3, "chip.run", 1_000, 500, "", 0) +
			logtest.SpanRecord(61, 610, 3, "chip.run.bind", 1_100, 50, "", 1) +
			logtest.SpanRecord(61, 610, 4, "chip.prewarm.build", 1_200, 75, "", 0)
		mixed := old + logtest.SpanRecord(61, 611, 9, "node.dispatch", 900, 20, "run_id=9 task_slot=4 group_index=0 worker_id=0 dispatch_id=1", 0)
		trace := func(text string) Document {
			invs := Group(parseText(t, text), InInvocation)
			return collected(ChromeTraceStream(invs, Buckets(invs), nil))
		}
		assert.Equal(t, trace(old), trace(mixed))
	})
	t.Run("claim_release stays inside the invocation tree", func(t *testing.T) {
		invs := Group(parseLines(t, runRecords(run{epoch: 1, prepare: window{50, 20}, device: window{100, 100}, release: 200})), InInvocation)
		require.Len(t, invs, 1)
		assert.Equal(t, "chip.run", invs[0].Root().Name)
		assert.Equal(t, 1, byName(invs[0])["chip.run.claim_release"].Depth)
		assert.Equal(t, int64(210-50), invs[0].Root().Dur, "the root reports the whole lifetime")
	})
	t.Run("a sequential thread keeps its own tid", func(t *testing.T) {
		lines := append(runRecords(run{epoch: 1, slot: 0, prepare: window{50, 20}, device: window{100, 100}, release: 200}),
			runRecords(run{epoch: 2, slot: 1, prepare: window{300, 20}, device: window{350, 100}, release: 460})...)
		got := lanes(Swimlane(parseLines(t, lines), nil))
		assert.Len(t, got, 1)
		assert.Contains(t, got, int64(7))
	})
}

// collected makes a streamed document's events into TraceEvents, copying
// each (the stream reuses one), so a test can read and compare them.
func collected(doc Document) Document {
	doc.TraceEvents, doc.stream = doc.Events(), nil
	return doc
}
