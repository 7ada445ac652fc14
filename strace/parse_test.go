package strace

import (
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
)

func parseFile(t *testing.T, path string) *Parser {
	t.Helper()
	f, err := os.Open(path)
	require.NoError(t, err)
	defer f.Close()
	var p Parser
	require.NoError(t, p.Read(f))
	return &p
}

func TestParseFixture(t *testing.T) {
	p := parseFile(t, "testdata/mixed.log")
	want := []Span{
		{PID: 100, TID: 1, Inv: 1, HID: "abc", Depth: 1, Name: "chip.run.bind", TS: 2000, Dur: 1000, Attrs: "bytes=4096"},
		{PID: 100, TID: 2, Inv: 1, HID: "abc", Depth: 2, Name: "chip.run.bind.args", TS: 2100, Dur: 300, Attrs: "note=two%20words"},
		{PID: 100, TID: 2, Inv: 1, HID: "abc", Depth: 2, Name: "chip.run.bind.more", TS: 2500, Dur: 100, Attrs: ""},
		{PID: 100, TID: 1, Inv: 1, HID: "abc", Depth: 0, Name: "chip.run", TS: 1500, Dur: 5000, Attrs: "rank=0 run_id=7"},
		{PID: 100, TID: 1, Inv: 1, HID: "abc", Depth: 2, Name: "chip.run.runner_run.device_wall", TS: 77, Dur: 4000, Attrs: "clk=dev"},
		{PID: 100, TID: 3, Inv: 0, HID: "0", Depth: 0, Name: "ext.pypto.decode layer", TS: 3000, Dur: 250, Attrs: "layer=3"},
		{PID: 100, TID: 3, Inv: 0, HID: "0", Depth: 0, Name: "node.dispatch", TS: 3100, Dur: 50, Attrs: "role=scheduler"},
		{PID: 200, TID: 9, Inv: 1, HID: "abc", Depth: 0, Name: "chip.run", TS: 9000, Dur: 7000, Attrs: ""},
	}
	require.EqualValues(t, len(want), len(p.Spans), "%d spans: %+v", len(p.Spans), p.Spans)
	for i := range want {
		got := p.Spans[i]
		_, placed := got.WallAt(got.TS)
		got.clock = clock{}
		require.NotNil(t, got.Run, "span %d has its run", i)
		r := *got.Run
		r.Drops = nil
		assert.Equal(t, Run{PID: want[i].PID, N: 1, Of: 1}, r, "span %d: an unmarked log's one run of its pid", i)
		got.Run = nil
		assert.EqualValues(t, want[i], got, "span %d:\ngot  %+v\nwant %+v", i, got, want[i])
		// pid 100 has an anchor, pid 200 none; a device span is never
		// on the host's wall clock.
		assert.Equal(t, want[i].PID == 100 && !want[i].IsDevice(), placed, "span %d placed", i)
	}
	assert.False(t, p.Heads != 9 || len(p.Spans) != 8, "heads %d spans %d, want 9 and 8 (one incomplete)", p.Heads, len(p.Spans))
	d := p.Drops[100]
	assert.False(t, d.Total != 5 || d.QueueFull != 4 || d.ClaimExhausted != 1, "pid 100 drops %+v: the larger total must win", d)
	d = p.Drops[200]
	assert.False(t, d.Total != 1 || d.OutputFailed != 1, "pid 200 drops %+v", d)
	a := lastAnchors(p)[100]
	assert.False(t, a.Mono != 1000 || wallAt(a, 2000) != 1780000000000001000, "anchor %+v", a)
	_, ok := lastAnchors(p)[200]
	assert.False(t, ok, "pid 200 has no anchor")
}

// lastAnchors is each process's last anchor.
func lastAnchors(p *Parser) map[int64]envelope.Anchor {
	out := map[int64]envelope.Anchor{}
	for _, a := range p.Anchors {
		out[int64(a.PID)] = a
	}
	return out
}

// wallAt is what an anchor says of monotonic time mono.
func wallAt(a envelope.Anchor, mono int64) int64 { return a.Wall + mono - a.Mono }

func TestRecordBoundaries(t *testing.T) {
	for _, tt := range []struct {
		name  string
		line  string
		attrs []string
	}{
		{"end of line", "[STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=a ts=1 dur=1 k=v", []string{"k=v"}},
		{"crlf", "[STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=a ts=1 dur=1 k=v\r\n", []string{"k=v"}},
		{"next envelope", "[STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=a ts=1 dur=1 k=v [mono_ns=5][T0xA][INFO] some func: text", []string{"k=v"}},
		{"prefix needs a colon", "[STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=a ts=1 dur=1 k=v [mono_ns=5][T0xA][INFO] nocolon", []string{"k=v [mono_ns=5][T0xA][INFO] nocolon"}},
		{"two records", "x [STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=a ts=1 dur=1 a=1 [STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=b ts=1 dur=1 b=2", []string{"a=1", "b=2"}},
		{"tabs as spaces", "[STRACE]\tv=1\tpid=1 tid=1 inv=1 hid=0 depth=0 name=a ts=1 dur=1\tz=9", []string{"z=9"}},
		{"torn then whole", "[STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=a ts=1 [STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=b ts=1 dur=1 ", []string{""}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var p Parser
			p.line([]byte(tt.line))
			var got []string
			for _, s := range p.Spans {
				got = append(got, s.Attrs)
			}
			assert.EqualValues(t, strings.Join(tt.attrs, "|"), strings.Join(got, "|"), "attrs %q, want %q", got, tt.attrs)
		})
	}
}

