package render

import (
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/origin"
	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/internal/testkit/racedetect"
)

// record returns a record from a slog call site (record's caller) with
// attrs.
func record(msg string, attrs ...slog.Attr) slog.Record {
	return logtest.CallSite(1, slog.LevelError, msg, attrs...)
}

// rendered renders r with rd and reads the finished record back.
func rendered(t *testing.T, rd Renderer, r slog.Record) (envelope.Record, string, bool) {
	t.Helper()
	var l envelope.Line
	o, fitted := rd.Render(&r, &l, false)
	out := string(l.Finish())
	if o != nil && (o.Kind == origin.Span || o.Kind == origin.Op) {
		return envelope.Record{}, out, fitted
	}
	rec, err := envelope.ParseRecord([]byte(out))
	require.NoError(t, err, "%q", out)
	return rec, out, fitted
}

func keys(r envelope.Record) []string {
	var k []string
	for _, a := range r.Attrs {
		k = append(k, a.Key)
	}
	return k
}

// TestRenderFits: a user record with attributes that passes the bound is
// fitted, whether its attributes are its own, the handler's or both, and
// whoever made it.
func TestRenderFits(t *testing.T) {
	huge := strings.Repeat("x", 1024)
	t.Run("the 1 KB query keeps err and attempt", func(t *testing.T) {
		rec, out, fitted := rendered(t, Renderer{}, record("query failed",
			slog.String("sql", huge), slog.String("err", "deadlock detected"), slog.Int("attempt", 3)))
		assert.True(t, fitted)
		assert.LessOrEqual(t, len(out), envelope.MaxRecord-1)
		assert.True(t, strings.HasSuffix(out, `"~ err="deadlock detected" attempt=3`+"\n"), "%q", out)
		assert.Equal(t, []string{"sql", "err", "attempt"}, keys(rec))
		assert.Equal(t, []string{"sql"}, rec.Cut)
		assert.Equal(t, "render.TestRenderFits.func1", rec.Func, "the caller's position stays")
		assert.Equal(t, "query failed", rec.Message)
	})
	t.Run("WithAttrs and WithGroup attributes are fitted too", func(t *testing.T) {
		rd := Renderer{}.WithAttrs([]slog.Attr{slog.String("sql", huge), slog.Int("pid", 7)}).
			WithGroup("req").WithAttrs([]slog.Attr{slog.String("note", huge)})
		rec, out, fitted := rendered(t, rd, record("m", slog.Int("id", 9)))
		assert.True(t, fitted)
		assert.LessOrEqual(t, len(out), envelope.MaxRecord-1)
		assert.Equal(t, []string{"sql", "pid", "req.note", "req.id"}, keys(rec))
		assert.Equal(t, []string{"sql", "req.note"}, rec.Cut)
	})
	t.Run("WithAttrs alone, the record without attributes of its own", func(t *testing.T) {
		rd := Renderer{}.WithAttrs([]slog.Attr{slog.String("sql", huge), slog.Int("pid", 7)})
		rec, _, fitted := rendered(t, rd, record("m"))
		assert.True(t, fitted)
		assert.Equal(t, []string{"sql", "pid"}, keys(rec))
	})
	t.Run("a record made outside slog (Emit) with attributes", func(t *testing.T) {
		o := origin.NewOutside(envelope.Header{Func: "device", File: "kernel.cc", Line: 12})
		now := time.Now()
		o.Bind(now)
		r := slog.NewRecord(now, slog.LevelWarn, "dma", 0)
		r.AddAttrs(o.Attr(), slog.String("dump", huge), slog.Int("ch", 2))
		rec, _, fitted := rendered(t, Renderer{}, r)
		assert.True(t, fitted)
		assert.Equal(t, "device", rec.Func)
		assert.Equal(t, "kernel.cc", rec.File)
		assert.Equal(t, []string{"dump", "ch"}, keys(rec), "the origin is not an attribute")
		assert.Equal(t, []string{"dump"}, rec.Cut)
	})
}

