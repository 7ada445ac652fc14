package envelope

import (
	"fmt"
	"log/slog"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// simplerRE is the parser regex of simpler's strace_timing.py for one
// record (without its look-ahead), as the issue quotes it.
var simplerRE = regexp.MustCompile(`\[STRACE\]\s+v=(\d+)\s+pid=(\d+)\s+tid=(\d+)\s+inv=(\d+)\s+hid=([0-9a-fA-F]+)\s+depth=(\d+)\s+name=(\S+)\s+ts=(\d+)\s+dur=(\d+)(.*)`)

func TestNameEncoding(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"chip.run.bind", "chip.run.bind"},
		{"bad name\n[STRACE]=x", "bad%20name%0A%5BSTRACE%5D%3Dx"},
		{"100%", "100%25"},
		{"\xff\x00\x7f", "%FF%00%7F"},
		{"héllo", "h%C3%A9llo"},
		{strings.Repeat("a", 64), strings.Repeat("a", 64)},
		{strings.Repeat("a", 65), strings.Repeat("a", 63) + "~"},
		{strings.Repeat("a", 62) + "\n", strings.Repeat("a", 62) + "~"},   // the escape would end at 65
		{strings.Repeat("a", 60) + "\n", strings.Repeat("a", 60) + "%0A"}, // exactly 63, fits
		{strings.Repeat("a", 61) + "\n", strings.Repeat("a", 61) + "%0A"}, // exactly 64, fits
		{strings.Repeat("a", 61) + "\nb", strings.Repeat("a", 61) + "~"},
		{strings.Repeat("\n", 30), strings.Repeat("%0A", 21) + "~"},
	} {
		t.Run(fmt.Sprintf("%.20q", tt.in), func(t *testing.T) {
			got := string(appendName(nil, tt.in))
			assert.EqualValues(t, tt.want, got, "got  %q\nwant %q", got, tt.want)
			assert.False(t, len(got) > nameCap, "%d bytes", len(got))
		})
	}
}

func TestAttrsEncoding(t *testing.T) {
	for _, tt := range []struct{ name, in, want string }{
		{"spec example", "\n" + strings.Repeat("x", 186) + "\ny", "%0A" + strings.Repeat("x", 186) + "~"},
		{"spaces and equals kept", "rank=0 run_id=7", "rank=0 run_id=7"},
		{"markers", "a=[OP] b=50%", "a=%5BOP%5D b=50%25"},
		{"exactly full", strings.Repeat("y", 192), strings.Repeat("y", 192)},
		{"one over", strings.Repeat("y", 193), strings.Repeat("y", 191) + "~"},
		{"empty", "", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.EqualValues(t, tt.want, string(appendAttrsField(nil, tt.in)))
		})
	}
}

func TestBody(t *testing.T) {
	for _, tt := range []struct {
		name string
		r    record
		want string
	}{
		{"empty attrs keep the trailing space", record{PID: 4711, TID: 26, Inv: 3, HID: 0x9f2c, Depth: 0, Name: "chip.run", TS: 100, Dur: 41250},
			"[STRACE] v=1 pid=4711 tid=26 inv=3 hid=9f2c depth=0 name=chip.run ts=100 dur=41250 "},
		{"64-bit inv and attrs", record{PID: 1, TID: 2, Inv: 4294967303, HID: 0, Depth: 2, Name: "a.b", TS: 5, Dur: 6, Attrs: "rank=0 run_id=7"},
			"[STRACE] v=1 pid=1 tid=2 inv=4294967303 hid=0 depth=2 name=a.b ts=5 dur=6 rank=0 run_id=7"},
		{"negative duration clamps", record{PID: 1, TID: 1, Name: "x", TS: 5, Dur: -9},
			"[STRACE] v=1 pid=1 tid=1 inv=0 hid=0 depth=0 name=x ts=5 dur=0 "},
		{"empty name", record{PID: 1, TID: 1, TS: 5, Dur: 1},
			"[STRACE] v=1 pid=1 tid=1 inv=0 hid=0 depth=0 name=unnamed ts=5 dur=1 "},
		{"max hid", record{PID: 1, TID: 1, HID: ^uint64(0), Name: "x", TS: 1, Dur: 1},
			"[STRACE] v=1 pid=1 tid=1 inv=0 hid=ffffffffffffffff depth=0 name=x ts=1 dur=1 "},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := string(tt.r.body())
			assert.EqualValues(t, tt.want, got, "got  %q\nwant %q", got, tt.want)
			assert.True(t, simplerRE.MatchString(got), "simpler's regex does not match %q", got)
		})
	}
}

