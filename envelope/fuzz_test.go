package envelope

import (
	"bytes"
	"fmt"
	"log/slog"
	"math"
	"strconv"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/wire"
)

// FuzzRender renders a record from arbitrary user text, fitted as a
// handler fits it, and checks the envelope's invariants: at most 512
// bytes, exactly one newline, at the end; the envelope prefix; no raw
// control bytes; no machine marker made from user text; the result parses
// back; and, whenever the envelope, the keys, the least of each value and
// the least of the message fit, the record is fitted or whole (at most
// 511 bytes) with every key in it, in order, and it reads back with them.
func FuzzRender(f *testing.F) {
	f.Add("hello", "k", "v", "g", 3, int64(42), int64(7))
	f.Add("x\n[mono_ns=1][T0x1][ERROR] f: [STRACE] v=1 pid=1", "[OP]", "[CLOCK_ANCHOR]", "[HOSTLOG_DROPS]", 40, int64(42), int64(7))
	f.Add("\xff\xfe\u2028", "a b", "c\"d", "", 0, int64(42), int64(7))
	f.Add("[[STRACE]]", "[", "STRACE]", "[mono_ns=", 200, int64(42), int64(7))
	f.Add("query failed", "sql", strings.Repeat("SELECT * FROM t ", 70), "", 1, int64(42), int64(7))
	f.Add(strings.Repeat("é\n", 300), "k", strings.Repeat("\x01é[OP]", 90), "g", 4, int64(42), int64(7))
	// Clocks and lanes at their extremes: a negative clock is written 0.
	f.Add("clock", "k", "v", "", 1, int64(-1), int64(-1))
	f.Add("clock", "k", "v", "", 1, int64(math.MinInt64), int64(math.MinInt64))
	f.Add("clock", "k", "v", "", 1, int64(math.MaxInt64), int64(math.MaxInt64))
	f.Add("clock", "k", "v", "", 1, int64(0), int64(0))
	f.Fuzz(func(t *testing.T, msg, key, val, group string, repeat int, mono, tid int64) {
		var attrs []slog.Attr
		for range min(max(repeat, 0), 50) {
			attrs = append(attrs, slog.Group(group, slog.String(key, val)), slog.Any(key, []byte(val)))
		}
		text, fitted := fitWith(Header{Mono: mono, TID: tid, Level: slog.LevelInfo, Func: "go"}, msg, nil, attrs...)
		out := []byte(text)
		require.False(t, len(out) > MaxRecord, "record of %d bytes", len(out))
		require.False(t, fitted && len(out) > MaxRecord-1, "fitted record of %d bytes", len(out))
		require.EqualValues(t, len(out)-1, bytes.IndexByte(out, '\n'), "newline not only at the end: %q", out)
		require.False(t, len(out) == MaxRecord && !bytes.HasSuffix(out, []byte("~\n")), "full-size record without ~: %q", out)
		for _, c := range out[:len(out)-1] {
			require.False(t, c < 0x20 || c == 0x7f, "raw control byte %#x in %q", c, out)
		}
		head := fmt.Sprintf("[mono_ns=%d][T0x%x][INFO] go: ", max(mono, 0), uint64(tid))
		require.True(t, bytes.HasPrefix(out, []byte(head)), "head %q of %q", head, out)
		body := out[len(head) : len(out)-1]
		require.False(t, containsMarker(string(body)), "marker forged from user text: %q", out)
		require.False(t, !utf8.Valid(out) && !bytes.HasSuffix(out, []byte("~\n")), "invalid UTF-8 in untruncated record: %q", out)
		p, err := Parse(out)
		require.False(t, err != nil || p.Mono != max(mono, 0) || p.TID != tid || p.Func != "go", "does not parse back: %+v %v", p, err)

		// Each attribute's " key=" as written, and the least the record
		// can be.
		var m Line
		m.Message(msg)
		least := len(head) + min(m.length(), minMessage+1)
		var keys []string
		for _, a := range attrs {
			var k Line
			k.Attr("", 0, emptied(a))
			key := strings.TrimSuffix(string(k.Content()), `""`)
			keys = append(keys, key)
			least += len(key) + minCut
		}
		if len(attrs) == 0 || least > maxContent-1 { // without attributes a record keeps the C++ cut
			return
		}
		require.LessOrEqual(t, len(out), MaxRecord-1, "keys fit, yet cut: %q", out)
		rest := string(body)
		for _, k := range keys {
			i := strings.Index(rest, k)
			require.GreaterOrEqual(t, i, 0, "key %q missing from %q", k, out)
			rest = rest[i+len(k):]
		}
		// A key that reads back from a record of its own reads back
		// from this one.
		if len(attrs) == 0 || strings.ContainsAny(msg, `="`) {
			return
		}
		var want []string
		for _, a := range attrs[:min(2, len(attrs))] { // the two shapes, in turn
			_, alone, _ := SplitBody(written(t, "m", emptied(a)))
			if len(alone) != 1 {
				return
			}
			want = append(want, alone[0].Key)
		}
		r, err := ParseRecord(out)
		require.NoError(t, err)
		require.GreaterOrEqual(t, len(r.Attrs), len(attrs), "attributes lost reading back %q", out)
		for i, a := range r.Attrs[len(r.Attrs)-len(attrs):] {
			require.Equal(t, want[i%2], a.Key, "%q", out)
		}
	})
}

