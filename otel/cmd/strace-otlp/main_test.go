package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"

	"simpler.dev/log/otel/internal/otlptest"
)

const anchorWall = 1_700_000_000_000_000_000

// testLog is one process's log: an anchor at mono 1000, an invocation of
// three nested spans, a device-clock span, and a span of a second process
// with no anchor.
func testLog() string {
	var b strings.Builder
	b.WriteString(otlptest.AnchorRecord(41, 1000, anchorWall))
	rec := func(pid, tid, inv int, depth int, name string, ts, dur int64, attrs string) {
		fmt.Fprintf(&b, "[mono_ns=%d][T0x%x][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=%d inv=%d hid=9f2c depth=%d name=%s ts=%d dur=%d %s\n",
			ts+dur, tid, pid, tid, inv, depth, name, ts, dur, attrs)
	}
	rec(41, 7, 3, 2, "chip.run.bind.args", 2_100, 50, "bytes=4096 ratio=0.25 cached=true phase=args")
	rec(41, 7, 3, 1, "chip.run.bind", 2_000, 300, "")
	rec(41, 7, 3, 2, "chip.run.runner_run.device_wall", 5, 40, "clk=dev")
	rec(41, 7, 3, 0, "chip.run", 1_500, 1_000, "rank=0")
	rec(41, 8, 0, 0, "ext.pypto.decode_layer", 1_200, 100, "")
	rec(52, 9, 1, 0, "chip.run", 10, 20, "")
	return b.String()
}

func writeLog(t *testing.T) string {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "node-a")
	require.NoError(t, os.Mkdir(dir, 0o755))
	path := filepath.Join(dir, "host.41.log")
	require.NoError(t, os.WriteFile(path, []byte(testLog()), 0o644))
	return path
}

// collect returns the received spans by name (the test logs' names are
// unique).
func collect(sink *consumertest.TracesSink) map[string]otlptest.Span {
	out := map[string]otlptest.Span{}
	for _, s := range otlptest.Spans(sink) {
		out[s.Name] = s
	}
	return out
}

func TestSendToCollector(t *testing.T) {
	httpURL, grpcURL, sink := otlptest.Receiver(t)
	for _, tt := range []struct{ name, endpoint string }{{"OTLP/HTTP", httpURL}, {"OTLP/gRPC", grpcURL}} {
		t.Run(tt.name, func(t *testing.T) {
			sink.Reset()
			var out, errb bytes.Buffer
			code := run([]string{"--endpoint", tt.endpoint, "--service-name", "test", writeLog(t)}, nil, &out, &errb)
			require.Equal(t, 0, code, errb.String())
			assert.Contains(t, out.String(), "Sent 5 spans and 0 log records to "+tt.endpoint+" (2 not sent)")
			assert.Contains(t, errb.String(), "warning: 1 span(s) not sent: device clock")
			assert.Contains(t, errb.String(), "warning: 1 span(s) not sent: no [CLOCK_ANCHOR] for its process")

			got := collect(sink)
			require.Len(t, got, 5, "%v", got)
			root, run, bind, args := got["invocation 3"], got["chip.run"], got["chip.run.bind"], got["chip.run.bind.args"]
			t.Run("one trace per invocation, the invocation its root", func(t *testing.T) {
				assert.Equal(t, root.TraceID, run.TraceID)
				assert.Equal(t, root.TraceID, args.TraceID)
				assert.True(t, root.Parent.IsEmpty())
				assert.Equal(t, int64(3), root.Attrs["simpler.inv"])
				assert.Equal(t, "9f2c", root.Attrs["simpler.hid"])
				ext := got["ext.pypto.decode_layer"]
				assert.NotEqual(t, root.TraceID, ext.TraceID, "a span outside any invocation is in a trace of its own")
				assert.True(t, ext.Parent.IsEmpty(), "and its root, as live export makes it")
			})
			t.Run("parents from the nesting", func(t *testing.T) {
				assert.Equal(t, root.ID, run.Parent)
				assert.Equal(t, run.ID, bind.Parent)
				assert.Equal(t, bind.ID, args.Parent)
			})
			t.Run("wall times exact to the ns", func(t *testing.T) {
				assert.Equal(t, int64(anchorWall+500), run.Start)
				assert.Equal(t, int64(anchorWall+1500), run.End)
				assert.Equal(t, int64(anchorWall+1100), args.Start)
				assert.Equal(t, int64(50), args.End-args.Start)
				assert.Equal(t, run.Start, root.Start)
				assert.Equal(t, run.End, root.End)
			})
			t.Run("attributes typed", func(t *testing.T) {
				assert.Equal(t, int64(4096), args.Attrs["bytes"])
				assert.Equal(t, 0.25, args.Attrs["ratio"])
				assert.Equal(t, true, args.Attrs["cached"])
				assert.Equal(t, "args", args.Attrs["phase"])
				assert.Equal(t, int64(2), args.Attrs["simpler.depth"])
				assert.Equal(t, int64(7), args.Attrs["thread.id"])
				assert.Equal(t, "pypto", got["ext.pypto.decode_layer"].Attrs["simpler.producer"])
			})
			t.Run("resource", func(t *testing.T) {
				assert.Equal(t, "node-a", run.Host)
				assert.Equal(t, "test", run.Service)
				assert.Equal(t, int64(41), run.PID)
			})
		})
	}
}

