package envelope

import (
	"bytes"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/netip"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
)

// render builds one record the way a handler does, without a source.
func render(msg string, attrs ...slog.Attr) string {
	var l Line
	l.header(123, 0x1a, slog.LevelInfo)
	l.function("go")
	l.Message(msg)
	for _, a := range attrs {
		l.Attr("", 0, a)
	}
	return string(l.Finish())
}

const hdr = "[mono_ns=123][T0x1a][INFO] go: "

func TestGolden(t *testing.T) {
	tm := time.Date(2026, 6, 1, 10, 0, 0, 123456789, time.UTC)
	for _, tt := range []struct {
		name  string
		msg   string
		attrs []slog.Attr
		want  string
	}{
		{"static", "hello", nil, "hello"},
		{"empty message", "", nil, ""},
		{"kinds", "m", []slog.Attr{
			slog.String("s", "v"), slog.Int("i", -7), slog.Uint64("u", 7),
			slog.Float64("f", 1.5), slog.Bool("b", true), slog.Duration("d", 1500*time.Microsecond),
			slog.Time("t", tm), slog.Any("e", errors.New("boom")),
		}, `m s=v i=-7 u=7 f=1.5 b=true d=1.5ms t=2026-06-01T10:00:00.123Z e=boom`},
		{"quoting", "m", []slog.Attr{
			slog.String("s", "two words"), slog.String("q", `a"b`), slog.String("eq", "a=b"),
			slog.String("empty", ""), slog.String("two words", "k"),
		}, `m s="two words" q="a\"b" eq="a=b" empty="" "two words"=k`},
		{"groups", "m", []slog.Attr{
			slog.Group("req", slog.Int("id", 7), slog.Group("peer", slog.String("ip", "::1"))),
			slog.Group("", slog.Int("inline", 1)),
			slog.Group("empty"),
			{},
		}, `m req.id=7 req.peer.ip=::1 inline=1`},
		{"text marshaler", "m", []slog.Attr{slog.Any("ip", netip.MustParseAddr("10.0.0.1"))}, `m ip=10.0.0.1`},
		{"bytes", "m", []slog.Attr{slog.Any("b", []byte("hi\n"))}, `m b="hi\n"`},
		{"nil any", "m", []slog.Attr{slog.Any("x", nil)}, `m x=<nil>`},
		{"struct", "m", []slog.Attr{slog.Any("p", struct{ A int }{3})}, `m p={A:3}`},
		{"float special", "m", []slog.Attr{slog.Float64("nan", math.NaN()), slog.Float64("inf", math.Inf(-1))}, `m nan=NaN inf=-Inf`},
		{"newline in message", "a\nb", nil, `a\nb`},
		{"controls in message", "a\r\tb\x00\x7f", nil, `a\r\tb\x00\x7f`},
		{"backslash and quote stay in message", `a\b "c"`, nil, `a\b "c"`},
		{"invalid utf8", "a\xffb", nil, `a\xffb`},
		{"unicode kept", "héllo → 世界", nil, "héllo → 世界"},
		{"line separators", "a\u2028b\u0085c", nil, `a\u2028b\u0085c`},
		{"marker strace", "x [STRACE] v=1", nil, "x %5BSTRACE] v=1"},
		{"marker others", "[HOSTLOG_DROPS][CLOCK_ANCHOR][OP][mono_ns=1]", nil, "%5BHOSTLOG_DROPS]%5BCLOCK_ANCHOR]%5BOP]%5Bmono_ns=1]"},
		{"harmless brackets", "[a] [STRACE [op]", nil, "[a] [STRACE [op]"},
		{"marker in key and value", "m", []slog.Attr{slog.String("[OP]", "[STRACE]"), slog.String("k", "a [STRACE] b")},
			`m %5BOP]=%5BSTRACE] k="a %5BSTRACE] b"`},
		{"marker in group", "m", []slog.Attr{slog.Group("[STRACE]", slog.Int("a", 1))}, `m %5BSTRACE].a=1`},
		{"newline in value", "m", []slog.Attr{slog.String("k", "a\nb")}, `m k="a\nb"`},
		{"newline in key", "m", []slog.Attr{slog.String("a\nb", "v")}, `m "a\nb"=v`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := render(tt.msg, tt.attrs...)
			want := hdr + tt.want + "\n"
			assert.EqualValues(t, want, got, "got  %q\nwant %q", got, want)
		})
	}
}

