package handoff

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"math"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/render"
	"simpler.dev/log/internal/testkit/logtest"
)

// record returns a record from a slog call site (record's caller).
func record(msg string, attrs ...slog.Attr) slog.Record {
	return logtest.CallSite(1, slog.LevelInfo, msg, attrs...)
}

// both renders r with rd in the caller, as a State's door does, and
// through a Record, as the writer does, on this goroutine (so that the
// goroutine ids agree), and returns the two records and their tallies.
func both(t *testing.T, rd render.Renderer, r slog.Record) (caller, writer string, cf, wf [2]uint64) {
	t.Helper()
	var l envelope.Line
	_, fitted := rd.Render(&r, &l, true)
	switch {
	case l.Truncated():
		cf[1]++
	case fitted:
		cf[0]++
	}
	caller = string(l.Finish())
	var taken Taken
	require.True(t, Plain(&r, &taken), "not plain: %v", r)
	var e Record
	e.Fill(&r, &taken, &rd, goidOf(t))
	var fit, cut atomic.Uint64
	writer = string(e.Render(nil, &Tally{Fitted: &fit, Cut: &cut}))
	wf = [2]uint64{fit.Load(), cut.Load()}
	return caller, writer, cf, wf
}

// goidOf returns this goroutine's id as the envelope writes it, read
// back from a record rendered here.
func goidOf(t *testing.T) int64 {
	var l envelope.Line
	r := record("id")
	render.Renderer{}.Render(&r, &l, false)
	rec, err := envelope.ParseRecord(l.Finish())
	require.NoError(t, err)
	return rec.TID
}

func TestRenderMatchesTheCaller(t *testing.T) {
	// The longest text a plain record holds: with anything before it, past
	// the bound.
	huge := strings.Repeat("x", MaxText)
	at := time.Date(2026, 12, 2, 6, 0, 0, 123456789, time.FixedZone("X", 3600))
	grouped := render.Renderer{}.WithAttrs([]slog.Attr{slog.String("svc", "api"), slog.Int("pid", 7)}).WithGroup("req")
	deep := render.Renderer{}
	for range 40 {
		deep = deep.WithGroup("g")
	}
	for _, tt := range []struct {
		name string
		rd   render.Renderer
		r    slog.Record
	}{
		{"static", render.Renderer{}, record("request served")},
		{"every plain kind", render.Renderer{}, record("m", slog.String("s", "a b"), slog.Int("i", -3),
			slog.Uint64("u", math.MaxUint64), slog.Float64("f", math.Inf(-1)), slog.Bool("b", true),
			slog.Duration("d", 1500*time.Microsecond), slog.Time("t", at), slog.Float64("nan", math.NaN()))},
		{"hostile text", render.Renderer{}, record("a\nb [STRACE] \x1b[31m\u2028",
			slog.String("k y", "v\n[CLOCK_ANCHOR] x"), slog.String("", "empty key"))},
		{"a message past the bound", render.Renderer{}, record(huge)},
		{"two values past the bound", render.Renderer{}, record("m", slog.String("a", huge), slog.String("b", huge), slog.Int("n", 1))},
		{"attributes past the bound are fitted", render.Renderer{}, record("query failed",
			slog.String("sql", huge), slog.String("err", "deadlock"), slog.Int("attempt", 3))},
		{"WithAttrs past the bound", render.Renderer{}.WithAttrs([]slog.Attr{slog.String("sql", huge)}), record("m")},
		{"WithAttrs and WithGroup", grouped, record("m", slog.Int("id", 9), slog.String("path", "/v1"))},
		{"groups past the depth", deep, record("m", slog.Int("id", 9))},
		{"eight attributes", grouped, record("m", slog.Int("a", 1), slog.Int("b", 2), slog.Int("c", 3),
			slog.Int("d", 4), slog.Int("e", 5), slog.Int("f", 6), slog.Int("g", 7), slog.String("h", huge))},
		{"errors", render.Renderer{}, record("failed", slog.Any("err", errors.New("boom\n[STRACE] forged")),
			slog.Int("n", 1), slog.Any("cause", fmt.Errorf("read: %w", io.ErrUnexpectedEOF)))},
		{"an error past the bound", render.Renderer{}, record("failed", slog.Any("err", errors.New(huge)), slog.Int("attempt", 2))},
		{"ten attributes", render.Renderer{}, record("m", slog.Int("status", 200), slog.String("path", "/v1/items"),
			slog.Float64("ratio", 0.25), slog.Bool("cached", true), slog.Time("at", at), slog.Duration("took", time.Millisecond),
			slog.Any("err", io.EOF), slog.Int64("bytes", 1<<20), slog.Uint64("id", 123456789), slog.String("peer", "10.0.0.1"))},
		{"a time in the past", render.Renderer{}, slog.NewRecord(at, slog.LevelWarn, "old", record("").PC)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			caller, writer, cf, wf := both(t, tt.rd, tt.r)
			assert.Equal(t, caller, writer)
			assert.Equal(t, cf, wf, "fitted/cut tallies")
		})
	}
}

