package envelope

import (
	"log/slog"
	"testing"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// written renders msg and attrs as a record and returns its body.
func written(t testing.TB, msg string, attrs ...slog.Attr) []byte {
	var l Line
	l.Start(&Header{Mono: 1, TID: 1, Level: slog.LevelInfo, Func: "f"})
	l.Message(msg)
	for _, a := range attrs {
		l.Attr("", 0, a)
	}
	p, err := Parse(l.Finish())
	require.NoError(t, err)
	return p.Body
}

func TestSplitBody(t *testing.T) {
	for _, tc := range []struct {
		name  string
		msg   string
		attrs []slog.Attr
		want  []slog.Attr // nil: attrs
	}{
		{"message only", "job done", nil, nil},
		{"typed values", "job done", []slog.Attr{slog.String("job", "resize"), slog.Int("attempt", 1), slog.Float64("ratio", 0.5), slog.Bool("ok", true)},
			[]slog.Attr{slog.String("job", "resize"), slog.Int64("attempt", 1), slog.Float64("ratio", 0.5), slog.Bool("ok", true)}},
		{"quoted text stays text", "m", []slog.Attr{slog.String("zip", "007"), slog.String("v", "1.10"), slog.String("s", "two words"), slog.String("e", ""), slog.String("n", "7 ")}, nil},
		{"a quoted number is a string", "m", []slog.Attr{slog.String("n", "=7")}, nil},
		{"durations come back typed", "m", []slog.Attr{slog.Duration("took", 1500*time.Millisecond), slog.String("t", "1500ms")}, []slog.Attr{slog.Duration("took", 1500*time.Millisecond), slog.String("t", "1500ms")}},
		{"times come back as text", "m", []slog.Attr{slog.Time("at", time.Date(2026, 12, 1, 12, 0, 0, 5e6, time.UTC))}, []slog.Attr{slog.String("at", "2026-12-01T12:00:00.005Z")}},
		{"groups as dotted keys", "m", []slog.Attr{slog.Group("req", slog.Int("id", 7))}, []slog.Attr{slog.Int64("req.id", 7)}},
		{"an empty message", "", []slog.Attr{slog.Int("a", 1)}, []slog.Attr{slog.Int64("a", 1)}},
		{"spaces and quotes in the message", `say "hi" = there`, []slog.Attr{slog.Int("a", 1)}, []slog.Attr{slog.Int64("a", 1)}},
		{"a marker in text comes back", "see [STRACE] here", []slog.Attr{slog.String("k", "[CLOCK_ANCHOR]")}, nil},
		{"control bytes: quoted values come back, a message as written", "a\\nb", []slog.Attr{slog.String("k", "x\ty")}, nil},
		// The writer neutralises '[' as %5B only before a marker, and
		// writes a user's own %5B as it is: it must come back as it is.
		{"a user's %5B stays", "100%5B off %5B", []slog.Attr{slog.String("k", "%5Bx"), slog.String("q", "a %5B b"), slog.String("%5B", "%5B")}, nil},
		{"%5B before a near-marker stays", "%5BSTRACE %5Bop] %5Bmono_ns", []slog.Attr{slog.String("k", "%5BSTRAC"), slog.String("o", "%5BOP")}, nil},
		{"a marker next to a user's %5B", "%5B[STRACE] [%5B", []slog.Attr{slog.String("k", "x%5B[OP]"), slog.String("q", "[mono_ns= %5B")}, nil},
		{"every marker comes back", "[STRACE] [HOSTLOG_DROPS] [CLOCK_ANCHOR] [OP] [mono_ns=1] end", []slog.Attr{slog.String("k", "[HOSTLOG_DROPS][mono_ns=1]")}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			msg, attrs, _ := SplitBody(written(t, tc.msg, tc.attrs...))
			assert.Equal(t, tc.msg, msg)
			want := tc.want
			if want == nil {
				want = tc.attrs
			}
			assert.Equal(t, show(want), show(attrs))
		})
	}
	t.Run("a user's %5B before a marker is not the marker", func(t *testing.T) {
		// The writer writes a marker's '[' as %5B, and a user's '%' before
		// 5B and a marker as %25, so the two texts are written apart and
		// each reads back as it was.
		for _, text := range []string{"[STRACE]", "%5BSTRACE]", "%255BSTRACE]", "%[STRACE]", "%%5BOP]", "100%", "%25", "%5B"} {
			body := written(t, text, slog.String("k", text))
			msg, attrs, _ := SplitBody(body)
			assert.Equal(t, text, msg, "message written %q", body)
			assert.Equal(t, show([]slog.Attr{slog.String("k", text)}), show(attrs), "value written %q", body)
		}
		assert.NotEqual(t, string(written(t, "[STRACE]")), string(written(t, "%5BSTRACE]")))
	})
	t.Run("a message shaped like an attribute is the one ambiguity", func(t *testing.T) {
		msg, attrs, _ := SplitBody(written(t, "retry n=3"))
		assert.Equal(t, "retry", msg)
		assert.Equal(t, show([]slog.Attr{slog.Int64("n", 3)}), show(attrs))
	})
}

func FuzzSplitBody(f *testing.F) {
	f.Add("job done", "k", "v")
	f.Add("", "a b", "c\"d")
	f.Add("x=1", "=", "")
	f.Add("100%5B off", "%5B", "%5Bx")
	f.Add("%5B[STRACE]", "k[OP]", "a%5B[mono_ns=1] b")
	f.Add("[%5B", "k", "%5BSTRAC")
	f.Add("%5B%5B", "%5B%5B", "%5B%5BOP")
	f.Fuzz(func(t *testing.T, msg, k, v string) {
		body := written(t, msg, slog.String(k, v))
		if len(body) >= MaxRecord-40 || k == "" {
			return // cut, or the attribute left out
		}
		got, attrs, _ := SplitBody(body)
		if _, ambiguous := parseAttrsSuffix(string(written(t, msg))); ambiguous {
			return
		}
		if !assert.Len(t, attrs, 1) {
			return
		}
		// What came back is what a reader can know: the written text of
		// the key and value, read back.
		assert.Equal(t, string(written(t, got, attrs[0])), string(body))
		// And it is the original text: the key and the value always, the
		// message when it needed no escape (a message comes back as
		// written).
		assert.Equal(t, k, attrs[0].Key)
		assert.Equal(t, v, attrs[0].Value.String(), "a typed value's text is the one written")
		if printable(msg) {
			assert.Equal(t, msg, got)
		}
	})
}

// printable reports whether s is valid UTF-8 of printable runes, which a
// message carries unescaped.
func printable(s string) bool {
	for _, r := range s {
		if r == utf8.RuneError || !unicode.IsPrint(r) {
			return false
		}
	}
	return true
}

// show writes attributes with their kinds, for comparing.
func show(as []slog.Attr) []string {
	var out []string
	for _, a := range as {
		out = append(out, a.Key+"="+a.Value.Kind().String()+":"+a.Value.String())
	}
	return out
}

// parseAttrsSuffix reports whether some suffix of body after a space reads
// as attributes (the message is then ambiguous).
func parseAttrsSuffix(body string) ([]slog.Attr, bool) {
	for i := 1; i < len(body); i++ {
		if body[i-1] == ' ' {
			if a, _, ok := parseAttrs(body[i:]); ok {
				return a, true
			}
		}
	}
	return nil, false
}
