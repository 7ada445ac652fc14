package simplerotel

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"simpler.dev/log/otel/internal/otlptest"
	"simpler.dev/log/strace"
)

func hostsOf(t testing.TB, logs ...string) []strace.HostLog {
	var hosts []strace.HostLog
	for i, text := range logs {
		p := &strace.Parser{}
		require.NoError(t, p.Read(strings.NewReader(text)))
		hosts = append(hosts, strace.HostLog{Label: fmt.Sprintf("h%d", i), Parser: p})
	}
	return hosts
}

// spansOf is Convert with the traces signal alone (NoRecords): its spans
// and the spans it skipped.
func spansOf(hosts []strace.HostLog, opts *Options) ([]sdktrace.ReadOnlySpan, []Skipped) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.NoRecords = true
	c := Convert(hosts, &o)
	return c.Spans, c.SkippedSpans
}

// recordsOf is Convert with the logs signal alone (NoSpans): its log
// records and the records it skipped.
func recordsOf(hosts []strace.HostLog, opts *Options) ([]sdklog.Record, []Skipped) {
	var o Options
	if opts != nil {
		o = *opts
	}
	o.NoSpans = true
	c := Convert(hosts, &o)
	return c.Records, c.SkippedRecords
}

// span is a bare [STRACE] record of pid's main thread, without attributes.
func span(pid int64, inv uint64, depth int, name string, ts, dur int64) string {
	return otlptest.SpanRecord(pid, pid, inv, name, ts, dur, "", depth)
}

func TestFromLogs(t *testing.T) {
	t.Run("colliding pids on two hosts are two traces", func(t *testing.T) {
		log := otlptest.AnchorRecord(7, 0, 1e18) + span(7, 1, 0, "chip.run", 10, 5)
		spans, skipped := spansOf(hostsOf(t, log, log), nil)
		require.Empty(t, skipped)
		require.Len(t, spans, 4)
		assert.NotEqual(t, spans[0].SpanContext().TraceID(), spans[2].SpanContext().TraceID())
	})
	t.Run("a sibling of equal depth is never a parent", func(t *testing.T) {
		log := otlptest.AnchorRecord(7, 0, 1e18) + span(7, 1, 1, "a", 10, 100) + span(7, 1, 1, "b", 20, 10) + span(7, 1, 0, "root", 0, 200)
		spans, _ := spansOf(hostsOf(t, log), nil)
		parent := map[string]trace.SpanID{}
		id := map[string]trace.SpanID{}
		for _, s := range spans {
			parent[s.Name()], id[s.Name()] = s.Parent().SpanID(), s.SpanContext().SpanID()
		}
		assert.Equal(t, id["root"], parent["a"])
		assert.Equal(t, id["root"], parent["b"])
	})
	t.Run("concurrent threads keep their own parents", func(t *testing.T) {
		// Thread 11: A [0,10] with a [6,8]; thread 12: B [5,20] with b
		// [7,9]. B starts inside A and ends after it: A must stay a's
		// parent. c [30,32] on thread 13 has no depth-0 span of its own
		// but lies inside none either: the root. d [12,14] on thread 13
		// lies inside B only: a handed-over span takes B.
		log := otlptest.AnchorRecord(7, 0, 1e18) +
			otlptest.SpanRecord(7, 11, 1, "a", 6, 2, "", 1) + otlptest.SpanRecord(7, 11, 1, "A", 0, 10, "", 0) +
			otlptest.SpanRecord(7, 12, 1, "b", 7, 2, "", 1) + otlptest.SpanRecord(7, 12, 1, "B", 5, 15, "", 0) +
			otlptest.SpanRecord(7, 13, 1, "c", 30, 2, "", 1) + otlptest.SpanRecord(7, 13, 1, "d", 12, 2, "", 1)
		spans, skipped := spansOf(hostsOf(t, log), nil)
		require.Empty(t, skipped)
		name := map[trace.SpanID]string{}
		parent := map[string]trace.SpanID{}
		for _, s := range spans {
			name[s.SpanContext().SpanID()] = s.Name()
			parent[s.Name()] = s.Parent().SpanID()
		}
		for child, want := range map[string]string{"a": "A", "b": "B", "c": "invocation 1", "d": "B", "A": "invocation 1"} {
			assert.Equal(t, want, name[parent[child]], "parent of %s", child)
		}
	})
	t.Run("a value is a number only when slog writes that number so", func(t *testing.T) {
		attrs := " zip=007 n=-12 z=0 nz=-0 f=1.5 ver=1.10 e=1e+06 e3=1e3 b=true big=18446744073709551615 s=abc"
		log := otlptest.AnchorRecord(7, 0, 1e18) + strings.TrimSuffix(otlptest.SpanRecord(7, 7, 1, "x", 10, 5, "", 0), "\n") + attrs + "\n"
		spans, skipped := spansOf(hostsOf(t, log), nil)
		require.Empty(t, skipped)
		require.Len(t, spans, 2)
		got := map[string]string{}
		for _, kv := range spans[1].Attributes() {
			got[string(kv.Key)] = kv.Value.Type().String() + " " + kv.Value.String()
		}
		for k, want := range map[string]string{
			"zip": "STRING 007", "n": "INT64 -12", "z": "INT64 0", "nz": "FLOAT64 -0", // slog.Float64(math.Copysign(0, -1)) writes -0
			"f": "FLOAT64 1.5", "ver": "STRING 1.10", "e": "FLOAT64 1e+06", "e3": "STRING 1e3",
			"b": "BOOL true", "big": "STRING 18446744073709551615", "s": "STRING abc",
		} {
			assert.Equal(t, want, got[k], k)
		}
	})
	t.Run("a span that began before its file's anchor is placed by it", func(t *testing.T) {
		spans, skipped := spansOf(hostsOf(t, otlptest.AnchorRecord(7, 1000, 1e18)+span(7, 1, 0, "early", 10, 5)), nil)
		require.Empty(t, skipped)
		require.Len(t, spans, 2, "the invocation and its span")
		assert.Equal(t, int64(1e18-990), spans[1].StartTime().UnixNano(), "mono_ns is one clock: 990 ns before the anchor")
	})
	t.Run("a span of a process without an anchor is skipped, not misplaced", func(t *testing.T) {
		spans, skipped := spansOf(hostsOf(t, span(7, 1, 0, "lost", 10, 5)), nil)
		assert.Empty(t, spans)
		require.Len(t, skipped, 1)
		assert.Equal(t, "no [CLOCK_ANCHOR] for its process", skipped[0].Reason)
	})
}

