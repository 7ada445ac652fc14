package straceview

import (
	"bytes"
	"math"
	"strings"
	"testing"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/strace"
)

func TestEscape(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
	}{
		{"plain text stays", "chip.run.bind", "chip.run.bind"},
		{"printable non-ASCII stays", "résumé µs ∥ 日本", "résumé µs ∥ 日本"},
		{"ESC and a CSI sequence", "a\x1b[2Jb", `a\x1b[2Jb`},
		{"line feed, CR, tab, NUL, DEL", "a\nb\rc\td\x00e\x7f", `a\nb\rc\td\x00e\x7f`},
		{"C1 controls", "a\u0085b\u009bc", `a\u0085b\u009bc`},
		{"bidi override and isolates", "x\u202egnp.exe\u202c \u2066y\u2069 \u200f", `x\u202egnp.exe\u202c \u2066y\u2069 \u200f`},
		{"line and paragraph separators", "a\u2028b\u2029c", `a\u2028b\u2029c`},
		{"invalid UTF-8", "a\xffb\xc3", `a\xffb\xc3`},
		{"empty", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Escape(tt.in))
		})
	}
}

func FuzzEscape(f *testing.F) {
	for _, s := range []string{"", "a\x1b[31m", "\u202e", "\xff", "\u2028", "\u0085", "日本"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Escape(s)
		require.True(t, utf8.ValidString(got), "%q", got)
		for _, r := range got {
			assert.True(t, unicode.IsPrint(r), "%q left %U in %q", s, r, got)
		}
		if consolePrintable(s) {
			assert.Equal(t, s, got, "printable text is left as it is")
		}
	})
}

// consolePrintable reports whether s is valid UTF-8 of printable runes.
func consolePrintable(s string) bool {
	return utf8.ValidString(s) && strings.IndexFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) < 0
}

// hostileName holds every kind of text a terminal would obey.
const hostileName = "ext_\x1b]0;pwn\x07\x1b[2J\u202eexe\u2028\u0085\xff"

const hostileShown = `ext_\x1b]0;pwn\a\x1b[2J\u202eexe\u2028\u0085\xff`

// TestTablesEscape: the per-callable tables and the tree show a hostile
// name escaped when asked to, and as it is (the reference's bytes)
// otherwise.
func TestTablesEscape(t *testing.T) {
	spans := []strace.Span{
		{PID: 1, TID: 1, Inv: 1, HID: "h\x1bq", Depth: 0, Name: "chip.run", TS: 0, Dur: 5000},
		{PID: 1, TID: 1, Inv: 1, HID: "h\x1bq", Depth: 1, Name: "chip.run." + hostileName, TS: 10, Dur: 1000},
	}
	buckets := Buckets(Group(spans, InInvocation))
	for _, tt := range []struct {
		name  string
		write func(*bytes.Buffer, func(string) string)
	}{
		{"tables", func(b *bytes.Buffer, show func(string) string) { WriteTables(b, buckets, show) }},
		{"service tables", func(b *bytes.Buffer, show func(string) string) { WriteServiceTables(b, buckets, show) }},
		{"tree", func(b *bytes.Buffer, show func(string) string) { WriteTree(b, buckets, show) }},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var raw, escaped bytes.Buffer
			tt.write(&raw, nil)
			tt.write(&escaped, Escape)
			assert.Contains(t, raw.String(), hostileName, "raw: the reference's bytes")
			assert.Contains(t, raw.String(), "h\x1bq")
			assert.Contains(t, escaped.String(), hostileShown)
			assert.Contains(t, escaped.String(), `h\x1bq`)
			assert.NotContains(t, escaped.String(), "\x1b")
			assert.True(t, utf8.Valid(escaped.Bytes()))
			assert.NotContains(t, escaped.String(), "\u202e")
			assert.Equal(t, strings.Count(raw.String(), "\n"), strings.Count(escaped.String(), "\n"))
		})
	}
}

// TestStatsEscape: --stats always shows a hostile name escaped.
func TestStatsEscape(t *testing.T) {
	spans := []strace.Span{{PID: 1, Name: hostileName, Dur: 1000}, {PID: 1, Name: "ok", Dur: 1000}}
	var b bytes.Buffer
	WriteStatsText(&b, Statistics([]strace.HostLog{{Label: "host\u202e", Parser: &strace.Parser{Results: strace.Results{Spans: spans}}}}))
	out := b.String()
	assert.Contains(t, out, hostileShown)
	assert.Contains(t, out, `host host\u202e pid 1`)
	assert.NotContains(t, out, "\x1b")
	assert.NotContains(t, out, "\u202e")
	assert.True(t, utf8.ValidString(out))
	// The columns still line up: every row is as wide as the header.
	lines := strings.Split(strings.TrimSuffix(out, "\n"), "\n")
	require.Len(t, lines, 4)
	for _, l := range lines[2:] {
		assert.Equal(t, utf8.RuneCountInString(lines[1]), utf8.RuneCountInString(l), l)
	}
}

// TestSaturatedMean: spans whose durations are 2^63-1 ns print a mean
// that is a number (the float mean rounds to 2^63, past int64).
func TestSaturatedMean(t *testing.T) {
	for _, n := range []int{1, 2, 3, 37} {
		spans := make([]strace.Span, n)
		for i := range spans {
			spans[i] = strace.Span{PID: 1, Name: "x", Dur: math.MaxInt64}
		}
		st := Statistics(one(spans))
		got := st.Overall.Names[0]
		assert.InDelta(t, float64(math.MaxInt64), got.MeanNS, 1e4)
		var b bytes.Buffer
		WriteStatsText(&b, st)
		row := strings.Fields(strings.Split(b.String(), "\n")[2])
		require.Len(t, row, 8, b.String())
		want := []string{"x", "", "", "9223372036854775.8", "9223372036854775.8", "9223372036854775.8", "9223372036854775.8", "9223372036854775.8"}
		for i := 3; i < 8; i++ {
			assert.Equal(t, want[i], row[i], "n=%d column %d", n, i)
		}
		if n == 1 {
			assert.Equal(t, "9223372036854775.8", row[2])
		} else {
			assert.Equal(t, ">9223372036854775.8", row[2])
		}
	}
}

func TestExactUS(t *testing.T) {
	for _, tt := range []struct {
		ns   int64
		want string
	}{
		{0, "0.0"}, {49, "0.0"}, {50, "0.1"}, {1000, "1.0"}, {1949, "1.9"}, {1950, "2.0"},
		{math.MaxInt64, "9223372036854775.8"},
		{-50, "-0.1"}, {-49, "0.0"}, {-1000, "-1.0"},
		{math.MinInt64, "-9223372036854775.8"},
	} {
		assert.Equal(t, tt.want, exactUS(tt.ns), "%d", tt.ns)
	}
}

func TestMeanUS(t *testing.T) {
	for _, tt := range []struct {
		mean float64
		want string
	}{
		{0, "0.0"}, {1500.4, "1.5"}, {float64(math.MaxInt64), "9223372036854775.8"}, {math.Inf(1), "9223372036854775.8"},
		{-float64(math.MaxInt64) * 2, "-9223372036854775.8"}, {math.NaN(), "0.0"},
	} {
		assert.Equal(t, tt.want, meanUS(tt.mean), "%g", tt.mean)
	}
}