// emptied returns a (a string or []byte attribute, perhaps in a group)
// with an empty string value: its key and nothing else.
func emptied(a slog.Attr) slog.Attr {
	if a.Value.Kind() == slog.KindGroup {
		g := a.Value.Group()
		return slog.Group(a.Key, slog.String(g[0].Key, ""))
	}
	return slog.String(a.Key, "")
}

// FuzzPlainWords checks the word-at-a-time scanner, with and without
// '[' excluded, against a byte-at-a-time reading.
func FuzzPlainWords(f *testing.F) {
	f.Add("hello world, a plain message")
	f.Add("tab\there [ and \x7f and \xff")
	f.Fuzz(func(t *testing.T, s string) {
		wantText, wantASCII := true, true
		for i := 0; i < len(s); i++ {
			if !plain[s[i]] {
				wantText = false
			}
			if s[i] < 0x20 || s[i] >= 0x7f {
				wantASCII = false
			}
		}
		require.EqualValues(t, wantText, plainText(s), "plainText(%q)", s)
		require.EqualValues(t, wantASCII, plainASCII(s), "plainASCII(%q)", s)
	})
}

// FuzzParse: any input parses or is refused without panicking; what
// parses with the envelope has a function without ':' or white space, and
// an older simulator line no clock, lane or position.
func FuzzParse(f *testing.F) {
	f.Add([]byte("[mono_ns=5][T0x1a][WARN] main.serve: [server.go:88] slow ms=1\n"))
	f.Add([]byte("[mono_ns=1][T0x][INFO] : x"))
	f.Fuzz(func(t *testing.T, line []byte) {
		p, err := Parse(line)
		if err != nil {
			return
		}
		if p.Legacy {
			require.False(t, p.Func == "" || bytes.ContainsAny([]byte(p.Func), " \t[") || p.Mono != 0 || p.TID != 0 || p.File != "", "parsed %+v from %q", p, line)
			return
		}
		require.False(t, p.Func == "" || bytes.ContainsAny([]byte(p.Func), ": \t") || p.Mono < 0, "parsed %+v from %q", p, line)
	})
}

// FuzzToken checks token, which decides quoting from where its scan for
// safe bytes stopped, against the whole-string rule: text quoted exactly
// when needsQuoting says so.
func FuzzToken(f *testing.F) {
	for _, s := range []string{"", "plain", "two words", "a=b", "[STRACE]", "x[y", "é", "tab\tx", "\x7f", "q\"", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var got, want Line
		got.token(s)
		safe := len(s) > 0
		for i := 0; i < len(s); i++ {
			safe = safe && safeToken[s[i]]
		}
		if safe {
			want.raw(s)
		} else {
			want.text(s, needsQuoting(s))
		}
		require.Equal(t, string(want.Finish()), string(got.Finish()), "token(%q)", s)
	})
}

// FuzzAppendDecimal holds appendDecimal, appendInt and appendHex to
// strconv for any value (TestAppendDecimal takes every power of ten and
// its neighbours).
func FuzzAppendDecimal(f *testing.F) {
	f.Add(uint64(12345678))
	f.Add(uint64(183746529384756))
	f.Add(uint64(math.MaxUint64))
	f.Add(uint64(1 << 63))
	f.Fuzz(func(t *testing.T, v uint64) {
		require.Equal(t, strconv.FormatUint(v, 10), string(appendDecimal([]byte{}, v)))
		require.Equal(t, strconv.FormatInt(int64(v), 10), string(appendInt([]byte{}, int64(v))))
		require.Equal(t, strconv.FormatUint(v, 16), string(appendHex([]byte{}, v)))
	})
}