// TestRenderKeepsTheCut: machine records and text of foreign origin keep
// the bound's rule byte for byte.
func TestRenderKeepsTheCut(t *testing.T) {
	long := strings.Repeat("y", 900)
	h := envelope.Header{Func: "sim", File: "aicore.cc", Line: 3}
	for _, tc := range []struct {
		name string
		r    func() slog.Record
	}{
		{"a forwarded line: no attributes", func() slog.Record {
			o, now := origin.NewOutside(h), time.Now()
			o.Bind(now)
			r := slog.NewRecord(now, slog.LevelInfo, long, 0)
			r.AddAttrs(o.Attr())
			return r
		}},
		{"a verified machine record", func() slog.Record {
			msg := envelope.MarkerSpan + " v=1 " + long
			o, now := origin.NewMachine(h, msg), time.Now()
			o.Bind(now)
			r := slog.NewRecord(now, slog.LevelInfo, msg, 0)
			r.AddAttrs(o.Attr(), slog.String("k", long))
			return r
		}},
		{"a call site's record without attributes", func() slog.Record { return record(long) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var l envelope.Line
			r := tc.r()
			_, fitted := Renderer{}.WithGroup("g").Render(&r, &l, false)
			assert.False(t, fitted)
			out := l.Finish()
			assert.Len(t, out, envelope.MaxRecord)
			assert.True(t, strings.HasSuffix(string(out), "y~\n"), "%q", out[len(out)-8:])
		})
	}
	t.Run("a span", func(t *testing.T) {
		sp := envelope.Span{PID: 1, TID: 2, Name: "n", TS: 3, Dur: 4}
		var o origin.Origin
		now := time.Now()
		o.SetSpan(&sp, nil, now, "")
		r := slog.NewRecord(now, slog.LevelInfo, long, 0)
		r.AddAttrs(o.Attr(), slog.String("k", long))
		var l envelope.Line
		_, fitted := Renderer{}.Render(&r, &l, false)
		assert.False(t, fitted)
		span, _, err := envelope.ParseSpan(mustParse(t, l.Finish()).Body)
		require.NoError(t, err)
		assert.True(t, strings.HasSuffix(span.Name, "~"), "the name bounded by its field, as ever")
	})
}

func mustParse(t *testing.T, line []byte) envelope.Parsed {
	t.Helper()
	p, err := envelope.Parse(line)
	require.NoError(t, err)
	return p
}

// TestRenderAllocs: a record that fits allocates nothing, and neither
// does one that is fitted (its second and third pass run on pooled
// scratch).
func TestRenderAllocs(t *testing.T) {
	racedetect.SkipAllocs(t)
	plain := record("request served", slog.String("path", "/v1/items"), slog.Int("status", 200), slog.Duration("took", time.Millisecond))
	big := record("query failed", slog.String("sql", strings.Repeat("x", 2048)), slog.String("err", "deadlock detected"), slog.Int("attempt", 3))
	rd := Renderer{}.WithAttrs([]slog.Attr{slog.String("svc", "api"), slog.String("blob", strings.Repeat("b", 900))}).WithGroup("req")
	for _, tc := range []struct {
		name string
		rd   Renderer
		r    slog.Record
	}{
		{"fits", Renderer{}, plain},
		{"fitted", Renderer{}, big},
		{"fitted with WithAttrs", rd, big},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Zero(t, testing.AllocsPerRun(200, func() {
				var l envelope.Line
				tc.rd.Render(&tc.r, &l, false)
				l.Finish()
			}))
		})
	}
}

// TestRenderFitsConcurrently: goroutines fitting records at once each get
// their own record (the scratch is pooled, never shared).
func TestRenderFitsConcurrently(t *testing.T) {
	const workers, per = 8, 200
	var wg sync.WaitGroup
	errs := make(chan string, workers)
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			key := fmt.Sprint("w", w)
			for range per {
				r := record("m", slog.String("blob", strings.Repeat(key, 500)), slog.String("who", key))
				var l envelope.Line
				if _, fitted := (Renderer{}).Render(&r, &l, false); !fitted {
					errs <- "not fitted"
					return
				}
				if out := string(l.Finish()); !strings.HasSuffix(out, `"~ who=`+key+"\n") || !strings.Contains(out, `blob="`+key+key) {
					errs <- out
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Errorf("%q", e)
	}
}
