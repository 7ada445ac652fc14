package spanattr

import (
	"github.com/petermattis/goid"

	"context"
	"fmt"
	"log/slog"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

type lockedBuffer = logtest.Buffer

// simplerRE is the parser regex of simpler's strace_timing.py for one
// record (without its look-ahead).
var simplerRE = regexp.MustCompile(`\[STRACE\]\s+v=(\d+)\s+pid=(\d+)\s+tid=(\d+)\s+inv=(\d+)\s+hid=([0-9a-fA-F]+)\s+depth=(\d+)\s+name=(\S+)\s+ts=(\d+)\s+dur=(\d+)(.*)`)

// span is one parsed [STRACE] record.
type span struct {
	line                 string
	pid, tid, inv, depth int64
	hid                  string
	name, attrs          string
	ts, dur              int64
	function, file       string
}

var lineRE = regexp.MustCompile(`^\[mono_ns=\d+\]\[T0x[0-9a-f]+\]\[TIMING\] (\S+): (\[\S+\] )?` + simplerRE.String() + `$`)

func spans(t *testing.T, out string) []span {
	t.Helper()
	var res []span
	for _, line := range strings.Split(strings.TrimSuffix(out, "\n"), "\n") {
		if !strings.Contains(line, "[STRACE]") {
			continue
		}
		m := lineRE.FindStringSubmatch(line)
		require.NotNil(t, m, "not a span record: %q", line)
		n := func(i int) int64 { v, _ := strconv.ParseInt(m[i], 10, 64); return v }
		res = append(res, span{line: line, function: m[1], file: m[2], pid: n(4), tid: n(5), inv: n(6), hid: m[7],
			depth: n(8), name: m[9], ts: n(10), dur: n(11), attrs: strings.TrimPrefix(m[12], " ")})
	}
	return res
}

func newLogger(t testing.TB, level slog.Level) (*slog.Logger, *lockedBuffer, *slogsimpler.State) {
	var buf lockedBuffer
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: level, Output: &buf})
	require.NoError(t, err)
	return slog.New(st.Handler()), &buf, st
}

func TestSpanTree(t *testing.T) {
	logger, buf, _ := newLogger(t, levels.Timing)
	ctx := WithLogger(context.Background(), logger)
	ctx, inv := NewInvocation(ctx, 0x9f2c)
	root, sp := Start(ctx, "chip.run", slog.Int("rank", 0))
	c1, sp1 := Start(root, "chip.run.bind")
	_, sp2 := Start(c1, "chip.run.bind.args")
	time.Sleep(time.Millisecond)
	sp2.End()
	sp1.End(slog.Int("bytes", 42))
	_, sp3 := Start(root, "chip.run.launch")
	sp3.End()
	sp.End(slog.Int("run_id", 7))
	inv.End()

	got := spans(t, buf.String())
	want := []struct {
		name  string
		depth int64
		attrs string
	}{
		{"chip.run.bind.args", 2, ""},
		{"chip.run.bind", 1, "bytes=42"},
		{"chip.run.launch", 1, ""},
		{"chip.run", 0, "rank=0 run_id=7"},
	}
	require.EqualValues(t, len(want), len(got), "%d spans: %q", len(got), buf.String())
	for i, w := range want {
		g := got[i]
		assert.False(t, g.name != w.name || g.depth != w.depth || g.attrs != w.attrs, "span %d: got %s depth %d attrs %q, want %s depth %d attrs %q", i, g.name, g.depth, g.attrs, w.name, w.depth, w.attrs)
		assert.False(t, g.inv != int64(inv.ID()) || g.hid != "9f2c" || g.function != "emit_host_span" || g.file != "", "span %d identity: %q", i, g.line)
		assert.False(t, g.tid != goid.Get() || g.dur < 0, "span %d: tid %d dur %d", i, g.tid, g.dur)
	}
	// Children lie within their parents on the monotonic clock.
	args, bind, run := got[0], got[1], got[3]
	assert.False(t, args.dur < int64(time.Millisecond) || args.ts < bind.ts || args.ts+args.dur > bind.ts+bind.dur || bind.ts+bind.dur > run.ts+run.dur, "containment broken: %+v %+v %+v", args, bind, run)
}

