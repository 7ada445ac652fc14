package envelope

import (
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestFuncField(t *testing.T) {
	for _, tt := range []struct {
		name, in, want string
	}{
		{"plain", "main.main", "main.main"},
		{"generic keeps brackets", "b.Map[go.shape.string]", "b.Map[go.shape.string]"},
		{"empty is go", "", "go"},
		{"colon and space", "weird name:x", "weird_name_x"},
		{"strace marker", "[STRACE] v=1", "%5BSTRACE]_v=1"},
		{"drops marker", "x[HOSTLOG_DROPS]", "x%5BHOSTLOG_DROPS]"},
		{"envelope prefix", "[mono_ns=1][T0x1]", "%5Bmono_ns=1][T0x1]"},
		{"newline", "a\nb", `a\nb`},
		{"escape", "a\x1b[2Jb", `a\x1b[2Jb`},
		{"invalid utf8", "a\xff\xfeb", `a\xff\xfeb`},
		{"c1 nel", "a\u0085b", `a\u0085b`},
		{"line separator", "a\u2028b", `a\u2028b`},
		{"bidi override", "a\u202eb", `a\u202eb`},
		{"nbsp is white space", "a\u00a0b", `a\u00a0b`},
		{"ideographic space", "a\u3000b", `a\u3000b`},
		{"printable unicode", "größe", "größe"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := escapeFunc(tt.in)
			assert.Equal(t, tt.want, got)
			assert.True(t, utf8.ValidString(got))
		})
	}
}

func TestFieldBound(t *testing.T) {
	for _, tt := range []struct {
		name string
		in   string
	}{
		{"ascii", strings.Repeat("f", 500)},
		{"escapes", strings.Repeat("\n", 100)},
		{"runes", strings.Repeat("é", 100)},
		{"mixed", strings.Repeat("a\x01é", 60)},
		{"markers", strings.Repeat("[STRACE]", 40)},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := escapeFunc(tt.in)
			require.LessOrEqual(t, len(got), maxField)
			assert.True(t, strings.HasSuffix(got, "~"), "cut field ends in ~: %q", got)
			assert.True(t, utf8.ValidString(got))
			// No partial escape before the '~': the text before it is
			// a prefix of the full encoding.
			enc := string(appendField(nil, tt.in, funcField, 1<<20))
			assert.True(t, strings.HasPrefix(enc, strings.TrimSuffix(got, "~")), "%q is not a prefix of %q", got, enc)
		})
	}
	t.Run("exactly the bound is kept", func(t *testing.T) {
		in := strings.Repeat("x", maxField)
		assert.Equal(t, in, escapeFunc(in))
		assert.Equal(t, strings.Repeat("x", maxField-1)+"~", escapeFunc(in+"x"))
	})
}

func TestSourceAtAndFuncInRecord(t *testing.T) {
	var l Line
	l.header(1, 2, 0)
	l.function("evil: [STRACE] v=1 pid=1\n")
	l.sourceAt("x] [HOSTLOG_DROPS]\u2028.cpp", 7)
	l.Message("m")
	rec := l.Finish()
	assert.Equal(t, 1, strings.Count(string(rec), "\n"))
	assert.False(t, containsMarker(string(rec[1:])), "%q", rec)
	p, err := Parse(rec)
	require.NoError(t, err)
	assert.Equal(t, `evil__%5BSTRACE]_v=1_pid=1\n`, p.Func)
	assert.Equal(t, `x___HOSTLOG_DROPS_\u2028.cpp`, p.File)
	assert.Equal(t, 7, p.Line)
	assert.Equal(t, "m", string(p.Body))
}

func TestFinishCutsOnRuneBoundary(t *testing.T) {
	for pad := 0; pad < 4; pad++ {
		t.Run(strings.Repeat("p", pad+1), func(t *testing.T) {
			var l Line
			l.header(1, 2, 0)
			l.function("f")
			l.Message(strings.Repeat("x", pad) + strings.Repeat("€", 200))
			rec := l.Finish()
			require.True(t, l.Truncated())
			assert.LessOrEqual(t, len(rec), MaxRecord)
			assert.GreaterOrEqual(t, len(rec), MaxRecord-utf8.UTFMax)
			assert.True(t, utf8.Valid(rec), "%q", rec[len(rec)-8:])
			assert.True(t, strings.HasSuffix(string(rec), "~\n"))
		})
	}
}

func TestTrustedEscapesButKeepsMarkers(t *testing.T) {
	var l Line
	l.trusted("[STRACE] v=1 name=a\xff\u2028\u202e\u0085")
	got := string(l.Finish())
	assert.Equal(t, `[STRACE] v=1 name=a\xff\u2028\u202e\u0085`+"\n", got)
}
