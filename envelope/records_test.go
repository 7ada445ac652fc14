package envelope

import (
	"log/slog"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestRecordsRoundTrip(t *testing.T) {
	t.Run("span", func(t *testing.T) {
		var a SpanAttrs
		a.Add(slog.String("zip", "007"))
		a.Add(slog.Group("g", slog.Int("n", -3)))
		a.Add(slog.String("two words", "x=y [z]"))
		in := Span{PID: 4711, TID: 26, Inv: 1 << 40, HID: 0x9f2c, Depth: 2, Name: "chip run\n", TS: 100, Dur: 41250}
		body := in.AppendBody(nil, a.Bytes())
		assert.Equal(t, "[STRACE] v=1 pid=4711 tid=26 inv=1099511627776 hid=9f2c depth=2 name=chip%20run%0A ts=100 dur=41250 zip=007 g.n=-3 two%20words=x%3Dy%20%5Bz%5D", string(body))
		got, attrs, err := ParseSpan(body)
		require.NoError(t, err)
		assert.Equal(t, in, got)
		var pairs []string
		EachSpanAttr(attrs, func(k, v string) bool { pairs = append(pairs, k+"|"+v); return true })
		assert.Equal(t, []string{"zip|007", "g.n|-3", "two words|x=y [z]"}, pairs)
	})
	t.Run("span without attributes keeps its last space", func(t *testing.T) {
		in := Span{PID: 1, TID: 1, Name: "x", TS: 1, Dur: 2}
		body := in.AppendBody(nil, nil)
		assert.True(t, strings.HasSuffix(string(body), " dur=2 "))
		got, attrs, err := ParseSpan(body)
		require.NoError(t, err)
		assert.Equal(t, in, got)
		assert.Empty(t, attrs)
	})
	t.Run("op", func(t *testing.T) {
		in := Op{Name: "mat mul", ID: 7, Detail: "some detail", Target: "gpu", Task: "0"}
		body := in.appendBody(nil)
		assert.Equal(t, "[OP] LAUNCH mat%20mul [id=7] some detail;target=gpu:0", string(body))
		got, err := ParseOp(body)
		require.NoError(t, err)
		assert.Equal(t, Op{Name: "mat mul", ID: 7, Detail: "some detail;target=gpu:0"}, got)

		in = Op{Complete: true, Name: "mat mul", ID: 7}
		body = in.appendBody(nil)
		assert.Equal(t, "[OP] COMPLETE mat%20mul [id=7] ", string(body))
		got, err = ParseOp(body)
		require.NoError(t, err)
		assert.Equal(t, in, got)
		_, err = ParseOp([]byte("[OP] DONE x [id=1] "))
		assert.ErrorIs(t, err, ErrNotRecord, "a phase that is neither")
	})
	t.Run("anchor", func(t *testing.T) {
		now := time.Now()
		in := Anchor{PID: 4711, Mono: Mono(now), Wall: now.UnixNano()}
		got, err := ParseAnchor(in.AppendBody(nil))
		require.NoError(t, err)
		assert.Equal(t, in, got)
	})
	t.Run("run", func(t *testing.T) {
		in := Run{PID: 1, ID: "6f1c2d4e-0a1b-4c2d-8e3f-001122334455", Start: time.Now().UnixNano()}
		got, err := ParseRun(in.AppendBody(nil))
		require.NoError(t, err)
		assert.Equal(t, in, got)
		var l Line
		l.Run(12, 0x1a, &in)
		line := l.Finish()
		p, err := Parse(line[:len(line)-1])
		require.NoError(t, err)
		marker, pid, err := ParseMachine(p)
		require.NoError(t, err, "a run record is a machine record in machine position")
		assert.Equal(t, MarkerRun, marker)
		assert.Equal(t, 1, pid)
	})
	t.Run("drops", func(t *testing.T) {
		in := Drops{PID: 9, New: 1, Total: 3, QueueFull: 1, ClaimExhausted: 0, OutputFailed: 2, NotAdmitted: 0}
		got, err := ParseDrops(in.appendBody(nil))
		require.NoError(t, err)
		assert.Equal(t, in, got)
	})
}

func TestParseRefuses(t *testing.T) {
	for _, tt := range []struct{ name, body string }{
		{"other version", "[STRACE] v=2 pid=1 tid=1 inv=0 hid=0 depth=0 name=x ts=1 dur=1 "},
		{"text glued to dur", "[STRACE] v=1 pid=1 tid=1 inv=0 hid=0 depth=0 name=x ts=1 dur=1x"},
		{"anchor with more text", "[CLOCK_ANCHOR] v=1 pid=1 mono_ns=1 wall_ns=2 x"},
		{"anchor pid 0", "[CLOCK_ANCHOR] v=1 pid=0 mono_ns=1 wall_ns=2"},
		{"drops missing a reason", "[HOSTLOG_DROPS] v=1 pid=1 new=1 total=1 queue_full=1 claim_exhausted=0 output_failed=0"},
		{"op of another phase", "[OP] START x [id=1] "},
		{"run without an identity", "[HOSTLOG_RUN] v=1 pid=1 run= start_ns=2"},
		{"run with an upper-case identity", "[HOSTLOG_RUN] v=1 pid=1 run=ABC start_ns=2"},
		{"run with more text", "[HOSTLOG_RUN] v=1 pid=1 run=abc start_ns=2 x"},
		{"run pid 0", "[HOSTLOG_RUN] v=1 pid=0 run=abc start_ns=2"},
		{"user text", "hello [STRACE] v=1"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			_, _, e1 := ParseSpan([]byte(tt.body))
			_, e2 := ParseAnchor([]byte(tt.body))
			_, e3 := ParseDrops([]byte(tt.body))
			_, e4 := ParseOp([]byte(tt.body))
			_, e5 := ParseRun([]byte(tt.body))
			for _, err := range []error{e1, e2, e3, e4, e5} {
				assert.ErrorIs(t, err, ErrNotRecord)
			}
		})
	}
}