func TestInvocationsCount(t *testing.T) {
	ctx1, a := NewInvocation(context.Background(), 1)
	_, b := NewInvocation(ctx1, 1)
	assert.False(t, b.ID() != a.ID()+1 || a.ID() == 0, "ids %d, %d", a.ID(), b.ID())
}

func TestOutsideInvocation(t *testing.T) {
	logger, buf, _ := newLogger(t, levels.Timing)
	ctx := WithLogger(context.Background(), logger)
	name, err := ExtName("pypto", "decode_layer")
	require.NoError(t, err)
	_, sp := Start(ctx, name)
	sp.End()
	got := spans(t, buf.String())
	assert.False(t, len(got) != 1 || got[0].inv != 0 || got[0].hid != "0" || got[0].depth != 0 || got[0].name != "ext.pypto.decode_layer", "got %q", buf.String())
}

func TestSpanAcrossGoroutines(t *testing.T) {
	logger, buf, _ := newLogger(t, levels.Timing)
	ctx, inv := NewInvocation(WithLogger(context.Background(), logger), 0xabc)
	ctx, root := Start(ctx, "req")
	starter := goid.Get()
	done := make(chan struct{})
	go func() {
		defer close(done)
		_, child := Start(ctx, "req.work") // identity from the context
		child.End()
		root.End() // ended elsewhere: keeps its starting goroutine
	}()
	<-done
	got := spans(t, buf.String())
	require.EqualValues(t, 2, len(got), "%q", buf.String())
	assert.False(t, got[0].depth != 1 || got[0].inv != int64(inv.ID()) || got[0].tid == starter, "child %q", got[0].line)
	assert.False(t, got[1].tid != starter || got[1].depth != 0, "root %q", got[1].line)
}

func TestConcurrentSpans(t *testing.T) {
	logger, buf, _ := newLogger(t, levels.Timing)
	base := WithLogger(context.Background(), logger)
	const workers, each = 16, 50
	ids := make([]uint64, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			ctx, inv := NewInvocation(base, uint64(w))
			ids[w] = inv.ID()
			for i := range each {
				c, sp := Start(ctx, "work", slog.Int("i", i))
				_, inner := Start(c, "work.inner")
				inner.End()
				sp.End()
			}
		})
	}
	wg.Wait()
	got := spans(t, buf.String())
	require.EqualValues(t, workers*each*2, len(got), "%d spans, want %d", len(got), workers*each*2)
	byInv := map[int64]int{}
	for _, s := range got {
		byInv[s.inv]++
		w := -1
		for i, id := range ids {
			if int64(id) == s.inv {
				w = i
			}
		}
		require.False(t, w < 0 || s.hid != strconv.FormatUint(uint64(w), 16), "span %q has an identity from no worker", s.line)
	}
	for _, n := range byInv {
		assert.EqualValues(t, each*2, n, "an invocation has %d spans, want %d", n, each*2)
	}
}

func TestDisabledWritesNothing(t *testing.T) {
	logger, buf, st := newLogger(t, levels.Warn)
	ctx := WithLogger(context.Background(), logger)
	assert.False(t, Enabled(ctx), "Enabled at WARN")
	c, sp := Start(ctx, "x")
	assert.False(t, sp != nil || c != ctx, "disabled Start returned a span or a new context")
	sp.End()
	assert.EqualValues(t, "", buf.String(), "wrote %q", buf.String())
	// Enabled at start, disabled by the time it ends: nothing written.
	st.SetLevel(levels.Timing)
	_, sp = Start(ctx, "y")
	st.SetLevel(levels.Error)
	sp.End()
	assert.NotContains(t, buf.String(), "[STRACE]", "span written after TIMING was turned off: %q", buf.String())
}

func TestEndTwice(t *testing.T) {
	logger, buf, _ := newLogger(t, levels.Timing)
	_, sp := Start(WithLogger(context.Background(), logger), "once")
	sp.End()
	sp.End()
	assert.EqualValues(t, 1, len(spans(t, buf.String())))
}