func TestHeaderAndCaller(t *testing.T) {
	var l Line
	l.header(183746529384756, 0x1a, slog.LevelWarn)
	l.caller(&frame{prefix: "main.serve: [server.go:88] "})
	l.Message("slow request")
	l.Attr("", 0, slog.String("path", "/v1/items"))
	l.Attr("", 0, slog.Int("ms", 412))
	got := string(l.Finish())
	want := "[mono_ns=183746529384756][T0x1a][WARN] main.serve: [server.go:88] slow request path=/v1/items ms=412\n"
	assert.EqualValues(t, want, got, "got  %q\nwant %q", got, want)
}

func TestLevelNames(t *testing.T) {
	for _, tt := range []struct {
		l    slog.Level
		want string
	}{
		{levels.Debug, "DEBUG"}, {levels.Info, "INFO"}, {levels.Timing, "TIMING"},
		{levels.Warn, "WARN"}, {6, "WARN"}, {levels.Error, "ERROR"}, {levels.Nul, "ERROR"}, {-9, "DEBUG"},
	} {
		var l Line
		l.header(1, 1, tt.l)
		assert.EqualValues(t, "[mono_ns=1][T0x1]["+tt.want+"] ", string(l.Content()))
	}
}

// TestTruncation checks the 512-byte rule byte by byte around the bound:
// content of n bytes gives a record of n+1 bytes while n+1 <= 511, and
// exactly 512 bytes ending "~\n" from n+1 = 512 on.
func TestTruncation(t *testing.T) {
	for _, total := range []int{2, 100, 510, 511, 512, 513, 600, 4096} {
		t.Run(fmt.Sprint(total), func(t *testing.T) {
			content := make([]byte, total-1)
			for i := range content {
				content[i] = 'a' + byte(i%26)
			}
			var l Line
			l.trusted(string(content))
			got := l.Finish()
			if total <= 511 {
				want := string(content) + "\n"
				require.EqualValues(t, want, string(got), "untouched record changed: len %d, want %d", len(got), len(want))
				return
			}
			require.EqualValues(t, MaxRecord, len(got), "len = %d, want %d", len(got), MaxRecord)
			want := string(content[:510]) + "~\n"
			assert.EqualValues(t, want, string(got), "got tail %q, want tail %q", got[500:], want[500:])
		})
	}
	t.Run("bound hit by escapes", func(t *testing.T) {
		var l Line
		l.Message(strings.Repeat("\n", 300)) // 600 bytes escaped
		got := l.Finish()
		require.False(t, len(got) != MaxRecord || !bytes.HasSuffix(got, []byte("~\n")), "len %d, tail %q", len(got), got[len(got)-4:])
		assert.EqualValues(t, 1, bytes.Count(got, []byte{'\n'}), "raw newline inside truncated record")
	})
	t.Run("many attrs", func(t *testing.T) {
		var l Line
		l.header(1, 1, 0)
		for i := range 100 {
			l.Attr("", 0, slog.Int("key", i))
		}
		got := l.Finish()
		require.False(t, len(got) != MaxRecord || string(got[510:]) != "~\n", "len %d tail %q", len(got), got[500:])
	})
}

type panicky struct{}

func (panicky) String() string { panic("stringer broke") }

type panickyErr struct{ p *int }

func (e *panickyErr) Error() string { return fmt.Sprint(*e.p) }

type panickyText struct{}

func (panickyText) MarshalText() ([]byte, error) { panic(errors.New("marshal broke")) }

type failingText struct{}

func (failingText) MarshalText() ([]byte, error) { return nil, errors.New("no text") }

type panickyValuer struct{}

func (panickyValuer) LogValue() slog.Value { panic("valuer broke") }

func TestNeverPanics(t *testing.T) {
	var nilErr *panickyErr
	for _, tt := range []struct {
		name string
		a    slog.Attr
		want string
	}{
		{"stringer", slog.Any("k", panicky{}), `k="!PANIC: stringer broke"`},
		{"nil pointer error", slog.Any("k", nilErr), `k=<nil>`},
		{"marshal text", slog.Any("k", panickyText{}), `k="!PANIC: marshal broke"`},
		{"marshal error", slog.Any("k", failingText{}), `k="!ERROR:no text"`},
		{"log valuer", slog.Any("k", panickyValuer{}), `k="LogValue panicked`},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got := render("m", tt.a)
			assert.True(t, strings.HasPrefix(got, hdr+"m "+tt.want), "got %q, want prefix %q", got, tt.want)
			assert.EqualValues(t, 1, strings.Count(got, "\n"), "not one line: %q", got)
		})
	}
}