func TestDecodeAndAttrs(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"bad%20name%0A%5BSTRACE%5D%3Dx", "bad name\n[STRACE]=x"},
		{"100%25", "100%"},
		{"50%", "50%"},
		{"%zz", "%zz"},
		{"trunc~", "trunc~"},
		{"%C3%A9", "é"},
	} {
		assert.EqualValues(t, tt.want, envelope.DecodeField(tt.in), "DecodeField(%q)", tt.in)
	}
}

func TestExternalProducer(t *testing.T) {
	assert.False(t, ExternalProducer("ext.pypto.decode layer") != "pypto" || ExternalProducer("ext..x") != "" || ExternalProducer("ext.p") != "", "ExternalProducer")
}

func TestAnchorsRepeated(t *testing.T) {
	var p Parser
	p.line([]byte("[mono_ns=10][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=5 mono_ns=10 wall_ns=20"))
	p.line([]byte("[mono_ns=30][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=5 mono_ns=30 wall_ns=40 \t\r"))
	p.line([]byte("[mono_ns=50][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=2 pid=5 mono_ns=50 wall_ns=60"))
	require.Len(t, p.Anchors, 2, "the v=2 anchor is not one")
	assert.Equal(t, int64(30), lastAnchors(&p)[5].Mono)
}

// TestAnchorsStrict: only a whole anchor record is an anchor, as in the
// reference's pattern.
func TestAnchorsStrict(t *testing.T) {
	for _, tt := range []struct{ name, line string }{
		{"bare payload", "[CLOCK_ANCHOR] v=1 pid=5 mono_ns=10 wall_ns=20"},
		{"quoted in a message", "[mono_ns=1][T0x1][INFO] f: said [CLOCK_ANCHOR] v=1 pid=5 mono_ns=10 wall_ns=20"},
		{"trailing text", "[mono_ns=1][T0x1][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=5 mono_ns=10 wall_ns=20 extra=1"},
		{"wrong level", "[mono_ns=1][T0x1][INFO] clock_anchor: [CLOCK_ANCHOR] v=1 pid=5 mono_ns=10 wall_ns=20"},
		{"wrong function", "[mono_ns=1][T0x1][TIMING] other: [CLOCK_ANCHOR] v=1 pid=5 mono_ns=10 wall_ns=20"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var p Parser
			p.line([]byte(tt.line))
			assert.Empty(t, p.Anchors)
		})
	}
}

func TestKeepRecords(t *testing.T) {
	dir := t.TempDir()
	text := "[mono_ns=100][T0x1a][WARN] main.serve: [server.go:88] slow request path=/v1/items ms=412\n" +
		logtest.SpanRecord(77, 26, 1, "chip.run", 50, 100, "", 0) +
		"[mono_ns=120][T0x1a][INFO] go: plain\n" +
		"not a record\n"
	for _, tc := range []struct{ name, file string }{{"pid from the file's name", "host.77.log"}, {"pid from the file's spans", "other.log"}} {
		t.Run(tc.name, func(t *testing.T) {
			path := filepath.Join(dir, tc.file)
			require.NoError(t, os.WriteFile(path, []byte(text), 0o600))
			p := Parser{ReadOptions: ReadOptions{KeepRecords: levels.Debug}}
			require.NoError(t, readInput(&p, path, nil))
			require.Len(t, p.Records, 2, "the span is not an ordinary record, the last line is no record")
			r := p.Records[0]
			assert.Equal(t, [4]any{int64(77), int64(100), int64(0x1a), slog.LevelWarn}, [4]any{r.PID, r.Mono, r.TID, r.Level})
			assert.Equal(t, [4]any{"main.serve", "server.go", 88, "slow request"}, [4]any{r.Func, r.File, r.Line, r.Message})
			assert.Equal(t, []slog.Attr{slog.String("path", "/v1/items"), slog.Int64("ms", 412)}, r.Attrs)
			assert.Equal(t, "plain", p.Records[1].Message)
		})
	}
	t.Run("at or above a level", func(t *testing.T) {
		p := Parser{ReadOptions: ReadOptions{KeepRecords: levels.Warn}}
		require.NoError(t, p.Read(strings.NewReader(text)))
		require.Len(t, p.Records, 1)
		assert.Equal(t, "slow request", p.Records[0].Message)
	})
	t.Run("off by default", func(t *testing.T) {
		var p Parser
		require.NoError(t, p.Read(strings.NewReader(text)))
		assert.Empty(t, p.Records)
	})
}