func TestHostileNamesAndAttrs(t *testing.T) {
	logger, buf, _ := newLogger(t, levels.Timing)
	ctx := WithLogger(context.Background(), logger)
	for _, name := range []string{"", "bad name\n[STRACE]=x", strings.Repeat("n", 200), "\xff\xfe"} {
		_, sp := Start(ctx, name, slog.String("k", "[HOSTLOG_DROPS] v=1\nx"), slog.String(strings.Repeat("k", 300), "v"))
		sp.End()
	}
	got := spans(t, buf.String())
	require.EqualValues(t, 4, len(got), "%d records from hostile input: %q", len(got), buf.String())
	assert.False(t, got[0].name != "unnamed" || got[1].name != "bad%20name%0A%5BSTRACE%5D%3Dx" || !strings.HasSuffix(got[2].name, "~") || got[3].name != "%FF%FE", "names %q %q %q %q", got[0].name, got[1].name, got[2].name, got[3].name)
	for _, s := range got {
		if len(s.attrs) > 192 || strings.Count(s.line, "[") != 4 { // [mono_ns=][T0x][TIMING][STRACE]
			t.Errorf("unsafe record %q", s.line)
		}
	}
}

func TestUserCannotForgeTrustedRecord(t *testing.T) {
	logger, buf, _ := newLogger(t, levels.Timing)
	ctx, sp := Start(WithLogger(context.Background(), logger), "outer")
	// A user record logged with the span's context stays user text.
	logger.InfoContext(ctx, "[STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=x ts=1 dur=1 ")
	logger.ErrorContext(ctx, "[STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=x ts=1 dur=1 ")
	sp.End()
	out := buf.String()
	assert.EqualValues(t, 1, strings.Count(out, "[STRACE]"))
}

func TestEmitTimed(t *testing.T) {
	logger, buf, _ := newLogger(t, levels.Timing)
	ctx, _ := NewInvocation(WithLogger(context.Background(), logger), 5)
	ctx, sp := Start(ctx, "chip.run.runner_run")
	Emit(ctx, "chip.run.runner_run.device_wall", 1234, 5*time.Microsecond, slog.String("clk", "dev"))
	sp.End()
	got := spans(t, buf.String())
	assert.False(t, len(got) != 2 || got[0].ts != 1234 || got[0].dur != 5000 || got[0].depth != 1 || got[0].attrs != "clk=dev", "%q", buf.String())
}

func TestExtName(t *testing.T) {
	for _, tt := range []struct {
		producer, span, want string
		ok                   bool
	}{
		{"pypto", "decode_layer", "ext.pypto.decode_layer", true},
		{"my-tool", "a.b", "ext.my-tool.a.b", true},
		{"", "x", "", false},
		{"a.b", "x", "", false},
		{"a b", "x", "", false},
		{"a=b", "x", "", false},
		{"p", "", "", false},
	} {
		got, err := ExtName(tt.producer, tt.span)
		assert.False(t, (err == nil) != tt.ok || got != tt.want, "ExtName(%q, %q) = %q, %v", tt.producer, tt.span, got, err)
	}
}

func TestOpDetail(t *testing.T) {
	for _, tt := range []struct {
		detail, target, task, want string
	}{
		{"", "gpu", "0", "target=gpu:0"},
		{"some detail", "accelerator", "", "some detail;target=accelerator"},
		{"", "", "", ""},
		{"only detail", "", "", "only detail"},
		{"d", "cpu", "3", "d;target=cpu:3"},
		{"", "", "7", ""},
		{"x [OP] y\n", "t", "", "x %5BOP%5D y%0A;target=t"},
	} {
		o := envelope.Op{Name: "n", Detail: tt.detail, Target: tt.target, Task: tt.task}
		var l envelope.Line
		l.Op(&o)
		assert.EqualValues(t, "[OP] LAUNCH n [id=0] "+tt.want, string(l.Content()))
	}
}

