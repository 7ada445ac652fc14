package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/logtest"
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
	t.Run("two anchors for one pid warn", func(t *testing.T) {
		log := write("anchors.log", logtest.AnchorRecord(71, 50, 1_700_000_000_000_000_000)+
			logtest.AnchorRecord(71, 75, 1_700_000_000_000_000_025)+
			logtest.SpanRecord(71, 710, 2, "chip.run", 100, 25, "", 0))
		code, _, errs := runCmd(t, "", log)
		require.EqualValues(t, 0, code, errs)
		assert.Contains(t, errs, "warning: multiple [CLOCK_ANCHOR] records found for pid 71")
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