// FuzzSpanLine holds Line.Span, which writes a body that surely fits in
// place, to the body written apart and then cut at the bound, and reads
// the record back with its clock (a negative one written 0) and lane.
func FuzzSpanLine(f *testing.F) {
	f.Add("chip.run", int64(7), uint64(3), int64(-1), strings.Repeat("k=v ", 40))
	f.Add(strings.Repeat("n", 100), int64(math.MaxInt64), uint64(math.MaxUint64), int64(math.MinInt64), strings.Repeat("x", 400))
	f.Add("s", int64(-1), uint64(0), int64(math.MaxInt64), "")
	f.Add("s", int64(math.MinInt64), uint64(0), int64(0), "")
	f.Fuzz(func(t *testing.T, name string, tid int64, inv uint64, ts int64, attrs string) {
		s := Span{PID: 4242, TID: tid, Inv: inv, HID: inv * 31, Depth: int(tid % 70), Name: name, TS: ts, Dur: ts / 3}
		var got, want Line
		got.Span(ts, tid, &s, []byte(attrs))
		want.headerName(ts, tid, "TIMING")
		want.raw(wire.FuncSpan + ": ")
		var buf [MaxRecord]byte
		want.rawBytes(s.AppendBody(buf[:0], []byte(attrs)))
		line := got.Finish()
		require.Equal(t, string(want.Finish()), string(line))
		p, err := Parse(line)
		require.NoError(t, err, "%q", line)
		require.Equal(t, max(ts, 0), p.Mono, "%q", line)
		require.Equal(t, tid, p.TID, "%q", line)
	})
}

// FuzzSpanAttrs holds SpanAttrs.Add, which writes plain pairs that surely
// fit directly, to the field encoder alone, for every kind the direct path
// takes and at every fill of the field, so its boundary is crossed.
func FuzzSpanAttrs(f *testing.F) {
	f.Add("rank", "bind", int64(7), uint8(0))
	f.Add("k=v", "two words", int64(math.MinInt64), uint8(170))
	f.Add("", "", int64(-1), uint8(191))
	f.Fuzz(func(t *testing.T, key, str string, n int64, fill uint8) {
		slow := func(s *SpanAttrs, a slog.Attr) { // Add without its direct path
			if !s.full {
				s.addField(a)
			}
		}
		for _, a := range []slog.Attr{
			slog.String(key, str), slog.Int64(key, n), slog.Uint64(key, uint64(n)),
			slog.Bool(key, n&1 == 1), slog.Float64(key, float64(n)),
		} {
			var got, want SpanAttrs
			pad := slog.String("p", strings.Repeat("x", int(fill)))
			slow(&got, pad)
			slow(&want, pad)
			got.Add(a)
			slow(&want, a)
			require.Equal(t, string(want.Bytes()), string(got.Bytes()), "%v after %d bytes", a, fill)
			got.Add(a) // and once more, past the bound
			slow(&want, a)
			require.Equal(t, string(want.Bytes()), string(got.Bytes()), "%v twice after %d bytes", a, fill)
		}
	})
}

// FuzzAppendName holds appendName, which appends a plain name that fits
// as it is, to the field encoder.
func FuzzAppendName(f *testing.F) {
	f.Add("chip.run.bind")
	f.Add(strings.Repeat("n", nameCap))
	f.Add(strings.Repeat("n", nameCap+1))
	f.Add("a b=c")
	f.Fuzz(func(t *testing.T, name string) {
		fl := newField([]byte("pre"), nameCap)
		fl.bytesIn(name, &safeName)
		require.Equal(t, string(fl.bytes()), string(appendName([]byte("pre"), name)))
	})
}

// FuzzAppendDecimalInPlace holds appendDecimal, which stores whole words
// straight into b when b has room, to strconv at every length and room,
// and checks it writes nothing past the digits.
func FuzzAppendDecimalInPlace(f *testing.F) {
	f.Add(uint64(183746529384756), uint8(3), uint8(17))
	f.Add(uint64(100000000), uint8(0), uint8(9))
	f.Add(uint64(9999999999999999), uint8(5), uint8(16))
	f.Fuzz(func(t *testing.T, v uint64, pre, room uint8) {
		buf := bytes.Repeat([]byte{0xEE}, int(pre)+int(room))
		for i := range int(pre) {
			buf[i] = 'p'
		}
		got := appendDecimal(buf[:pre], v)
		want := strconv.AppendUint(bytes.Repeat([]byte{'p'}, int(pre)), v, 10)
		require.Equal(t, string(want), string(got), "%d after %d bytes with %d of room", v, pre, room)
		if len(got) <= len(buf) {
			for _, c := range buf[len(got):] {
				require.Equal(t, byte(0xEE), c, "%d: a byte written past the digits", v)
			}
		}
	})
}
