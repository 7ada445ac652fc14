package straceview

import (
	"os"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"simpler.dev/log/strace"
)

// swimlaneDoc builds the swimlane of testdata/swimlane.log with its host
// phase records, as strace-timing --swimlane --host-phase-records does.
func swimlaneDoc(t *testing.T) Document {
	t.Helper()
	f, err := os.Open("../../../../strace/testdata/swimlane.log")
	require.NoError(t, err)
	defer f.Close()
	var p strace.Parser
	require.NoError(t, p.Read(f))
	passes, err := LoadHostPhaseRecords([]string{"../../../../strace/testdata/host_phase_records.jsonl"})
	require.NoError(t, err)
	require.Len(t, passes, 2, "the torn last line is skipped")
	require.Equal(t, GenerationAnchored, Recognise(&p, passes), "the log has bind phase lines")
	d := BindDetails(GenerationAnchored, p.Spans, p.BindPhases, passes)
	assert.Equal(t, 1, d.Orphaned)
	return Swimlane(append(p.Spans, d.Spans...), LastAnchors(&p))
}

// TestSwimlane ports the reference's swimlane cases: role-named lanes, a
// thread that interleaved runs split per pipeline slot, a sequential one
// kept, dispatch flows from the latest preceding submit, device spans kept
// off the timeline, bind phases and host phase records nested in their
// bind.
func TestSwimlane(t *testing.T) {
	doc := swimlaneDoc(t)
	threads := map[[2]int64]string{}
	var flows []Event
	slicesByName := map[string][]Event{}
	for _, e := range doc.Events() {
		switch e.Ph {
		case "M":
			if e.Name == "thread_name" {
				threads[[2]int64{e.PID, e.TID}] = e.Args["name"].(string)
			}
		case "s", "f":
			flows = append(flows, e)
		case "X":
			slicesByName[e.Name] = append(slicesByName[e.Name], e)
		}
	}
	t.Run("lanes are named by role", func(t *testing.T) {
		assert.Equal(t, "orchestrator / facade", threads[[2]int64{41, 410}])
		assert.Equal(t, "scheduler", threads[[2]int64{41, 411}], "a scheduler that also emits role=worker spans")
		assert.Equal(t, "worker 5", threads[[2]int64{41, 412}])
		assert.Equal(t, "ext pypto", threads[[2]int64{41, 413}], "an ext. producer cannot take one of our names")
	})
	t.Run("an interleaved thread splits per pipeline slot", func(t *testing.T) {
		assert.Equal(t, "pipeline slot 0 (tid 7)", threads[[2]int64{7, 414}])
		assert.Equal(t, "pipeline slot 1 (tid 7)", threads[[2]int64{7, 415}])
		assert.NotContains(t, threads, [2]int64{7, 7})
		// A sequential thread keeps its tid; its graph_submit record names it.
		assert.Equal(t, "graph submit main", threads[[2]int64{8, 8}])
	})
	t.Run("flows pair a dispatch with the latest preceding submit", func(t *testing.T) {
		require.Len(t, flows, 4)
		assert.Equal(t, []int{1, 1, 2, 2}, []int{flows[0].ID, flows[1].ID, flows[2].ID, flows[3].ID})
		assert.Equal(t, "dispatch:41:7:12:0:3:99", flows[0].Args["dispatch_key"])
		assert.Equal(t, "dispatch:41:7:12:0:3:100", flows[2].Args["dispatch_key"])
		assert.Equal(t, 1.2, *flows[0].TS, "the submit's end")
		assert.Equal(t, int64(410), flows[0].TID)
		assert.Equal(t, int64(411), flows[1].TID)
	})
	t.Run("device spans stay off the timeline", func(t *testing.T) {
		assert.Empty(t, slicesByName["chip.run.runner_run.device_wall"])
		require.NotNil(t, doc.Unaligned)
		require.Len(t, *doc.Unaligned, 1)
		assert.Equal(t, "clk=dev", (*doc.Unaligned)[0]["attrs"].(map[string]any)["raw"])
	})
	t.Run("bind phases and host phase records nest in their bind", func(t *testing.T) {
		require.Len(t, slicesByName["chip.run.bind.args"], 1)
		assert.Equal(t, "bind_phase", slicesByName["chip.run.bind.args"][0].Args["src"])
		assert.Empty(t, slicesByName["chip.run.bind.lost"], "a phase outside every bind is dropped")
		ab := slicesByName["chip.run.bind.arena_build"]
		require.Len(t, ab, 2)
		worker := slicesByName["chip.run.bind.host_orch.record_node"]
		require.Len(t, worker, 1)
		assert.Equal(t, "graph_record_worker", worker[0].Args["host_phase_thread"])
		assert.Equal(t, "graph record worker", threads[[2]int64{8, 99}])
	})
	t.Run("wall time and anchors", func(t *testing.T) {
		assert.Equal(t, []AnchorJSON{{PID: 41, MonoNS: "50", WallNS: "1700000000000000000"}}, doc.ClockAnchors)
		assert.Equal(t, "1700000000000000950", slicesByName["node.graph_build"][0].Args["wall_ts_ns"])
	})
}

func TestBuckets(t *testing.T) {
	var p strace.Parser
	f, err := os.Open("../../../../strace/testdata/mixed.log")
	require.NoError(t, err)
	defer f.Close()
	require.NoError(t, p.Read(f))
	invs := Group(p.Spans, InInvocation)
	b := Buckets(invs)
	assert.False(t, len(b) != 1 || b[0].HID != "abc" || len(b[0].Invocations) != 2 || Label(b, "abc") != "decode", "buckets %+v", b)
}
