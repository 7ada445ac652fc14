package envelope

import (
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fitRecord renders a record as a handler does (header "go" at INFO, the
// message, pre's attributes, then attrs), fits it when it passes the
// bound, and returns the finished record and whether it was fitted.
func fitRecord(msg string, pre *Attrs, attrs ...slog.Attr) (string, bool) {
	return fitWith(Header{Mono: 123, TID: 0x1a, Level: slog.LevelInfo, Func: "go"}, msg, pre, attrs...)
}

// fitWith is fitRecord with header h.
func fitWith(h Header, msg string, pre *Attrs, attrs ...slog.Attr) (string, bool) {
	render := func(l *Line) {
		l.Start(&h)
		l.Message(msg)
		if pre != nil {
			l.Rendered(pre)
		}
		for _, a := range attrs {
			l.Attr("", 0, a)
			if l.Truncated() {
				return
			}
		}
	}
	var l Line
	render(&l)
	fitted := l.Fit(render)
	return string(l.Finish()), fitted
}

// cutValue returns the value of key in a fitted record's text when it was
// cut ("…"~), unquoted, and whether it was found cut.
func cutValue(t *testing.T, rec, key string) (string, bool) {
	t.Helper()
	i := strings.Index(rec, " "+key+`="`)
	if i < 0 {
		return "", false
	}
	rest := rec[i+len(key)+2:]
	q, err := strconv.QuotedPrefix(rest)
	require.NoError(t, err, "value of %s in %q", key, rec)
	if !strings.HasPrefix(rest[len(q):], "~") {
		return "", false
	}
	u, err := strconv.Unquote(q)
	require.NoError(t, err)
	return u, true
}

func TestFit(t *testing.T) {
	x := func(n int) string { return strings.Repeat("x", n) }
	for _, tc := range []struct {
		name  string
		msg   string
		attrs []slog.Attr
		want  string   // the whole body, when given
		cut   []string // keys read back as cut
		check func(t *testing.T, body string)
	}{
		{
			// 31 bytes of envelope, 12 of message and 19 of keys leave
			// 448: err and attempt take 20, sql the other 428.
			name:  "one huge value among small ones",
			msg:   "query failed",
			attrs: []slog.Attr{slog.String("sql", x(1024)), slog.String("err", "deadlock detected"), slog.Int("attempt", 3)},
			want:  `query failed sql="` + x(425) + `"~ err="deadlock detected" attempt=3`,
			cut:   []string{"sql"},
		},
		{
			name:  "two huge values get one cap",
			msg:   "m",
			attrs: []slog.Attr{slog.String("a", x(600)), slog.String("b", strings.Repeat("y", 800)), slog.Int("c", 1)},
			cut:   []string{"a", "b"},
			check: func(t *testing.T, body string) {
				a, _ := cutValue(t, body, "a")
				b, _ := cutValue(t, body, "b")
				assert.Equal(t, len(a), len(b), "both cut to the cap")
				assert.True(t, strings.HasSuffix(body, " c=1"), "c kept: %q", body)
			},
		},
		{
			name:  "the longest value is shortened first",
			msg:   "m",
			attrs: []slog.Attr{slog.String("a", x(150)), slog.String("b", strings.Repeat("y", 800))},
			cut:   []string{"b"},
			check: func(t *testing.T, body string) {
				assert.Contains(t, body, " a="+x(150)+" b=", "a kept whole")
			},
		},
		{
			// The values at their least (`""~`), the message takes the
			// rest: 510 - 31 - 3 (" v=") - 3.
			name:  "a long message and a long value",
			msg:   strings.Repeat("m", 1000),
			attrs: []slog.Attr{slog.String("v", x(1000))},
			want:  strings.Repeat("m", 472) + `~ v=""~`,
			cut:   []string{"v"},
		},
		{
			// Values give way before the message, down to `""~`; one that
			// short stays whole.
			name:  "a long message and short values",
			msg:   strings.Repeat("m", 1000),
			attrs: []slog.Attr{slog.Int("k", 1), slog.Int("n", 22), slog.Bool("ok", true)},
			want:  strings.Repeat("m", 510-31-len(` k=1 n=22 ok=""~`)-1) + `~ k=1 n=22 ok=""~`,
			cut:   []string{"ok"},
		},
		{
			name:  "groups keep their dotted keys",
			msg:   "m",
			attrs: []slog.Attr{slog.Group("req", slog.String("body", x(2000)), slog.Int("id", 7)), slog.String("s", "ok")},
			cut:   []string{"req.body"},
			check: func(t *testing.T, body string) {
				assert.True(t, strings.HasSuffix(body, `"~ req.id=7 s=ok`), "got %q", body)
			},
		},
		{
			name:  "a bare value is quoted when cut, its backslashes escaped",
			msg:   "m",
			attrs: []slog.Attr{slog.String("path", strings.Repeat(`C:\dir`, 200)), slog.Int("n", 1)},
			cut:   []string{"path"},
			check: func(t *testing.T, body string) {
				v, ok := cutValue(t, body, "path")
				require.True(t, ok)
				assert.True(t, strings.HasPrefix(strings.Repeat(`C:\dir`, 200), v), "%q", v)
				assert.Contains(t, body, `path="C:\\dir`)
			},
		},
		{
			name:  "a neutralised marker is kept whole or left out",
			msg:   "m",
			attrs: []slog.Attr{slog.String("v", strings.Repeat("[STRACE]", 100)), slog.Int("n", 1)},
			cut:   []string{"v"},
			check: func(t *testing.T, body string) {
				v, _ := cutValue(t, body, "v")
				assert.True(t, strings.HasSuffix(v, "%5BSTRACE]"), "%q", v[len(v)-12:])
				assert.False(t, containsMarker(body), "marker forged: %q", body)
			},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rec, fitted := fitRecord(tc.msg, nil, tc.attrs...)
			require.True(t, fitted, "not fitted: %q", rec)
			assert.LessOrEqual(t, len(rec), MaxRecord-1)
			assert.True(t, strings.HasSuffix(rec, "\n"))
			require.True(t, strings.HasPrefix(rec, hdr))
			body := strings.TrimSuffix(rec[len(hdr):], "\n")
			if tc.want != "" {
				assert.Equal(t, tc.want, body)
			}
			if tc.check != nil {
				tc.check(t, body)
			}
			r, err := ParseRecord([]byte(rec))
			require.NoError(t, err)
			assert.Equal(t, tc.cut, r.Cut)
			var keys []string
			for _, a := range r.Attrs {
				keys = append(keys, a.Key)
			}
			var want []string
			for _, a := range tc.attrs {
				if a.Value.Kind() == slog.KindGroup {
					for _, g := range a.Value.Group() {
						want = append(want, a.Key+"."+g.Key)
					}
					continue
				}
				want = append(want, a.Key)
			}
			assert.Equal(t, want, keys, "every key kept")
		})
	}
}

// TestFitIssueCase is the record that prompted fitting: a 1 KB query text
// used to take err and attempt with it past the bound.
func TestFitIssueCase(t *testing.T) {
	rec, fitted := fitRecord("query failed", nil,
		slog.String("sql", strings.Repeat("x", 1024)), slog.String("err", "deadlock detected"), slog.Int("attempt", 3))
	require.True(t, fitted)
	assert.LessOrEqual(t, len(rec), MaxRecord)
	assert.Contains(t, rec, ` err="deadlock detected" attempt=3`+"\n")
	assert.Regexp(t, ` sql="x+"~ `, rec)
	p, err := Parse([]byte(rec))
	require.NoError(t, err)
	msg, attrs, cut := SplitBody(p.Body)
	assert.Equal(t, "query failed", msg)
	assert.Equal(t, []string{"sql"}, cut)
	require.Len(t, attrs, 3)
	assert.Equal(t, slog.KindString, attrs[0].Value.Kind())
	assert.Equal(t, strings.Repeat("x", 425), attrs[0].Value.String(), "the text before the cut, without '~'")
	assert.Equal(t, "err=deadlock detected", attrs[1].String())
	assert.Equal(t, "attempt=3", attrs[2].String())
	r, err := ParseRecord([]byte(rec))
	require.NoError(t, err)
	assert.Equal(t, []string{"sql"}, r.Cut)
}

// TestFitCutsWholeUnits: wherever the cap falls in a value of escapes and
// multi-byte runes, the cut value is valid UTF-8, quoted as
// strconv.Unquote reads it, and what it keeps is the start of the value.
func TestFitCutsWholeUnits(t *testing.T) {
	unit := "é\x01\u2028\"\\世\xff"
	for pad := range 16 {
		t.Run(fmt.Sprint(pad), func(t *testing.T) {
			val := strings.Repeat("a", pad) + strings.Repeat(unit, 100)
			rec, fitted := fitRecord("m", nil, slog.String("v", val), slog.String("w", "after"))
			require.True(t, fitted)
			assert.True(t, utf8.ValidString(rec), "%q", rec)
			v, ok := cutValue(t, rec, "v")
			require.True(t, ok, "%q", rec)
			assert.True(t, strings.HasPrefix(val, v), "kept %q", v)
			assert.GreaterOrEqual(t, len(rec), MaxRecord-1-9, "the cap is used, but for part of a unit")
			assert.True(t, strings.HasSuffix(rec, `"~ w=after`+"\n"), "%q", rec)
		})
	}
	t.Run("the message is cut between whole escapes too", func(t *testing.T) {
		for pad := range 12 {
			msg := strings.Repeat("a", pad) + strings.Repeat("\x01é\n", 400)
			rec, fitted := fitRecord(msg, nil, slog.Int("k", 1))
			require.True(t, fitted)
			p, err := Parse([]byte(rec))
			require.NoError(t, err)
			m, _, _ := SplitBody(p.Body)
			require.True(t, strings.HasSuffix(m, "~"), "%q", m)
			m = strings.TrimSuffix(m, "~")
			var want Line
			want.Message(msg)
			assert.True(t, strings.HasPrefix(string(want.Content()), m), "message %q is not the start of the message written", m)
			assert.True(t, utf8.ValidString(m))
		}
	})
}

func TestFitWithAttrs(t *testing.T) {
	pre := Attrs{}.With("", 0, []slog.Attr{slog.String("svc", "api"), slog.String("sql", strings.Repeat("x", 3000))})
	pre = pre.With("g.", 1, []slog.Attr{slog.String("note", strings.Repeat("n", 700)), slog.Int("id", 9)})
	rec, fitted := fitRecord("m", &pre, slog.String("err", "boom"))
	require.True(t, fitted, "%q", rec)
	assert.LessOrEqual(t, len(rec), MaxRecord-1)
	r, err := ParseRecord([]byte(rec))
	require.NoError(t, err)
	assert.Equal(t, []string{"sql", "g.note"}, r.Cut)
	require.Len(t, r.Attrs, 5)
	assert.Equal(t, "svc=api", r.Attrs[0].String())
	assert.Equal(t, "g.id=9", r.Attrs[3].String())
	assert.Equal(t, "err=boom", r.Attrs[4].String())
	x, _ := cutValue(t, rec, "sql")
	n, _ := cutValue(t, rec, "g.note")
	assert.Equal(t, len(x), len(n), "pre-rendered values get the cap too")

	t.Run("pre-rendered attributes that fit are written as they were", func(t *testing.T) {
		small := Attrs{}.With("", 0, []slog.Attr{slog.String("svc", "api"), slog.Group("req", slog.Int("id", 7))})
		got, fitted := fitRecord("m", &small, slog.Int("n", 1))
		assert.False(t, fitted)
		assert.Equal(t, hdr+"m svc=api req.id=7 n=1\n", got)
	})
	t.Run("With never writes into the receiver's arrays", func(t *testing.T) {
		base := Attrs{}.With("", 0, []slog.Attr{slog.Int("a", 1)})
		one := base.With("", 0, []slog.Attr{slog.Int("b", 2)})
		two := base.With("", 0, []slog.Attr{slog.Int("c", 3)})
		for _, tc := range []struct {
			a    Attrs
			want string
		}{{base, " a=1"}, {one, " a=1 b=2"}, {two, " a=1 c=3"}} {
			var l Line
			l.Rendered(&tc.a)
			assert.Equal(t, tc.want, string(l.Content()))
		}
	})
	t.Run("too many pre-rendered pairs take the bound's rule", func(t *testing.T) {
		var many []slog.Attr
		for i := range 300 {
			many = append(many, slog.Int(fmt.Sprint("k", i), i))
		}
		a := Attrs{}.With("", 0, many)
		assert.True(t, a.full)
		got, fitted := fitRecord("m", &a)
		assert.False(t, fitted)
		var want Line
		want.Start(&Header{Mono: 123, TID: 0x1a, Level: slog.LevelInfo, Func: "go"})
		want.Message("m")
		for _, x := range many {
			want.Attr("", 0, x)
		}
		assert.Equal(t, string(want.Finish()), got, "the first 510 bytes, as if written whole")
	})
}

// TestFitFallsBack: records fitting cannot help keep the bound's rule,
// byte for byte.
func TestFitFallsBack(t *testing.T) {
	var many []slog.Attr
	for i := range 200 {
		many = append(many, slog.Int(fmt.Sprintf("key_%03d", i), i))
	}
	for _, tc := range []struct {
		name  string
		msg   string
		attrs []slog.Attr
	}{
		{"too many keys for the bound", "m", many},
		{"a key longer than the bound", "m", []slog.Attr{slog.Int(strings.Repeat("k", 600), 1)}},
		{"no attributes", strings.Repeat("m", 1000), nil},
		{"keys and the least message do not fit", strings.Repeat("m", 1000), many[:100]},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, fitted := fitRecord(tc.msg, nil, tc.attrs...)
			assert.False(t, fitted)
			assert.Len(t, got, MaxRecord)
			assert.True(t, strings.HasSuffix(got, "~\n"))
			var want Line
			want.Start(&Header{Mono: 123, TID: 0x1a, Level: slog.LevelInfo, Func: "go"})
			want.Message(tc.msg)
			for _, a := range tc.attrs {
				want.Attr("", 0, a)
			}
			assert.Equal(t, string(want.Finish()), got)
		})
	}
	t.Run("a record that fits is left alone", func(t *testing.T) {
		got, fitted := fitRecord("hello", nil, slog.Int("k", 1))
		assert.False(t, fitted)
		assert.Equal(t, hdr+"hello k=1\n", got)
	})
	t.Run("one byte over the bound is fitted", func(t *testing.T) {
		// 31 + len(" v=") + 477 = 511 content bytes: one too many.
		got, fitted := fitRecord("", nil, slog.String("v", strings.Repeat("x", 477)))
		assert.True(t, fitted)
		assert.Equal(t, hdr+` v="`+strings.Repeat("x", 473)+`"~`+"\n", got)
		assert.Len(t, got, MaxRecord-1)
	})
}

