package loose

import (
	"bytes"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/wire"
)

// TestScanSpanReadsWhatIsWritten: every span package envelope writes is
// found by the reader's grammar with the same fields, wherever it is in a
// line.
func TestScanSpanReadsWhatIsWritten(t *testing.T) {
	s := envelope.Span{PID: 12, TID: 34, Inv: 5, HID: 0xfeed, Depth: 2, Name: "a b[c]", TS: 100, Dur: 7}
	body := s.AppendBody(nil, []byte("k=v"))
	for _, prefix := range []string{"", "junk ", "[mono_ns=1][T0x1][TIMING] emit_host_span: "} {
		line := append([]byte(prefix), body...)
		f, heads, next, found := ScanSpan(line, 0, len(line), len(line))
		require.True(t, found, "%q", line)
		assert.Equal(t, 1, heads)
		assert.Equal(t, len(line), next)
		_, _, _, found = ScanSpan(line, next, len(line), len(line))
		assert.False(t, found, "one record")
		assert.Equal(t, []any{int64(12), int64(34), uint64(5), "feed", 2, "a b[c]", int64(100), int64(7), "k=v"},
			[]any{f.PID, f.TID, f.Inv, string(f.HID), f.Depth, envelope.DecodeField(string(f.Name)), f.TS, f.Dur, string(f.Attrs)})
	}
}

func TestScanAnchorAndDrops(t *testing.T) {
	var l envelope.Line
	a := envelope.Anchor{PID: 7, Mono: 10, Wall: 20}
	l.Anchor(1, &a)
	got, ok := ScanAnchor(l.Finish())
	require.True(t, ok)
	assert.Equal(t, a, got)
	_, ok = ScanAnchor([]byte("[mono_ns=1][T0x1][INFO] f: [CLOCK_ANCHOR] v=1 pid=5 mono_ns=10 wall_ns=20"))
	assert.False(t, ok, "an anchor quoted at INFO")

	d := envelope.Drops{PID: 9, New: 1, Total: 3, QueueFull: 2, NotAdmitted: 1}
	var dl envelope.Line
	dl.Drops(1, 1, &d)
	rec := string(dl.Content())
	body := rec[strings.Index(rec, envelope.MarkerDrops):]
	line := []byte("x " + body + " y " + body)
	var found []envelope.Drops
	ScanDrops(line, len(line), func(d envelope.Drops) { found = append(found, d) })
	assert.Equal(t, []envelope.Drops{d, d}, found)
	found = nil
	ScanDrops(line, 3, func(d envelope.Drops) { found = append(found, d) })
	assert.Equal(t, []envelope.Drops{d}, found, "only the reports that start before limit")
}

// FuzzScanSpan: whatever a line holds, the scanner neither panics nor
// reads past its bounds, resumes within them, and every span it finds
// has fields that were digits in the line; a span written after the
// junk is found.
func FuzzScanSpan(f *testing.F) {
	f.Add([]byte("[STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=a ts=1 dur=1 x=1"), 0)
	f.Add([]byte("[STRACE]\tv=9 pid=1 tid=1 inv=1 hid=AB depth=0 name=a ts=1 dur=1 [mono_ns=5][T0xA][INFO] f: t"), 3)
	f.Add([]byte("[STRACE] v=1 pid=99999999999999999999 [STRACE] v="), 1)
	f.Fuzz(func(t *testing.T, junk []byte, cut int) {
		if bytes.Contains(junk, []byte("\n")) {
			return
		}
		s := envelope.Span{PID: 1, TID: 2, Inv: 3, HID: 4, Name: "n", TS: 5, Dur: 6}
		line := append(append(bytes.Clone(junk), ' '), s.AppendBody(nil, nil)...)
		limit := min(max(cut, 0), len(line))
		each := func(limit int, fn func(*Span)) {
			for i := 0; ; {
				f, heads, next, found := ScanSpan(line, i, limit, len(line))
				require.GreaterOrEqual(t, heads, 0)
				require.LessOrEqual(t, next, len(line))
				require.True(t, next > i || !found, "no progress at %d", i)
				if !found {
					return
				}
				fn(&f)
				i = next
			}
		}
		each(limit, func(f *Span) {
			assert.GreaterOrEqual(t, f.PID, int64(0))
			assert.GreaterOrEqual(t, f.Dur, int64(0))
			assert.NotEmpty(t, f.HID)
		})
		var last *Span
		each(len(line), func(f *Span) { c := *f; last = &c })
		require.NotNil(t, last, "the span written after the junk")
		if string(last.Name) == "n" {
			assert.Equal(t, strconv.Itoa(4), string(last.HID))
		}
	})
}

