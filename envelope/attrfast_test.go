package envelope

import (
	"errors"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// TestAttrFastPath: the shortcut Attr takes for top-level scalar
// attributes writes exactly what the general walk writes, at every fill
// level of the line (so near the bound too).
func TestAttrFastPath(t *testing.T) {
	attrs := []slog.Attr{
		slog.Int("n", -42), slog.Int64("big", 1<<62), slog.Uint64("u", 1<<63), slog.Int("zero", 0),
		slog.String("s", "two words"), slog.String("k", ""), slog.String("m", "[STRACE] x"),
		slog.Float64("f", 0.25), slog.Bool("b", true), slog.Duration("d", 1500*time.Microsecond),
		slog.Time("t", time.Date(2026, 6, 1, 10, 0, 0, 123456789, time.UTC)),
		slog.Any("err", errors.New("boom")), slog.Any("nil", nil),
		slog.Int("key with space", 1), slog.Int("", 7), slog.Int("k=v", 1), slog.Int("ключ", 1),
	}
	for _, a := range attrs {
		t.Run(a.Key+"="+a.Value.String(), func(t *testing.T) {
			for fill := 0; fill <= maxContent; fill += 7 {
				var fast, slow Line
				pad := strings.Repeat("x", fill)
				fast.raw(pad)
				slow.raw(pad)
				fast.Attr("", 0, a)
				slow.attr("", 0, nil, a, 0)
				if !assert.Equal(t, string(slow.Finish()), string(fast.Finish()), "fill %d", fill) {
					return
				}
			}
		})
	}
}

// TestValueInPlace: a float, duration or time written straight into the
// line (with room for maxValue bytes) or through a copy (near the bound)
// is the text its append function makes, cut at the bound like any raw
// text, and what follows it follows it; a value longer than maxValue (a
// zone offset no real zone has) included.
func TestValueInPlace(t *testing.T) {
	far := time.Unix(math.MaxInt64/2, 999999999)
	vals := []struct {
		a    slog.Attr
		text string
	}{
		{slog.Float64("f", 0.25), "0.25"},
		{slog.Float64("f", -math.MaxFloat64), strconv.FormatFloat(-math.MaxFloat64, 'g', -1, 64)},
		{slog.Float64("f", math.SmallestNonzeroFloat64), strconv.FormatFloat(math.SmallestNonzeroFloat64, 'g', -1, 64)},
		{slog.Duration("d", math.MinInt64), time.Duration(math.MinInt64).String()},
		{slog.Duration("d", 1500*time.Microsecond), "1.5ms"},
		{slog.Time("t", time.Date(2026, 6, 1, 10, 0, 0, 123456789, time.UTC)), "2026-06-01T10:00:00.123Z"},
		{slog.Time("t", far.In(time.FixedZone("z", -50400))), far.In(time.FixedZone("z", -50400)).Format("2006-01-02T15:04:05.000Z07:00")},
		{slog.Time("t", far.In(time.FixedZone("z", math.MaxInt32))), far.In(time.FixedZone("z", math.MaxInt32)).Format("2006-01-02T15:04:05.000Z07:00")},
		{slog.Time("t", far.In(time.FixedZone("z", math.MaxInt-6))), far.In(time.FixedZone("z", math.MaxInt-6)).Format("2006-01-02T15:04:05.000Z07:00")},
	}
	for _, v := range vals {
		t.Run(v.a.Key+"="+v.text, func(t *testing.T) {
			for fill := 0; fill <= maxContent; fill++ {
				var got, want Line
				pad := strings.Repeat("x", fill)
				got.raw(pad)
				want.raw(pad)
				got.Attr("", 0, v.a)
				got.Attr("", 0, slog.Int("z", 1))
				want.raw(" " + v.a.Key + "=" + v.text + " z=1")
				if !assert.Equal(t, string(want.Finish()), string(got.Finish()), "fill %d", fill) {
					return
				}
			}
		})
	}
}

// TestAppendDecimal holds every path of appendDecimal to strconv's
// digits, around each power of ten.
func TestAppendDecimal(t *testing.T) {
	vals := []uint64{0, 1, 9, 99, 100, 1<<63 - 1, 1 << 63, ^uint64(0)}
	for p := uint64(1); p <= 1e19; p *= 10 {
		vals = append(vals, p-1, p, p+1, p*3+7)
		if p == 1e19 {
			break
		}
	}
	for _, v := range vals {
		assert.Equal(t, strconv.FormatUint(v, 10), string(appendDecimal(nil, v)), "%d", v)
	}
}

// TestAppendTimeDayCache: times of one day (the cache's hits), of days
// that alternate (a miss each), across midnight and in zones whose local
// day differs from UTC's, each as time.Format writes it.
func TestAppendTimeDayCache(t *testing.T) {
	base := time.Date(2026, 12, 2, 23, 59, 59, 999_000_000, time.UTC)
	east, west := time.FixedZone("E", 14*3600), time.FixedZone("W", -12*3600)
	var times []time.Time
	for i := range 50 {
		d := time.Duration(i) * 7 * time.Hour / 3
		times = append(times, base.Add(d), base.Add(-d).In(east), base.Add(d).In(west), base, base.Add(time.Millisecond))
	}
	times = append(times, time.Time{}, time.Date(0, 1, 1, 0, 0, 0, 0, time.UTC), time.Date(9999, 12, 31, 23, 59, 59, 0, time.UTC),
		time.Date(-1, 12, 31, 0, 0, 0, 0, time.UTC), time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC), base)
	for _, tm := range times {
		want := tm.Format("2006-01-02T15:04:05.000Z07:00")
		if got := string(appendTime(nil, tm)); got != want {
			t.Fatalf("appendTime(%v) = %q, want %q", tm, got, want)
		}
	}
}

// FuzzAppendTime holds appendTime to time.Format for any instant and any
// zone offset, years outside 0–9999 and offsets with seconds included.
func FuzzAppendTime(f *testing.F) {
	f.Add(int64(0), int64(0), 0)
	f.Add(int64(1780308000), int64(123456789), 19800)
	f.Add(int64(-62167219200), int64(0), -37)
	f.Add(int64(1780308000), int64(0), -37) // a negative offset under a minute: +00:00
	f.Add(int64(253402300799), int64(999999999), 50400)
	f.Add(int64(math.MaxInt64), int64(999999999), 0)
	f.Add(int64(math.MinInt64), int64(0), -50400)
	f.Add(int64(1780308000), int64(0), math.MaxInt-6)
	// -7e12 where int has 64 bits; the remainder keeps it an int, and as
	// absurd an offset, where it has 32.
	f.Add(int64(1780308000), int64(0), -7_000_000_000_000%math.MaxInt)
	f.Fuzz(func(t *testing.T, sec, nsec int64, off int) {
		if off%7 != 0 { // most offsets real ones; some absurd, which time.Format still takes
			off %= 26 * 3600
		}
		tm := time.Unix(sec, nsec%1e9).In(time.FixedZone("z", off))
		want := tm.Format("2006-01-02T15:04:05.000Z07:00")
		if got := string(appendTime(nil, tm)); got != want {
			t.Fatalf("appendTime(%d, %d, %d) = %q, want %q", sec, nsec, off, got, want)
		}
	})
}