// TestSendTwiceSameIDs: ids come from host, pid, inv and position, so a
// store that deduplicates by id keeps one copy of a log sent twice.
func TestSendTwiceSameIDs(t *testing.T) {
	httpURL, _, sink := otlptest.Receiver(t)
	log := writeLog(t)
	ids := func() map[string]pcommon.SpanID {
		sink.Reset()
		var out, errb bytes.Buffer
		require.Equal(t, 0, run([]string{"--endpoint", httpURL, log}, nil, &out, &errb), errb.String())
		m := map[string]pcommon.SpanID{}
		for name, s := range collect(sink) {
			m[name] = s.ID
		}
		return m
	}
	first, second := ids(), ids()
	require.Len(t, first, 5)
	assert.Equal(t, first, second)
}

func TestAssumeWall(t *testing.T) {
	httpURL, _, sink := otlptest.Receiver(t)
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"--endpoint", httpURL, "--assume-wall", writeLog(t)}, nil, &out, &errb), errb.String())
	assert.Contains(t, out.String(), "Sent 8 spans")
	got := collect(sink)
	assert.Equal(t, int64(10), got["invocation 1"].Start, "pid 52's ts taken as Unix ns")
	assert.Equal(t, "device", got["chip.run.runner_run.device_wall"].Attrs["simpler.clock"])
}

// TestAllSkipped: a log whose every span is skipped (no anchor) sends
// nothing and exits 1, saying so; the collector receives nothing.
func TestAllSkipped(t *testing.T) {
	httpURL, _, sink := otlptest.Receiver(t)
	log := filepath.Join(t.TempDir(), "host.7.log")
	require.NoError(t, os.WriteFile(log, []byte(otlptest.SpanRecord(7, 7, 1, "chip.run", 10, 5, "", 0)), 0o600))
	var out, errb bytes.Buffer
	assert.Equal(t, 1, run([]string{"--endpoint", httpURL, log}, nil, &out, &errb))
	assert.Contains(t, errb.String(), "strace-otlp: nothing sent: the logs held 1 span(s) and 0 record(s) at or above INFO, and none could be placed on the wall clock")
	assert.Contains(t, errb.String(), "warning: 1 span(s) not sent:")
	assert.Empty(t, out.String())
	assert.Empty(t, collect(sink))
}

// TestCollectorDown: nothing listens; the command says how many spans were
// sent and exits 1, within its timeout.
func TestCollectorDown(t *testing.T) {
	for _, endpoint := range []string{"http://" + otlptest.FreeAddr(t), "grpc://" + otlptest.FreeAddr(t)} {
		t.Run(endpoint[:strings.Index(endpoint, ":")], func(t *testing.T) {
			var out, errb bytes.Buffer
			code := run([]string{"--endpoint", endpoint, "--timeout", "5s", writeLog(t)}, nil, &out, &errb)
			assert.Equal(t, 1, code)
			assert.Contains(t, errb.String(), "0 of 5 spans and 0 of 0 log records sent to "+endpoint+" before:")
		})
	}
}

