package straceview

import (
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/strace"
)

func readLog(t *testing.T, path string) *strace.Parser {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var p strace.Parser
	require.NoError(t, p.Read(f))
	return &p
}

func TestRecognise(t *testing.T) {
	record := func(phase string) []map[string]any {
		return []map[string]any{{"pid": float64(1), "inv": float64(1), "records": []any{map[string]any{"phase": phase}}}}
	}
	anchorOnly := &strace.Parser{}
	require.NoError(t, anchorOnly.Read(strings.NewReader(logtest.AnchorRecord(1, 5, 1e18)+logtest.SpanRecord(1, 1, 1, "chip.run.bind", 10, 5, "", 0))))
	for _, tc := range []struct {
		name   string
		p      *strace.Parser
		passes []map[string]any
		want   Generation
	}{
		{"bind phase lines are the anchored runtime's", readLog(t, "../../../../strace/testdata/swimlane.log"), nil, GenerationAnchored},
		{"a graph_pack segment span is the current runtime's", readLog(t, "../../../../strace/testdata/current_swimlane.log"), nil, GenerationCurrent},
		{"record_node records are the anchored artifact's", anchorOnly, record("record_node"), GenerationAnchored},
		{"relocate as a record is anchored", anchorOnly, record("relocate"), GenerationAnchored},
		{"record_sub_task records are the current artifact's", anchorOnly, record("record_sub_task"), GenerationCurrent},
		{"an anchor alone is no evidence", anchorOnly, record("args"), GenerationCurrent},
		{"nothing at all reads as current", &strace.Parser{}, nil, GenerationCurrent},
	} {
		t.Run(tc.name, func(t *testing.T) { assert.Equal(t, tc.want, Recognise(tc.p, tc.passes)) })
	}
}

// TestCurrentGeneration holds the current reader's rules on a log of the
// current runtime and its host phase records, and the anchored reader's
// on the same files, so each rule that differs is seen to differ.
func TestCurrentGeneration(t *testing.T) {
	p := readLog(t, "../../../../strace/testdata/current_swimlane.log")
	passes, err := LoadHostPhaseRecords([]string{"../../../../strace/testdata/current_host_phase_records.jsonl"})
	require.NoError(t, err)
	require.Len(t, passes, 3, "the torn last line is skipped")
	// byName maps pid 8's spans by name, the one on tid 99 (the record
	// worker's) winning.
	byName := func(spans []strace.Span) map[string]strace.Span {
		m := map[string]strace.Span{}
		for _, s := range spans {
			if _, seen := m[s.Name]; s.PID == 8 && (!seen || s.TID == 99) {
				m[s.Name] = s
			}
		}
		return m
	}
	t.Run("current", func(t *testing.T) {
		d := BindDetails(GenerationCurrent, p.Spans, p.BindPhases, passes)
		assert.Equal(t, BindDetail{Spans: d.Spans, Records: 10, Orphaned: 1, Skipped: 4}, d,
			"args, arena_build and host_orch of pid 8 and args of pid 7 are in the log")
		got := byName(d.Spans)
		assert.NotContains(t, got, "chip.run.bind.args", "the log's span, with its attributes, is drawn instead")
		require.Contains(t, got, "chip.run.bind.graph_pack")
		assert.Equal(t, 2, got["chip.run.bind.graph_pack"].Depth, "a bind segment, under chip.run.bind at depth 1")
		for _, op := range []string{"graph_upload", "relocate", "sm_h2d", "graph_submit"} {
			require.Contains(t, got, "chip.run.bind.host_orch."+op)
			assert.Equal(t, 3, got["chip.run.bind.host_orch."+op].Depth, op)
		}
		assert.Contains(t, got["chip.run.bind.host_orch.record_sub_task"].Attrs, "host_phase_thread=graph_record_worker")
		worker := lanes(Swimlane(append(p.Spans, d.Spans...), nil))
		assert.Equal(t, "graph record worker", worker[99], "record_sub_task with a tid of its own")
	})
	t.Run("anchored", func(t *testing.T) {
		d := BindDetails(GenerationAnchored, p.Spans, p.BindPhases, passes)
		assert.Equal(t, 0, d.Skipped)
		assert.Equal(t, 14, d.Records)
		got := byName(d.Spans)
		assert.Equal(t, 3, got["chip.run.bind.host_orch.graph_pack"].Depth, "an operation in the anchored generation")
		assert.Equal(t, 2, got["chip.run.bind.graph_upload"].Depth, "a segment in the anchored generation")
		assert.Contains(t, got["chip.run.bind.host_orch.record_sub_task"].Attrs, "host_phase_thread=host_main",
			"record_sub_task is no record worker's operation in the anchored generation")
	})
	t.Run("bind phase lines are the anchored generation's only", func(t *testing.T) {
		q := readLog(t, "../../../../strace/testdata/swimlane.log")
		require.NotEmpty(t, q.BindPhases)
		assert.Equal(t, 2, BindDetails(GenerationAnchored, q.Spans, q.BindPhases, nil).Lines)
		assert.Zero(t, BindDetails(GenerationCurrent, q.Spans, q.BindPhases, nil).Lines)
	})
}

func TestGenerationText(t *testing.T) {
	for _, g := range []Generation{GenerationAuto, GenerationAnchored, GenerationCurrent} {
		b, err := g.MarshalText()
		require.NoError(t, err)
		var back Generation
		require.NoError(t, back.UnmarshalText(b))
		assert.Equal(t, g, back)
	}
	var g Generation
	assert.EqualError(t, g.UnmarshalText([]byte("newest")), `invalid choice: "newest" (choose from auto, anchored, current)`)
}
