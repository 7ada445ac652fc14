package envelope

import (
	"bytes"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestScanSpanReadsWhatIsWritten: every span this package writes is
// found by the reader's grammar with the same fields, wherever it is in a
// line.
func TestScanSpanReadsWhatIsWritten(t *testing.T) {
	s := Span{PID: 12, TID: 34, Inv: 5, HID: 0xfeed, Depth: 2, Name: "a b[c]", TS: 100, Dur: 7}
	body := s.AppendBody(nil, []byte("k=v"))
	for _, prefix := range []string{"", "junk ", "[mono_ns=1][T0x1][TIMING] emit_host_span: "} {
		line := append([]byte(prefix), body...)
		f, heads, next, found := ScanSpan(line, 0, len(line), len(line))
		require.True(t, found, "%q", line)
		assert.Equal(t, 1, heads)
		assert.Equal(t, len(line), next)
		_, _, _, found = ScanSpan(line, next, len(line), len(line))
		assert.False(t, found, "one record")
		assert.Equal(t, []any{int64(12), int64(34), uint64(5), "feed", 2, "a b[c]", int64(100), int64(7), "k=v"},
			[]any{f.PID, f.TID, f.Inv, string(f.HID), f.Depth, DecodeField(string(f.Name)), f.TS, f.Dur, string(f.Attrs)})
	}
}

func TestScanAnchorAndDrops(t *testing.T) {
	var l Line
	a := Anchor{PID: 7, Mono: 10, Wall: 20}
	l.Anchor(1, &a)
	got, ok := ScanAnchor(l.Finish())
	require.True(t, ok)
	assert.Equal(t, a, got)
	_, ok = ScanAnchor([]byte("[mono_ns=1][T0x1][INFO] f: [CLOCK_ANCHOR] v=1 pid=5 mono_ns=10 wall_ns=20"))
	assert.False(t, ok, "an anchor quoted at INFO")

	d := Drops{PID: 9, New: 1, Total: 3, QueueFull: 2, NotAdmitted: 1}
	line := []byte("x " + string(d.AppendBody(nil)) + " y " + string(d.AppendBody(nil)))
	var found []Drops
	ScanDrops(line, len(line), func(d Drops) { found = append(found, d) })
	assert.Equal(t, []Drops{d, d}, found)
	found = nil
	ScanDrops(line, 3, func(d Drops) { found = append(found, d) })
	assert.Equal(t, []Drops{d}, found, "only the reports that start before limit")
}

// FuzzScanSpan: whatever a line holds, the scanner neither panics nor
// reads past its bounds, resumes within them, and every span it finds
// has fields that were digits in the line; a span written after the
// junk is found.
func FuzzScanSpan(f *testing.F) {
	f.Add([]byte("[STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=a ts=1 dur=1 x=1"), 0)
	f.Add([]byte("[STRACE]\tv=9 pid=1 tid=1 inv=1 hid=AB depth=0 name=a ts=1 dur=1 [mono_ns=5][T0xA][INFO] f: t"), 3)
	f.Add([]byte("[STRACE] v=1 pid=99999999999999999999 [STRACE] v="), 1)
	f.Fuzz(func(t *testing.T, junk []byte, cut int) {
		if bytes.Contains(junk, []byte("\n")) {
			return
		}
		s := Span{PID: 1, TID: 2, Inv: 3, HID: 4, Name: "n", TS: 5, Dur: 6}
		line := append(append(bytes.Clone(junk), ' '), s.AppendBody(nil, nil)...)
		limit := min(max(cut, 0), len(line))
		each := func(limit int, fn func(*LooseSpan)) {
			for i := 0; ; {
				f, heads, next, found := ScanSpan(line, i, limit, len(line))
				require.GreaterOrEqual(t, heads, 0)
				require.LessOrEqual(t, next, len(line))
				require.True(t, next > i || !found, "no progress at %d", i)
				if !found {
					return
				}
				fn(&f)
				i = next
			}
		}
		each(limit, func(f *LooseSpan) {
			assert.GreaterOrEqual(t, f.PID, int64(0))
			assert.GreaterOrEqual(t, f.Dur, int64(0))
			assert.NotEmpty(t, f.HID)
		})
		var last *LooseSpan
		each(len(line), func(f *LooseSpan) { c := *f; last = &c })
		require.NotNil(t, last, "the span written after the junk")
		if string(last.Name) == "n" {
			assert.Equal(t, strconv.Itoa(4), string(last.HID))
		}
	})
}

// TestRecordBothWays: a Record written by Line.Record reads back, by
// ParseRecord, as it was written; a fitted one with the cut keys named.
func TestRecordBothWays(t *testing.T) {
	h := Header{Mono: 42, TID: 0x1a, Level: slog.LevelWarn, Func: "main.serve", File: "server.go", Line: 88}
	for _, tt := range []struct {
		name string
		r    Record
		cut  []string
	}{
		{"plain", Record{Header: h, Message: "slow request", Attrs: []slog.Attr{slog.String("path", "/v1/items"), slog.Int64("ms", 412)}}, nil},
		{"typed", Record{Header: h, Message: "m", Attrs: []slog.Attr{slog.Bool("ok", true), slog.Float64("f", 1.5), slog.Duration("d", 1500*time.Millisecond), slog.String("q", "two words")}}, nil},
		{"no source", Record{Header: Header{Mono: 1, TID: 1, Level: slog.LevelInfo, Func: "go"}, Message: "hello"}, nil},
		{"fitted", Record{Header: h, Message: "query failed", Attrs: []slog.Attr{slog.String("sql", strings.Repeat("x", 1024)), slog.String("err", "deadlock detected"), slog.Int64("attempt", 3)}}, []string{"sql"}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var l Line
			fitted := l.Record(&tt.r)
			out := l.Finish()
			assert.Equal(t, tt.cut != nil, fitted)
			assert.LessOrEqual(t, len(out), MaxRecord-1)
			got, err := ParseRecord(out)
			require.NoError(t, err, "%q", out)
			assert.Equal(t, tt.r.Header, got.Header)
			assert.Equal(t, tt.r.Message, got.Message)
			assert.Equal(t, tt.cut, got.Cut)
			require.Len(t, got.Attrs, len(tt.r.Attrs))
			for i, a := range tt.r.Attrs {
				assert.Equal(t, a.Key, got.Attrs[i].Key)
				if !slices.Contains(tt.cut, a.Key) {
					assert.Equal(t, a.Value.Kind(), got.Attrs[i].Value.Kind(), a.Key)
					assert.Equal(t, a.Value.String(), got.Attrs[i].Value.String(), a.Key)
				}
			}
		})
	}
}

// FuzzRecordBothWays: write, read, write again gives the same bytes, for
// every record that was not fitted or cut.
func FuzzRecordBothWays(f *testing.F) {
	f.Add("main.f", "file.go", 3, "hello", "k", "v", int64(7))
	f.Add("a b:c", "", 0, "x\n[STRACE] y", "k y", "\"q\"", int64(-1))
	f.Add("go", "", 0, "msg k=v", "=", "\xff", int64(0))
	f.Fuzz(func(t *testing.T, fn, file string, line int, msg, key, val string, n int64) {
		r := Record{Header: Header{Mono: 5, TID: 6, Level: slog.LevelInfo, Func: fn, File: file, Line: max(line, 0)},
			Message: msg, Attrs: []slog.Attr{slog.String(key, val), slog.Int64("n", n)}}
		var l1 Line
		if l1.Record(&r) {
			return
		}
		out1 := bytes.Clone(l1.Finish())
		if len(out1) == MaxRecord {
			return // cut: the rest of it is gone
		}
		back, err := ParseRecord(out1)
		require.NoError(t, err, "%q", out1)
		var l2 Line
		l2.Record(&back)
		assert.Equal(t, string(out1), string(l2.Finish()), "read back as %+v", back)
	})
}