// FuzzFromLogs: whatever a log holds, every span Convert makes has a
// valid, unique id, ends no earlier than it starts, and has its parent in
// its own trace.
func FuzzFromLogs(f *testing.F) {
	f.Add(otlptest.AnchorRecord(7, 0, 1e18) + span(7, 1, 0, "chip.run", 10, 5) + span(7, 1, 1, "chip.run.bind", 11, 2))
	f.Add(span(7, 0, 3, "x", -5, -1) + otlptest.AnchorRecord(7, 9223372036854775807, 9223372036854775807) + span(7, 0, 0, "y", 9223372036854775807, 9223372036854775807))
	f.Fuzz(func(t *testing.T, text string) {
		p := &strace.Parser{}
		if p.Read(strings.NewReader(text)) != nil {
			return
		}
		for _, wall := range []bool{false, true} {
			spans, _ := spansOf([]strace.HostLog{{Label: "h", Parser: p}}, &Options{AssumeWall: wall})
			ids := map[trace.SpanID]trace.TraceID{}
			for _, s := range spans {
				sc := s.SpanContext()
				require.True(t, sc.IsValid())
				_, dup := ids[sc.SpanID()]
				require.False(t, dup, "duplicate span id")
				ids[sc.SpanID()] = sc.TraceID()
				require.False(t, s.EndTime().Before(s.StartTime()), "%s ends before it starts", s.Name())
			}
			for _, s := range spans {
				if ps := s.Parent(); ps.IsValid() {
					tid, ok := ids[ps.SpanID()]
					require.True(t, ok, "%s: parent not sent", s.Name())
					require.Equal(t, s.SpanContext().TraceID(), tid)
				}
			}
		}
	})
}