// FuzzParseSpan: whatever a span holds, its body parses back to it (the
// name when not cut), and parsing any bytes never panics.
func FuzzParseSpan(f *testing.F) {
	f.Add("chip.run", "k", "v", uint64(1), int64(5), int64(6))
	f.Add("", "%", "[STRACE]", uint64(0), int64(-1), int64(-1))
	f.Fuzz(func(t *testing.T, name, key, val string, inv uint64, ts, dur int64) {
		var a SpanAttrs
		a.Add(slog.String(key, val))
		in := Span{PID: 3, TID: 4, Inv: inv, HID: inv >> 3, Depth: 1, Name: name, TS: ts, Dur: dur}
		body := in.AppendBody(nil, a.Bytes())
		got, _, err := ParseSpan(body)
		require.NoError(t, err, "%q", body)
		assert.Equal(t, max(ts, 0), got.TS)
		assert.Equal(t, max(dur, 0), got.Dur)
		if enc := appendName(nil, name); name != "" && !strings.HasSuffix(string(enc), "~") {
			assert.Equal(t, name, got.Name)
		}
		_, _, _ = ParseSpan([]byte(name + val))
		_, _ = ParseOp([]byte(name + val))
		_, _ = ParseDrops([]byte(name + val))
		_, _ = ParseRun([]byte(name + val))
	})
}

// FuzzParseRun: a run record's body parses back to the run written, its
// identity "0" when it is not one a record can carry.
func FuzzParseRun(f *testing.F) {
	f.Add(1, "6f1c2d4e-0a1b-4c2d-8e3f-001122334455", int64(1))
	f.Add(7, "", int64(-1))
	f.Add(7, "x y", int64(0))
	f.Fuzz(func(t *testing.T, pid int, id string, start int64) {
		if pid <= 0 {
			return // ParseRun refuses pid 0 and below, as ParseAnchor does
		}
		got, err := ParseRun((&Run{PID: pid, ID: id, Start: start}).AppendBody(nil))
		require.NoError(t, err)
		want := id
		if !validRunID(id) {
			want = "0"
		}
		assert.Equal(t, Run{PID: pid, ID: want, Start: start}, got)
	})
}

// TestLineSpanAtTheBound: a span record with every number at its largest
// and a full attrs field passes 512 bytes on a 64-bit platform; it is cut
// like any record, on the copying path, and what fits is the same bytes
// as the short path writes. On a 32-bit one (make test-arm) the pid and
// the depth, ints, are at most ten digits and the record fits: it is
// written whole.
func TestLineSpanAtTheBound(t *testing.T) {
	var attrs SpanAttrs
	attrs.Add(slog.String("k", strings.Repeat("v", 300)))
	big := Span{PID: math.MaxInt, TID: math.MaxInt64, Inv: math.MaxUint64, HID: math.MaxUint64, Depth: math.MaxInt,
		Name: strings.Repeat("n", 100), TS: math.MaxInt64, Dur: math.MaxInt64}
	var l Line
	l.Span(math.MaxInt64, math.MaxInt64, &big, attrs.Bytes())
	rec := l.Finish()
	want := "[mono_ns=9223372036854775807][T0x7fffffffffffffff][TIMING] emit_host_span: " + string(big.AppendBody(nil, attrs.Bytes()))
	if strconv.IntSize == 32 {
		require.Less(t, len(want), MaxRecord)
		assert.Equal(t, want+"\n", string(rec))
	} else {
		require.Len(t, rec, MaxRecord)
		assert.True(t, strings.HasSuffix(string(rec), "~\n"))
		assert.Equal(t, want[:MaxRecord-2], string(rec[:MaxRecord-2]))
	}

	small := Span{PID: 1, TID: 2, Inv: 3, HID: 4, Depth: 0, Name: "x", TS: 5, Dur: 6}
	l = Line{}
	l.Span(7, 8, &small, attrs.Bytes())
	assert.Equal(t, "[mono_ns=7][T0x8][TIMING] emit_host_span: "+string(small.AppendBody(nil, attrs.Bytes()))+"\n", string(l.Finish()))
}
