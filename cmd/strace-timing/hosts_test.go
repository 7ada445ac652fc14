package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// writeHost writes dir/host.100.log: an anchor (unless mono is 0) and one
// chip.run span starting after ns past it.
func writeHost(t *testing.T, dir string, mono, wall, after int64) {
	t.Helper()
	require.NoError(t, os.MkdirAll(dir, 0o750))
	var b strings.Builder
	if mono != 0 {
		fmt.Fprintf(&b, "[mono_ns=%d][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=100 mono_ns=%d wall_ns=%d\n", mono, mono, wall)
	} else {
		mono = 5_000_000_000
	}
	fmt.Fprintf(&b, "[mono_ns=%d][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=100 tid=1 inv=1 hid=aa depth=0 name=chip.run ts=%d dur=1000 \n", mono+after+1000, mono+after)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host.100.log"), []byte(b.String()), 0o640))
}

// TestHostsOnOneClock: two hosts whose monotonic clocks are three hours
// apart and whose processes share a pid land on one wall-clock timeline,
// in their own lanes, at their true distance; a host without an anchor is
// listed, not placed.
func TestHostsOnOneClock(t *testing.T) {
	root := t.TempDir()
	const wall = int64(1_700_000_000_000_000_000)
	a, b, c := filepath.Join(root, "hostA"), filepath.Join(root, "hostB"), filepath.Join(root, "hostC")
	writeHost(t, a, 1_000_000_000, wall, 100_000)               // span at wall+100µs
	writeHost(t, b, 10_800_000_000_000, wall+5_000_000, 50_000) // three hours later on its own clock; span at wall+5.05ms
	writeHost(t, c, 0, 0, 0)                                    // no anchor
	trace := filepath.Join(root, "t.json")
	code, _, errs := runCmd(t, "", "--hosts", a, b, c, "--trace-out", trace)
	require.Equal(t, 0, code, errs)
	assert.Contains(t, errs, "warning: host hostC pid 100 has no [CLOCK_ANCHOR]")

	var doc struct {
		TraceEvents []struct {
			Name, Ph string
			TS       float64
			PID      int64
			Args     map[string]any
		}
		UnalignedSpans []map[string]any
	}
	require.NoError(t, json.Unmarshal(mustRead(t, trace), &doc))
	places := map[string]float64{}
	procs := map[int64]string{}
	for _, e := range doc.TraceEvents {
		switch {
		case e.Ph == "M" && e.Name == "process_name":
			procs[e.PID] = e.Args["name"].(string)
		case e.Ph == "X":
			places[procs[e.PID]] = e.TS
		}
	}
	require.Len(t, places, 2, "%v", procs)
	var tsA, tsB float64
	for name, ts := range places {
		switch {
		case strings.Contains(name, "(host=hostA pid=100)"):
			tsA = ts
		case strings.Contains(name, "(host=hostB pid=100)"):
			tsB = ts
		default:
			t.Errorf("process %q", name)
		}
	}
	assert.InDelta(t, 4950.0, tsB-tsA, 1e-6, "hostB's span is 4.95 ms after hostA's on the wall clock")
	require.Len(t, doc.UnalignedSpans, 1)
	assert.Equal(t, "hostC", doc.UnalignedSpans[0]["host"])
	assert.Contains(t, doc.UnalignedSpans[0]["reason"], "no [CLOCK_ANCHOR]")

	t.Run("the HTML view names processes by host too", func(t *testing.T) {
		page := filepath.Join(root, "t.html")
		code, _, errs := runCmd(t, "", "--hosts", a, b, "--html", page)
		require.Equal(t, 0, code, errs)
		raw := string(mustRead(t, page))
		assert.Contains(t, raw, "(host=hostA pid=100)")
		assert.Contains(t, raw, "(host=hostB pid=100)")
	})
	t.Run("labels name the hosts in order", func(t *testing.T) {
		code, _, errs := runCmd(t, "", "--hosts", "--label", "east", "--label", "", a, b, "--trace-out", trace)
		require.Equal(t, 0, code, errs)
		raw := string(mustRead(t, trace))
		assert.Contains(t, raw, "(host=east pid=100)")
		assert.Contains(t, raw, "(host=hostB pid=100)")
	})
	t.Run("without --hosts the logs are one log, as the reference reads them", func(t *testing.T) {
		code, _, _ := runCmd(t, "", a, b, "--trace-out", trace)
		require.Equal(t, 0, code)
		assert.NotContains(t, string(mustRead(t, trace)), "host=")
	})
}