func TestAppendDuration(t *testing.T) {
	for _, d := range []time.Duration{
		0, 1, 999, 1000, 1001, 1500, 999999, time.Millisecond, 1500 * time.Microsecond,
		time.Second - 1, time.Second, 1500 * time.Millisecond, time.Minute, 61 * time.Second,
		time.Hour, time.Hour + time.Nanosecond, 100 * time.Hour, -1, -time.Hour - 5,
		math.MaxInt64, math.MinInt64,
	} {
		got, want := string(appendDuration(nil, d)), d.String()
		assert.EqualValues(t, want, got, "appendDuration(%d) = %q, want %q", int64(d), got, want)
	}
}

func FuzzAppendDuration(f *testing.F) {
	f.Add(int64(1500))
	f.Add(int64(-3723000000001))
	f.Fuzz(func(t *testing.T, n int64) {
		d := time.Duration(n)
		got, want := string(appendDuration(nil, d)), d.String()
		require.EqualValues(t, want, got, "appendDuration(%d) = %q, want %q", n, got, want)
	})
}

func TestMachineRecords(t *testing.T) {
	t.Run("drops", func(t *testing.T) {
		var l Line
		l.Drops(99, 0x2, &Drops{PID: 1234, New: 3, Total: 5, QueueFull: 5})
		want := "[mono_ns=99][T0x2][ERROR] host_log_drops: [HOSTLOG_DROPS] v=1 pid=1234 new=3 total=5 queue_full=5 claim_exhausted=0 output_failed=0 not_admitted=0\n"
		assert.EqualValues(t, want, string(l.Finish()))
	})
	t.Run("anchor", func(t *testing.T) {
		var l Line
		now := time.Now()
		a := Anchor{PID: 4711, Mono: Mono(now), Wall: now.UnixNano()}
		l.Anchor(0x1, &a)
		mono := Mono(now)
		want := fmt.Sprintf("[mono_ns=%d][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=4711 mono_ns=%d wall_ns=%d\n", mono, mono, now.UnixNano())
		assert.EqualValues(t, want, string(l.Finish()))
	})
	t.Run("trusted keeps markers, escapes controls", func(t *testing.T) {
		var l Line
		l.trusted("[STRACE] v=1\n")
		assert.EqualValues(t, "[STRACE] v=1\\n\n", string(l.Finish()))
	})
}

func TestFuncName(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"simpler.dev/log/sink.(*Queue).Push", "sink.(*Queue).Push"},
		{"main.main", "main.main"},
		{"main.main.func1", "main.main.func1"},
		{"example.com/a/b.Map[go.shape.string,example.com/x.T]", "b.Map[go.shape.string,example.com/x.T]"},
		{"", "go"},
		{"a/", "go"},
		{"weird name:x", "weird name:x"}, // raw: Line.Func escapes
	} {
		assert.EqualValues(t, tt.want, funcName(tt.in), "funcName(%q)", tt.in)
	}
}

func TestLookup(t *testing.T) {
	pc, file, line := callerPC()
	f := lookup(pc)
	assert.EqualValues(t, "envelope.callerPC", f.Function, "Function = %q", f.Function)
	assert.False(t, f.File != file || f.Line != line, "got %s:%d, want %s:%d", f.File, f.Line, file, line)
	assert.EqualValues(t, f, lookup(pc), "second lookup missed the cache")
	want := fmt.Sprintf("envelope.callerPC: [%s:%d] ", file, line)
	assert.EqualValues(t, want, f.prefix, "Prefix = %q, want %q", f.prefix, want)
}