// TestNumBounds: a number is read in one pass up to 19 digits and
// checked past them: 2^64-1 is a value, 2^64 is not (no span), and
// leading zeros count for nothing.
func TestNumBounds(t *testing.T) {
	for _, tc := range []struct {
		inv   string
		want  uint64
		found bool
	}{
		{"0", 0, true},
		{"9999999999999999999", 9999999999999999999, true},   // 19 digits
		{"18446744073709551615", 18446744073709551615, true}, // 2^64-1, 20 digits
		{"18446744073709551616", 0, false},                   // 2^64
		{"99999999999999999999", 0, false},
		{"0000000000000000000000042", 42, true},
	} {
		t.Run(tc.inv, func(t *testing.T) {
			line := []byte("[STRACE] v=1 pid=1 tid=1 inv=" + tc.inv + " hid=a depth=0 name=n ts=1 dur=1")
			f, _, _, found := ScanSpan(line, 0, len(line), len(line))
			require.Equal(t, tc.found, found)
			if found {
				assert.Equal(t, tc.want, f.Inv)
			}
		})
	}
}

// anchorRE is the reader's anchor grammar as simpler's reader writes it,
// the oracle ScanAnchor's hand-made match is held to.
var anchorRE = regexp.MustCompile(regexp.QuoteMeta(envelope.MarkerHeader) + `\d+\]\[T0x[0-9a-fA-F]+\]\[TIMING\]\s+` +
	wire.FuncAnchor + `:\s+` + regexp.QuoteMeta(envelope.MarkerAnchor) +
	`\s+v=(\d+)\s+pid=(\d+)\s+mono_ns=(\d+)\s+wall_ns=(\d+)[ \t]*\r?$`)

// anchorByRE is ScanAnchor through anchorRE (the fields' values as
// ScanAnchor makes them: the match is what is compared).
func anchorByRE(line []byte) (envelope.Anchor, bool) {
	line = bytes.TrimSuffix(line, []byte{'\n'})
	m := anchorRE.FindSubmatch(line)
	if m == nil {
		return envelope.Anchor{}, false
	}
	return anchorOf(m[1], m[2], m[3], m[4])
}

// TestScanAnchorAsRE: the hand-made match finds what the expression
// finds, on the lines that test its edges.
func TestScanAnchorAsRE(t *testing.T) {
	const a = "[mono_ns=10][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=5 mono_ns=10 wall_ns=20"
	for _, line := range []string{
		a, a + "\n", a + " \t\r\n", a + "\r", a + " x", a + "\r\r",
		"junk " + a, "[mono_ns=1][T0x2][INFO] f: " + a, "[mono_ns=" + a,
		strings.Replace(a, "] clock", "]\v clock", 1), strings.Replace(a, "] clock", "]\f\n clock", 1),
		strings.Replace(a, "v=1", "v=2", 1), strings.Replace(a, "pid=5", "pid=2147483648", 1),
		strings.Replace(a, "wall_ns=20", "wall_ns=9223372036854775808", 1), strings.Replace(a, "T0x1", "T0xAbC", 1),
		strings.Replace(a, "T0x1", "T0x", 1), strings.Replace(a, "mono_ns=10]", "mono_ns=]", 1),
		a + " " + a,
	} {
		want, wantOK := anchorByRE([]byte(line))
		got, ok := ScanAnchor([]byte(line))
		assert.Equal(t, wantOK, ok, "%q", line)
		assert.Equal(t, want, got, "%q", line)
	}
}

func FuzzScanAnchorAsRE(f *testing.F) {
	f.Add([]byte("[mono_ns=10][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=5 mono_ns=10 wall_ns=20\r\n"))
	f.Add([]byte("x [mono_ns=1][T0xf][TIMING]\tclock_anchor:\f[CLOCK_ANCHOR]\nv=01 pid=0 mono_ns=0 wall_ns=0 \t"))
	f.Fuzz(func(t *testing.T, line []byte) {
		want, wantOK := anchorByRE(line)
		got, ok := ScanAnchor(line)
		if ok != wantOK || got != want {
			t.Fatalf("%q: got %v %v, the expression %v %v", line, got, ok, want, wantOK)
		}
	})
}
