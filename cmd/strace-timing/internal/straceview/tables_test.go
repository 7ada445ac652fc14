package straceview

import (
	"bytes"
	"fmt"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/strace"
)

// tablesOfSpans is the tables as strace-timing prints them from every
// span held: SplitRuns, Group, Buckets, then WriteTables or
// WriteServiceTables.
func tablesOfSpans(spans []strace.Span, service bool) string {
	spans = slices.Clone(spans)
	SplitRuns(spans)
	var out bytes.Buffer
	if service {
		WriteServiceTables(&out, Buckets(Group(spans, InInvocation)), nil)
	} else {
		WriteTables(&out, Buckets(Group(spans, InInvocation)), nil)
	}
	return out.String()
}

// roundsOfSpans and roundsStreamed are --rounds-table's output, as
// tablesOfSpans and tablesStreamed are the tables'.
func roundsOfSpans(spans []strace.Span) string {
	spans = slices.Clone(spans)
	SplitRuns(spans)
	var out bytes.Buffer
	WriteRounds(&out, Buckets(Group(spans, InInvocation)))
	return out.String()
}

func roundsStreamed(spans []strace.Span) string {
	b := NewTablesBuilder()
	for i := range spans {
		b.Add(&spans[i])
	}
	var out bytes.Buffer
	b.WriteRounds(&out)
	return out.String()
}

// treeOfSpans and treeStreamed are --tree's output, as tablesOfSpans and
// tablesStreamed are the tables'.
func treeOfSpans(spans []strace.Span) string {
	spans = slices.Clone(spans)
	SplitRuns(spans)
	var out bytes.Buffer
	WriteTree(&out, Buckets(Group(spans, InInvocation)), nil)
	return out.String()
}

func treeStreamed(spans []strace.Span) string {
	b := NewTablesBuilder()
	b.KeepTrees()
	for i := range spans {
		b.Add(&spans[i])
	}
	var out bytes.Buffer
	b.WriteTree(&out, nil)
	return out.String()
}

func tablesStreamed(spans []strace.Span, service bool) string {
	b := NewTablesBuilder()
	for i := range spans {
		b.Add(&spans[i])
	}
	var out bytes.Buffer
	b.Write(&out, nil, service)
	return out.String()
}

// TestTablesBuilder: the tables made from spans as they stream by are
// byte for byte the tables made from every span held, on every log of the
// reader's fixtures and on logs made to test the rules the tables follow
// (a name's earliest span, the first root in log order, invocations of
// two runs of one pid, of many names, interleaved).
func TestTablesBuilder(t *testing.T) {
	logs, err := filepath.Glob("../../../../strace/testdata/*.log")
	require.NoError(t, err)
	require.NotEmpty(t, logs)
	for _, log := range logs {
		p := readLog(t, log)
		for _, service := range []bool{false, true} {
			assert.Equal(t, tablesOfSpans(p.Spans, service), tablesStreamed(p.Spans, service), "%s, service=%v", filepath.Base(log), service)
		}
		assert.Equal(t, roundsOfSpans(p.Spans), roundsStreamed(p.Spans), "%s: the rounds", filepath.Base(log))
		assert.Equal(t, treeOfSpans(p.Spans), treeStreamed(p.Spans), "%s: the tree", filepath.Base(log))
	}

	run1 := &strace.Run{PID: 7, ID: "a", N: 1, Of: 2}
	run2 := &strace.Run{PID: 7, ID: "b", N: 2, Of: 2}
	r := rand.New(rand.NewPCG(1, 2))
	var spans []strace.Span
	for range 20_000 {
		run := run1
		if r.IntN(3) == 0 {
			run = run2
		}
		inv := uint64(1 + r.IntN(300))
		name := fmt.Sprintf("chip.run.s%d", r.IntN(60)) // past 32 names an invocation: the map
		// The rounds' columns, now and then.
		if r.IntN(6) == 0 {
			name = []string{"chip.run.runner_run.device_wall", "chip.run.runner_run.device_wall.orch", "chip.run.runner_run.device_wall.sched"}[r.IntN(3)]
		}
		depth := 1 + r.IntN(3)
		if r.IntN(8) == 0 {
			name, depth = []string{"chip.run", "http.request"}[r.IntN(2)], 0 // roots of two names
		}
		attrs := ""
		if r.IntN(10) == 0 {
			attrs = "clk=dev"
		}
		spans = append(spans, strace.Span{PID: 7, Run: run, Inv: inv, HID: fmt.Sprintf("h%d", inv%4), Name: name,
			Depth: depth, TS: int64(r.IntN(1000)), Dur: int64(r.IntN(1_000_000)), Attrs: attrs})
	}
	spans = append(spans, strace.Span{PID: 8, Run: &strace.Run{PID: 8, N: 1, Of: 1}, Inv: 1, HID: "h9", Name: "ext.x", Depth: 0, Dur: 5})
	for _, service := range []bool{false, true} {
		want := tablesOfSpans(spans, service)
		require.True(t, strings.Count(want, "callable hid=") >= 4, "precondition: %s", want)
		assert.Equal(t, want, tablesStreamed(spans, service), "service=%v", service)
	}
	rounds := roundsOfSpans(spans)
	require.Contains(t, rounds, "Trimmed Avg Host", "precondition: more than 20 rounds")
	require.Contains(t, rounds, "Effective", "precondition: orch and sched")
	assert.Equal(t, rounds, roundsStreamed(spans))
	tree := treeOfSpans(spans)
	require.Contains(t, tree, "Effective", "precondition: orch and sched under device_wall")
	require.Contains(t, tree, "[dev]", "precondition: device spans")
	assert.Equal(t, tree, treeStreamed(spans))
	assert.Equal(t, "No [STRACE] markers found.\n", tablesStreamed(nil, false))
}