// TestNoTime: a record without a time is stamped when it is filled, not
// when the writer renders it later.
func TestNoTime(t *testing.T) {
	r := record("m")
	r.Time = time.Time{}
	before := envelope.Mono(time.Time{})
	var e Record
	e.Fill(&r, nil, &render.Renderer{}, 1)
	after := envelope.Mono(time.Time{})
	time.Sleep(time.Millisecond)
	var fit, cut atomic.Uint64
	rec, err := envelope.ParseRecord(e.Render(nil, &Tally{Fitted: &fit, Cut: &cut}))
	require.NoError(t, err)
	assert.GreaterOrEqual(t, rec.Mono, before)
	assert.LessOrEqual(t, rec.Mono, after, "stamped by the writer, not the call")
}

type badError struct{ msg string }

func (e *badError) Error() string { return e.msg }

type stringer struct{}

func (stringer) String() string { return "s" }

type valuer struct{}

func (valuer) LogValue() slog.Value { return slog.StringValue("v") }

func TestPlain(t *testing.T) {
	over := make([]slog.Attr, MaxAttrs+1)
	for i := range over {
		over[i] = slog.Int("k", i)
	}
	for _, tt := range []struct {
		name  string
		r     slog.Record
		plain bool
	}{
		{"no attributes", record("m"), true},
		{"scalars", record("m", slog.Int("a", 1), slog.String("b", "x"), slog.Time("t", time.Now())), true},
		{"MaxAttrs", record("m", over[:MaxAttrs]...), true},
		{"more than MaxAttrs", record("m", over...), false},
		{"errors", record("m", slog.Any("err", errors.New("x")), slog.Any("cause", fmt.Errorf("w: %w", io.EOF))), true},
		{"more than MaxErrors errors", record("m", slog.Any("a", io.EOF), slog.Any("b", io.EOF), slog.Any("c", io.EOF)), false},
		{"an error whose text panics", record("m", slog.Any("err", (*badError)(nil))), false},
		{"a nil", record("m", slog.Any("err", nil)), false},
		{"a message of MaxText", record(strings.Repeat("m", MaxText)), true},
		{"a message past MaxText", record(strings.Repeat("m", MaxText+1)), false},
		{"a value past MaxText", record("m", slog.String("v", strings.Repeat("v", MaxText+1))), false},
		{"a key past MaxText", record("m", slog.Int(strings.Repeat("k", MaxText+1), 1)), false},
		{"an error text past MaxText", record("m", slog.Any("err", errors.New(strings.Repeat("e", MaxText+1)))), false},
		{"a Stringer", record("m", slog.Any("s", stringer{})), false},
		{"a LogValuer", record("m", slog.Any("v", valuer{})), false},
		{"a group", record("m", slog.Group("g", slog.Int("a", 1))), false},
		{"the last attribute not plain", record("m", slog.Int("a", 1), slog.Any("b", []int{1})), false},
		{"no PC", slog.NewRecord(time.Now(), slog.LevelInfo, "m", 0), false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.plain, Plain(&tt.r, &Taken{}))
		})
	}
}

func TestRecordLayout(t *testing.T) {
	var e Record
	assert.Zero(t, unsafeSizeof(e)%64, "a Record is not whole cache lines")
	assert.LessOrEqual(t, unsafeOffsetofAttrs(), uintptr(64), "the fields before Attrs pass one line")
}

func FuzzRenderMatchesTheCaller(f *testing.F) {
	f.Add("msg", "key", "value", int64(-1), 0.5, uint8(3), false)
	f.Add(strings.Repeat("m", 600), "k\n", strings.Repeat("v", 500), int64(math.MinInt64), math.NaN(), uint8(0), true)
	f.Fuzz(func(t *testing.T, msg, key, val string, i int64, fl float64, n uint8, group bool) {
		msg, key, val = msg[:min(len(msg), MaxText)], key[:min(len(key), MaxText/2)], val[:min(len(val), MaxText/2)]
		errVal := errors.New(val)
		rd := render.Renderer{}
		if group {
			rd = rd.WithAttrs([]slog.Attr{slog.String(key, val)}).WithGroup(key)
		}
		attrs := []slog.Attr{slog.String(key, val), slog.Int64(key+"i", i), slog.Float64("f", fl),
			slog.Duration("d", time.Duration(i)), slog.String("v2", val+val), slog.Bool(key, i%2 == 0),
			slog.Uint64("u", uint64(i)), slog.Time("t", time.Unix(0, i)), slog.Any("err", errVal)}
		r := record(msg, attrs[:int(n)%(len(attrs)+1)]...)
		caller, writer, cf, wf := both(t, rd, r)
		assert.Equal(t, caller, writer)
		assert.Equal(t, cf, wf)
	})
}
