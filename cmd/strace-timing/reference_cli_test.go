package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
)

// The CLI cases of simpler's tests/ut/py/test_strace_timing.py, ported.

// traceNames reads a written trace and returns its events' names.
func traceNames(t *testing.T, path string) map[string]map[string]any {
	t.Helper()
	raw, err := os.ReadFile(path)
	require.NoError(t, err)
	var doc struct {
		TraceEvents []map[string]any `json:"traceEvents"`
	}
	require.NoError(t, json.Unmarshal(raw, &doc))
	out := map[string]map[string]any{}
	for _, e := range doc.TraceEvents {
		if name, ok := e["name"].(string); ok {
			out[name] = e
		}
	}
	return out
}

func TestReferenceCLICases(t *testing.T) {
	dir := t.TempDir()
	write := func(name, text string) string {
		path := filepath.Join(dir, name)
		require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
		return path
	}
	t.Run("the swimlane carries wall time as a decimal string", func(t *testing.T) {
		log := write("wall.log", logtest.AnchorRecord(71, 50, 1_700_000_000_000_000_000)+
			logtest.SpanRecord(71, 710, 2, "node.graph_build", 100, 25, "run_id=2 role=facade", 0))
		out := filepath.Join(dir, "wall_swimlane.json")
		code, _, errs := runCmd(t, "", log, "--swimlane", out)
		require.EqualValues(t, 0, code, errs)
		ev := traceNames(t, out)["node.graph_build"]
		require.NotNil(t, ev)
		assert.Equal(t, "1700000000000000050", ev["args"].(map[string]any)["wall_ts_ns"])
	})
	// The anchored generation warned about any second anchor of a pid and
	// used the last; a rotated set has one per file, so this reader warns
	// only when they disagree (a difference listed in --help).
	t.Run("two anchors that agree do not warn", func(t *testing.T) {
		log := write("anchors.log", logtest.AnchorRecord(71, 50, 1_700_000_000_000_000_000)+
			logtest.AnchorRecord(71, 75, 1_700_000_000_000_000_025)+
			logtest.SpanRecord(71, 710, 2, "chip.run", 100, 25, "", 0))
		code, _, errs := runCmd(t, "", log)
		require.EqualValues(t, 0, code, errs)
		assert.NotContains(t, errs, "CLOCK_ANCHOR")
	})
	t.Run("two anchors that disagree warn, saying by how much", func(t *testing.T) {
		log := write("stepped.log", logtest.AnchorRecord(71, 50, 1_700_000_000_000_000_000)+
			logtest.AnchorRecord(71, 75, 1_700_000_002_500_000_025)+
			logtest.SpanRecord(71, 710, 2, "chip.run", 100, 25, "", 0))
		code, _, errs := runCmd(t, "", log)
		require.EqualValues(t, 0, code, errs)
		assert.Contains(t, errs, "warning: the [CLOCK_ANCHOR] records of pid 71 disagree by up to 2.5s")
	})
	t.Run("ext spans reach the swimlane but not the trace", func(t *testing.T) {
		log := write("ext.log", logtest.SpanRecord(41, 410, 7, "chip.run", 100, 500, "run_id=7 slot_id=0", 0)+
			logtest.SpanRecord(41, 411, 0, "ext.pypto.decode_layer", 120, 80, "", 0))
		swim, trace := filepath.Join(dir, "ext_swimlane.json"), filepath.Join(dir, "ext_trace.json")
		code, _, errs := runCmd(t, "", log, "--swimlane", swim, "--trace-out", trace)
		require.EqualValues(t, 0, code, errs)
		assert.Contains(t, traceNames(t, swim), "ext.pypto.decode_layer")
		assert.NotContains(t, traceNames(t, trace), "ext.pypto.decode_layer")
		assert.Contains(t, traceNames(t, trace), "chip.run")
	})
}

// TestGenerations holds what each generation of simpler's reader prints
// where they differ, without the references: the summary line of a
// current runtime's swimlane and the auto choice for each test log.
func TestGenerations(t *testing.T) {
	const data = "../../strace/testdata/"
	for _, tc := range []struct {
		name, log, records string
		args               []string
		want               string
	}{
		{"a current log is read as current", "current_swimlane.log", "current_host_phase_records.jsonl", nil,
			"(32 host spans, 1 unaligned device spans, 10 host phase records, 4 segment(s) already in the log)\n"},
		{"and as anchored when told", "current_swimlane.log", "current_host_phase_records.jsonl", []string{"--generation=anchored"},
			"(32 host spans, 1 unaligned device spans, 14 host phase records)\n"},
		{"an anchored log is read as anchored", "swimlane.log", "host_phase_records.jsonl", nil,
			"(28 host spans, 1 unaligned device spans, 2 bind phases, 4 host phase records)\n"},
		{"and as current when told: no bind phase lines", "swimlane.log", "host_phase_records.jsonl", []string{"--gen", "current"},
			"(28 host spans, 1 unaligned device spans, 4 host phase records)\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			args := append([]string{data + tc.log, "--swimlane", filepath.Join(t.TempDir(), "s.json"), "--host-phase-records", data + tc.records}, tc.args...)
			code, out, errs := runCmd(t, "", args...)
			require.Equal(t, 0, code, errs)
			assert.True(t, strings.HasSuffix(out, tc.want), out)
		})
	}
}