func TestMonoIncreases(t *testing.T) {
	a := Mono(time.Time{})
	b := Mono(time.Now())
	c := Mono(time.Time{})
	assert.False(t, a <= 0 || b < a || c < b, "mono not increasing: %d %d %d", a, b, c)
}

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		name string
		line string
		want Parsed
		err  bool
	}{
		{"with source", "[mono_ns=5][T0x1a][WARN] main.serve: [server.go:88] slow ms=1\n",
			Parsed{Header: Header{Mono: 5, TID: 0x1a, Level: levels.Warn, Func: "main.serve", File: "server.go", Line: 88}, Body: []byte("slow ms=1")}, false},
		{"no source", "[mono_ns=5][T0x1][INFO] go: hello",
			Parsed{Header: Header{Mono: 5, TID: 1, Level: levels.Info, Func: "go"}, Body: []byte("hello")}, false},
		{"machine", "[mono_ns=5][T0x1][TIMING] emit_host_span: [STRACE] v=1 ",
			Parsed{Header: Header{Mono: 5, TID: 1, Level: levels.Timing, Func: "emit_host_span"}, Body: []byte("[STRACE] v=1 ")}, false},
		{"legacy", "[INFO] f: x\r\n", Parsed{Header: Header{Level: levels.Info, Func: "f"}, Body: []byte("x"), Legacy: true}, false},
		{"legacy WARNING", "[WARNING] sim.run: [a.c:1] y", Parsed{Header: Header{Level: levels.Warn, Func: "sim.run"}, Body: []byte("[a.c:1] y"), Legacy: true}, false},
		{"legacy without a function", "[INFO] : x", Parsed{}, true},
		{"legacy off the ladder", "[FATAL] f: x", Parsed{}, true},
		{"neither", "INFO f: x", Parsed{}, true},
		{"bad mono", "[mono_ns=x][T0x1][INFO] f: x", Parsed{}, true},
		{"bad tid", "[mono_ns=1][T0xzz][INFO] f: x", Parsed{}, true},
		{"no func", "[mono_ns=1][T0x1][INFO] x", Parsed{}, true},
		{"a level off the ladder", "[mono_ns=1][T0x1][FATAL] f: x", Parsed{}, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			got, err := Parse([]byte(tt.line))
			require.EqualValues(t, tt.err, (err != nil), "err = %v, want error %v", err, tt.err)
			if tt.err {
				return
			}
			if got.Mono != tt.want.Mono || got.TID != tt.want.TID || got.Level != tt.want.Level ||
				got.Func != tt.want.Func || got.File != tt.want.File || got.Line != tt.want.Line ||
				string(got.Body) != string(tt.want.Body) || got.Legacy != tt.want.Legacy {
				t.Errorf("got %+v (body %q), want %+v (body %q)", got, got.Body, tt.want, tt.want.Body)
			}
		})
	}
}

func TestAppendTime(t *testing.T) {
	locs := []*time.Location{time.UTC, time.FixedZone("x", 5*3600+30*60), time.FixedZone("y", -7*3600), time.FixedZone("odd", 37)}
	for _, tm := range []time.Time{
		time.Date(2026, 6, 1, 10, 0, 0, 123456789, time.UTC),
		time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(9999, 12, 31, 23, 59, 59, 999999999, time.UTC),
		time.Date(10000, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Date(-5, 1, 1, 0, 0, 0, 0, time.UTC),
		time.Now(),
	} {
		for _, loc := range locs {
			in := tm.In(loc)
			got, want := string(appendTime(nil, in)), in.Format("2006-01-02T15:04:05.000Z07:00")
			assert.EqualValues(t, want, got, "appendTime(%v) = %q, want %q", in, got, want)
		}
	}
}

func TestNumbers(t *testing.T) {
	for _, v := range []int64{0, 1, 9, 10, 99, 100, 101, 12345, 183746529384756, math.MaxInt64, -1, -100, math.MinInt64} {
		var l Line
		l.int64(v)
		got, want := string(l.Content()), fmt.Sprint(v)
		assert.EqualValues(t, want, got, "int64(%d) = %q", v, got)
	}
	var l Line
	l.uint64(math.MaxUint64)
	l.byte1(' ')
	l.hex(0x1a)
	l.byte1(' ')
	l.hex(0)
	assert.EqualValues(t, "18446744073709551615 1a 0", string(l.Content()))
}

// TestTraceIDs: a record's trace context is written as its last words,
// in lower-case hex, and a fit keeps the pair whole while it cuts the
// message.
func TestTraceIDs(t *testing.T) {
	trace := [16]byte{0x4b, 0xf9, 0x2f, 0x35, 0x77, 0xb3, 0x4d, 0xa6, 0xa3, 0xce, 0x92, 0x9d, 0x0e, 0x0e, 0x47, 0x36}
	span := [8]byte{0x00, 0xf0, 0x67, 0xaa, 0x0b, 0xa9, 0x02, 0xb7}
	const ids = " trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7\n"
	var l Line
	l.header(5, 0x1, slog.LevelInfo)
	l.caller(&frame{prefix: "main.f: [f.go:1] "})
	l.Message("served")
	l.TraceIDs(trace, span)
	assert.Equal(t, "[mono_ns=5][T0x1][INFO] main.f: [f.go:1] served"+ids, string(l.Finish()))

	render := func(l *Line) {
		l.header(5, 0x1, slog.LevelInfo)
		l.caller(&frame{prefix: "main.f: [f.go:1] "})
		l.Message(strings.Repeat("x", 600))
		l.TraceIDs(trace, span)
	}
	var long Line
	render(&long)
	require.True(t, long.Truncated())
	require.True(t, long.Fit(render), "fitted by its message")
	got := string(long.Finish())
	assert.LessOrEqual(t, len(got), MaxRecord)
	assert.True(t, strings.HasSuffix(got, ids), "the ids kept whole: %q", got)
}