func TestOpLines(t *testing.T) {
	logger, buf, _ := newLogger(t, levels.Trace) // MAX's trace level: DEBUG with op lines
	ctx := WithLogger(context.Background(), logger)
	_, op := StartOp(ctx, "matmul", &OpOptions{Target: "gpu", Task: "0"})
	op.End()
	_, op2 := StartOp(ctx, "copy", nil)
	op2.End()
	_, op3 := StartOp(ctx, "fused", &OpOptions{Detail: "some detail", Target: "accelerator", Span: true})
	op3.End(slog.Int("bytes", 9))
	lines := strings.Split(strings.TrimSuffix(buf.String(), "\n"), "\n")
	var ops []string
	for _, l := range lines {
		if i := strings.Index(l, "[OP] "); i >= 0 {
			assert.Contains(t, l, "][DEBUG] spanattr.TestOpLines: [span_test.go:", "op line without the caller: %q", l)
			ops = append(ops, l[i:])
		}
	}
	id := op.ID()
	want := []string{
		fmt.Sprintf("[OP] LAUNCH matmul [id=%d] target=gpu:0", id),
		fmt.Sprintf("[OP] COMPLETE matmul [id=%d] target=gpu:0", id),
		fmt.Sprintf("[OP] LAUNCH copy [id=%d] ", id+1),
		fmt.Sprintf("[OP] COMPLETE copy [id=%d] ", id+1),
		fmt.Sprintf("[OP] LAUNCH fused [id=%d] some detail;target=accelerator", id+2),
		fmt.Sprintf("[OP] COMPLETE fused [id=%d] some detail;target=accelerator", id+2),
	}
	assert.EqualValues(t, fmt.Sprintf("%q", want), fmt.Sprintf("%q", ops), "got  %q\nwant %q", ops, want)
	sp := spans(t, buf.String())
	assert.False(t, len(sp) != 1 || sp[0].name != "fused" || sp[0].attrs != "bytes=9", "op span: %q", buf.String())
	// Ids are the counter's value before the increment: the process's first
	// op is 0 and the counter now holds the next id.
	assert.EqualValues(t, id+3, opCounter.Load())
}

// TestOpLinesOffByDefault: as in MAX, op lines are off unless the trace
// level (or the option) asks for them; a THREAD-level op never writes any.
func TestOpLinesOffByDefault(t *testing.T) {
	t.Run("DEBUG without trace", func(t *testing.T) {
		logger, buf, _ := newLogger(t, levels.Debug)
		_, op := StartOp(WithLogger(context.Background(), logger), "x", nil)
		assert.Nil(t, op)
		assert.NotContains(t, buf.String(), "[OP]")
	})
	t.Run("switched on and off live by the trace level", func(t *testing.T) {
		logger, buf, st := newLogger(t, levels.Debug)
		st.SetLevel(levels.Trace)
		ctx := WithLogger(context.Background(), logger)
		_, op := StartOp(ctx, "x", nil)
		op.End()
		assert.Equal(t, 2, strings.Count(buf.String(), "[OP] "))
		st.SetLevel(levels.Debug)
		_, op = StartOp(ctx, "y", nil)
		assert.Nil(t, op, "op lines stay off at DEBUG")
	})
	t.Run("THREAD level writes none, its span still", func(t *testing.T) {
		logger, buf, _ := newLogger(t, levels.Trace)
		_, op := StartOp(WithLogger(context.Background(), logger), "t", &OpOptions{Thread: true, Span: true})
		op.End()
		assert.NotContains(t, buf.String(), "[OP]")
		assert.Len(t, spans(t, buf.String()), 1)
	})
}

func TestOpsSilentAboveDebug(t *testing.T) {
	logger, buf, _ := newLogger(t, levels.Info)
	_, op := StartOp(WithLogger(context.Background(), logger), "x", nil)
	assert.Nil(t, op, "op created with DEBUG off")
	op.End()
	assert.EqualValues(t, "", buf.String(), "wrote %q", buf.String())
}

// TestKeptSpanRecordsStayIntact: a handler that keeps span records keeps
// each one's name, identity and attributes, however many spans follow
// (nothing of a span's record is reused).
func TestKeptSpanRecordsStayIntact(t *testing.T) {
	k := &logtest.Keeper{}
	ctx := WithLogger(context.Background(), slog.New(k))
	for i := range 50 {
		_, sp := Start(ctx, fmt.Sprintf("chip.run.n%d", i), slog.Int("i", i))
		sp.End()
	}
	recs := k.Records()
	require.Len(t, recs, 50)
	for i, r := range recs {
		info, ok := SpanOf(r)
		require.True(t, ok)
		assert.Equal(t, fmt.Sprintf("chip.run.n%d", i), info.Name)
		assert.Equal(t, fmt.Sprintf("chip.run.n%d", i), r.Message)
		var got []slog.Attr
		r.Attrs(func(a slog.Attr) bool { got = append(got, a); return true })
		require.Len(t, got, 2)
		assert.Equal(t, slog.Int("i", i), got[1])
	}
}