func TestUsage(t *testing.T) {
	for _, tt := range []struct {
		name string
		args []string
		want string
	}{
		{"no endpoint", []string{"x.log"}, "--endpoint is required"},
		{"no log", []string{"--endpoint", "http://127.0.0.1:1"}, "no LOG given"},
		{"bad scheme", []string{"--endpoint", "ftp://h:1", "x.log"}, `scheme "ftp"`},
		{"too many labels", []string{"--endpoint", "http://127.0.0.1:1", "--label", "a", "--label", "b", "x.log"}, "more --label than LOG"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var out, errb bytes.Buffer
			assert.Equal(t, 2, run(tt.args, nil, &out, &errb))
			assert.Contains(t, errb.String(), tt.want)
		})
	}
	t.Run("help", func(t *testing.T) {
		var out, errb bytes.Buffer
		assert.Equal(t, 0, run([]string{"-h"}, nil, &out, &errb))
		assert.Contains(t, out.String(), "-assume-wall")
	})
}

// TestSelection: --since and --until send the spans that start in the
// window, --pid a process's; what is left out is said on stderr; a time
// strace-otlp cannot read is a usage error.
func TestSelection(t *testing.T) {
	httpURL, _, sink := otlptest.Receiver(t)
	at := func(ns int64) string { return time.Unix(0, anchorWall+ns).UTC().Format(time.RFC3339Nano) }
	var out, errb bytes.Buffer
	require.Equal(t, 0, run([]string{"--endpoint", httpURL, "--signals", "traces", "--since", at(900), "--until", at(2000), writeLog(t)}, nil, &out, &errb), errb.String())
	got := collect(sink)
	assert.Contains(t, got, "chip.run.bind", "starts 1000 ns after the anchor: in the window")
	assert.Contains(t, got, "chip.run.bind.args")
	assert.NotContains(t, got, "ext.pypto.decode_layer", "starts 200 ns after the anchor: before the window")
	assert.Contains(t, errb.String(), "the selection (--since, --until, --pid, --run) left out 4 spans, 2 of them for want of a wall-clock time; 0 files not read") // the device-clock span and pid 52's

	sink.Reset()
	out.Reset()
	errb.Reset()
	assert.Equal(t, 1, run([]string{"--endpoint", httpURL, "--pid", "52", writeLog(t)}, nil, &out, &errb), "pid 52's one span has no anchor: nothing to send")
	assert.Empty(t, collect(sink))

	for _, bad := range [][]string{{"--since", "yesterday"}, {"--pid", "x"}} {
		errb.Reset()
		assert.Equal(t, 2, run(append([]string{"--endpoint", httpURL}, append(bad, writeLog(t))...), nil, &out, &errb), "%v", bad)
		assert.Contains(t, errb.String(), "strace-otlp: "+bad[0])
	}
}

// TestMaxSpans: a LOG past --max-spans (of the selection) sends nothing
// and asks for a window, before anything is held or sent; a selection
// under it, or --max-spans 0, sends.
func TestMaxSpans(t *testing.T) {
	httpURL, _, sink := otlptest.Receiver(t)
	log := writeLog(t) // 6 spans
	var out, errb bytes.Buffer
	assert.Equal(t, 1, run([]string{"--endpoint", httpURL, "--max-spans", "4", log}, nil, &out, &errb))
	assert.Contains(t, errb.String(), "strace-otlp: "+log+" holds 6 spans, past --max-spans 4 (a LOG is held whole while it is sent")
	assert.Contains(t, errb.String(), "select a window (--since, --until), a process (--pid) or a run (--run), or raise --max-spans (0: no bound)")
	assert.Empty(t, collect(sink), "nothing sent")
	assert.Empty(t, out.String())

	errb.Reset()
	assert.Equal(t, 1, run([]string{"--endpoint", httpURL, "--max-spans", "4", "--pid", "41", log}, nil, &out, &errb))
	assert.Contains(t, errb.String(), "keeps 5 spans of the selection (of 6), past --max-spans 4")

	for _, args := range [][]string{{"--max-spans", "5", "--pid", "41"}, {"--max-spans", "0"}} {
		sink.Reset()
		errb.Reset()
		require.Equal(t, 0, run(append(append([]string{"--endpoint", httpURL}, args...), log), nil, &out, &errb), "%v: %s", args, errb.String())
		assert.Contains(t, collect(sink), "chip.run", "%v", args)
	}
}