func TestAttrWriter(t *testing.T) {
	w := attrWriter{f: newField(nil, attrsCap)}
	for _, a := range []slog.Attr{
		slog.Int("rank", 0), slog.String("msg", "two words"), slog.String("eq", "a=b"),
		slog.Group("g", slog.Bool("ok", true)), slog.Duration("d", 1500*time.Microsecond), {},
		slog.Float64("f", 0.5),
	} {
		w.attr("", a)
	}
	want := "rank=0 msg=two%20words eq=a%3Db g.ok=true d=1.5ms f=0.5"
	assert.EqualValues(t, want, string(w.f.bytes()))
}

func decodePercent(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) {
			var c byte
			fmt.Sscanf(s[i+1:i+3], "%02X", &c)
			b.WriteByte(c)
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}

// FuzzBody checks the encoder against simpler's parser: every body
// matches its regex with the same field values, fields stay within their
// capacities, and an untruncated field decodes back to the input.
func FuzzBody(f *testing.F) {
	f.Add("chip.run", "rank=0", uint64(1), uint64(0x9f), int64(5), int64(6))
	f.Add("bad name\n[STRACE]=x", "\n"+strings.Repeat("x", 186)+"\ny", uint64(4294967303), uint64(0), int64(0), int64(-1))
	f.Add("", "%%%[", uint64(0), ^uint64(0), int64(1), int64(1))
	f.Fuzz(func(t *testing.T, name, attrs string, inv, hid uint64, ts, dur int64) {
		body := string(record{PID: 7, TID: 9, Inv: inv, HID: hid, Depth: 1, Name: name, TS: ts, Dur: dur, Attrs: attrs}.body())
		m := simplerRE.FindStringSubmatch(body)
		require.NotNil(t, m, "regex does not match %q", body)
		require.False(t, m[4] != fmt.Sprint(inv) || m[5] != fmt.Sprintf("%x", hid), "inv/hid %s/%s from %d/%x", m[4], m[5], inv, hid)
		encName := m[7]
		require.False(t, len(encName) > nameCap, "name of %d bytes", len(encName))
		encAttrs := strings.TrimPrefix(m[10], " ")
		require.False(t, len(encAttrs) > attrsCap, "attrs of %d bytes", len(encAttrs))
		require.False(t, strings.Contains(body[1:], "[") || strings.Contains(body, "\n"), "a bracket or newline survived in %q", body)
		require.False(t, name != "" && !strings.HasSuffix(encName, "~") && decodePercent(encName) != name, "name %q does not decode back from %q", name, encName)
		require.False(t, !strings.HasSuffix(encAttrs, "~") && decodePercent(encAttrs) != attrs, "attrs %q do not decode back from %q", attrs, encAttrs)
		for _, fld := range []string{encName, encAttrs} {
			i := strings.LastIndexByte(fld, '%')
			require.False(t, i >= 0 && i > len(fld)-3, "partial escape at the end of %q", fld)
		}
	})
}

// FuzzDecodeRoundTrip: a name or attribute field written here and not
// truncated decodes back to its bytes with the readers' decoder; the
// reader's ParseAttrs never panics on it.
func FuzzDecodeRoundTrip(f *testing.F) {
	f.Add("bad name\n[STRACE]=x")
	f.Add("100% \xff")
	f.Fuzz(func(t *testing.T, s string) {
		enc := string(appendName(nil, s))
		if !strings.HasSuffix(enc, "~") && s != "" {
			require.EqualValues(t, s, DecodeField(enc), "Decode(%q)", enc)
		}
		EachSpanAttr(appendAttrsField(nil, s), func(k, v string) bool { return true })
	})
}

// record is a span with its attributes as one raw string, the shape of
// the encoder's tests.
type record struct {
	PID   int
	TID   int64
	Inv   uint64
	HID   uint64
	Depth int
	Name  string
	TS    int64
	Dur   int64
	Attrs string
}

func (r record) body() []byte {
	s := Span{PID: r.PID, TID: r.TID, Inv: r.Inv, HID: r.HID, Depth: r.Depth, Name: r.Name, TS: r.TS, Dur: r.Dur}
	return s.AppendBody(nil, appendAttrsField(nil, r.Attrs))
}
