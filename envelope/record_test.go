package envelope

import (
	"bytes"
	"log/slog"
	"math"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

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
// every record that was not fitted or cut; and every record, fitted and
// cut ones too, reads back with the clock (a negative one written 0) and
// the lane it was given.
func FuzzRecordBothWays(f *testing.F) {
	f.Add("main.f", "file.go", 3, "hello", "k", "v", int64(7), int64(5), int64(6))
	f.Add("a b:c", "", 0, "x\n[STRACE] y", "k y", "\"q\"", int64(-1), int64(5), int64(6))
	f.Add("go", "", 0, "msg k=v", "=", "\xff", int64(0), int64(5), int64(6))
	// Clocks and lanes at their extremes.
	f.Add("main.f", "file.go", 3, "clock", "k", "v", int64(1), int64(-1), int64(-1))
	f.Add("main.f", "file.go", 3, "clock", "k", "v", int64(1), int64(math.MinInt64), int64(math.MinInt64))
	f.Add("main.f", "file.go", 3, "clock", "k", "v", int64(1), int64(math.MaxInt64), int64(math.MaxInt64))
	f.Add("main.f", "file.go", 3, "clock", "k", "v", int64(1), int64(0), int64(0))
	f.Fuzz(func(t *testing.T, fn, file string, line int, msg, key, val string, n, mono, tid int64) {
		r := Record{Header: Header{Mono: mono, TID: tid, Level: slog.LevelInfo, Func: fn, File: file, Line: max(line, 0)},
			Message: msg, Attrs: []slog.Attr{slog.String(key, val), slog.Int64("n", n)}}
		var l1 Line
		fitted := l1.Record(&r)
		out1 := bytes.Clone(l1.Finish())
		p, err := Parse(out1)
		require.NoError(t, err, "%q", out1)
		require.Equal(t, max(mono, 0), p.Mono, "%q", out1)
		require.Equal(t, tid, p.TID, "%q", out1)
		if fitted {
			return
		}
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