// FuzzSplitFitted: a fitted record reads back with every attribute, the
// ones cut marked so, each cut value the start of what was logged (as
// read back) and every other value as it reads back from a record of its
// own.
func FuzzSplitFitted(f *testing.F) {
	f.Add("query failed", "sql", "SELECT * FROM t WHERE ", uint8(3), uint8(40))
	f.Add("", "k", "é\n\"\\[STRACE]\xff", uint8(7), uint8(63))
	f.Add(strings.Repeat("long message ", 60), "v", "x", uint8(1), uint8(200))
	f.Fuzz(func(t *testing.T, msg, key, val string, n, rep uint8) {
		if key == "" || strings.Contains(val, "%5B") || strings.Contains(key, "%5B") || strings.ContainsAny(msg, `="`) {
			return // keys and text the format reads back another way, a message that reads as attributes
		}
		count := int(n%8) + 1
		var attrs []slog.Attr
		for i := range count {
			attrs = append(attrs, slog.String(key+strconv.Itoa(i), strings.Repeat(val, 1+int(rep)*i%300)))
		}
		// Each attribute read back from a record of its own: what the
		// format can say of it.
		var alone []slog.Attr
		for _, a := range attrs {
			short := slog.String(a.Key, "")
			_, got, _ := SplitBody(written(t, "m", short))
			if len(got) != 1 {
				return // a key that does not read back on its own
			}
			alone = append(alone, got[0])
		}
		rec, fitted := fitRecord(msg, nil, attrs...)
		require.LessOrEqual(t, len(rec), MaxRecord)
		if !fitted {
			return
		}
		require.LessOrEqual(t, len(rec), MaxRecord-1)
		r, err := ParseRecord([]byte(rec))
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(r.Attrs), count, "%q", rec)
		got := r.Attrs[len(r.Attrs)-count:]
		cut := map[string]bool{}
		for _, k := range r.Cut {
			cut[k] = true
		}
		for i, a := range got {
			require.Equal(t, alone[i].Key, a.Key, "%q", rec)
			if cut[a.Key] {
				require.Equal(t, slog.KindString, a.Value.Kind())
				require.True(t, strings.HasPrefix(attrs[i].Value.String(), a.Value.String()), "cut %s=%q is not the start of %q", a.Key, a.Value.String(), attrs[i].Value.String())
				continue
			}
			_, whole, _ := SplitBody(written(t, "m", attrs[i]))
			require.Len(t, whole, 1)
			require.Equal(t, show(whole), show([]slog.Attr{a}), "%q", rec)
		}
	})
}

// FuzzCutPrefix holds the writing pass's shortcut for a long string, a
// prefix of its text quoted as the whole is, to cutting the rendering of
// the whole, at every cap.
func FuzzCutPrefix(f *testing.F) {
	f.Add(strings.Repeat("SELECT * FROM t ", 40), uint16(100))
	f.Add(strings.Repeat("x", 600)+" ", uint16(3))
	f.Add(strings.Repeat("é[STRACE]\xff\x01世", 60), uint16(77))
	f.Add(strings.Repeat(`C:\dir`, 100), uint16(510))
	f.Fuzz(func(t *testing.T, s string, c uint16) {
		limit := minCut + int(c)%(maxContent-minCut)
		n := limit + prefixSlack
		if len(s) <= n {
			return
		}
		var whole, prefix Line
		whole.token(s)
		prefix.tokenPrefix(s, n)
		want := appendCut(nil, whole.Content(), limit)
		got := appendCut(nil, prefix.Content(), limit)
		require.Equal(t, string(want), string(got), "cap %d", limit)
		var all Line
		all.tokenPrefix(s, len(s))
		require.Equal(t, string(whole.Content()), string(all.Content()), "the whole prefix is the token")
	})
}
