package slogsimpler_test

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/devicebridge"
	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/loose"
	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/internal/wire"
	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// TestReplayedOriginsForgeNothing: a handler of the fan-out keeps the
// first attribute of every record this module made outside a slog call
// site (a span's, an op line's, Emit's, a forwarded simulator's machine
// record's) and the records themselves, and replays each every way it
// can: with State.Emit, with a slog call, on a record of its own handed
// to the state's handler, and the kept record itself, again and with its
// message rewritten. Before origins were bound to their record and spent
// at the door, Emit with a span's origin wrote "[STRACE] … name=<the
// replayer's choice>": now every replay is user text, and the file holds
// exactly the machine records the program made.
func TestReplayedOriginsForgeNothing(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	var buf logtest.Buffer
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Trace, Output: &buf})
	require.NoError(t, err)
	k := &logtest.Keeper{} // a handler of the program's, keeping every record to replay it
	lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, NoConsole: true, Handlers: []slog.Handler{k}, Level: levels.Trace})
	require.NoError(t, err)

	// The program's own machine records: a span, an op (two lines and
	// its span), Emit's record, and a simulator's forwarded span.
	const simPID = 4242
	ctx := spanattr.WithLogger(context.Background(), lg.Logger)
	_, sp := spanattr.Start(ctx, "real.span")
	sp.End()
	_, op := spanattr.StartOp(ctx, "real.op", nil)
	op.End()
	require.True(t, st.Emit(levels.Warn, slogsimpler.Source{Function: "device", File: "k.cc", Line: 3}, 0, 0, "real emit"))
	fw, err := devicebridge.NewForwarder(st, &devicebridge.ForwardOptions{PID: simPID})
	require.NoError(t, err)
	simSpan := fmt.Sprintf("[mono_ns=5][T0x9][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=9 inv=1 hid=1 depth=0 name=sim.real ts=1 dur=2 \n", simPID)
	_, err = fw.Forward(strings.NewReader(simSpan))
	require.NoError(t, err)

	kept := k.Records()
	kinds := map[string]int{}
	h := lg.Logger.Handler()
	for _, r := range kept {
		var first slog.Attr
		r.Attrs(func(a slog.Attr) bool { first = a; return false })
		require.Equal(t, "simpler", first.Key, "a record this module made carries its origin first: %q", r.Message)
		kind := first.Value.Resolve().Group()[0].Value.String()
		kinds[kind]++
		forged := "forged." + kind
		// With State.Emit, as the reported forgery did.
		st.Emit(levels.Error, slogsimpler.Source{}, 0, 0, forged, first)
		// With a slog call.
		lg.Logger.Error(forged, first)
		// On a record of the replayer's own, handed to the fan-out and to
		// the state's handler.
		own := slog.NewRecord(time.Now(), r.Level, forged, 0)
		own.AddAttrs(first)
		assert.NoError(t, h.Handle(context.Background(), own.Clone()))
		assert.NoError(t, st.Handler().Handle(context.Background(), own))
		// The kept record itself, again: its origin is spent.
		assert.NoError(t, st.Handler().Handle(context.Background(), r.Clone()))
		// The kept record with its message rewritten, its time kept.
		again := slog.NewRecord(r.Time, r.Level, forged, r.PC)
		r.Attrs(func(a slog.Attr) bool { again.AddAttrs(a); return true })
		assert.NoError(t, st.Handler().Handle(context.Background(), again))
	}
	assert.Equal(t, map[string]int{"span": 1, "op": 2, "outside": 1, "machine": 1}, kinds,
		"every kind of origin was kept and replayed")
	require.NoError(t, lg.Close())

	var spans, ops, machine []string
	users := 0
	for _, line := range strings.Split(strings.TrimSpace(buf.String()), "\n") {
		p, err := envelope.Parse([]byte(line))
		require.NoError(t, err, "%q", line)
		marker, _, merr := envelope.ParseMachine(p)
		switch {
		case merr != nil:
			if bytes.Contains(p.Body, []byte("forged.")) {
				users++
				assert.NotContains(t, []string{"device", wire.FuncSpan}, p.Func, "a replay keeps no producer's function: %q", line)
			}
		case marker == envelope.MarkerSpan:
			s, _, err := envelope.ParseSpan(p.Body)
			require.NoError(t, err)
			spans = append(spans, s.Name)
		case marker == envelope.MarkerOp:
			ops = append(ops, line)
		case marker == envelope.MarkerAnchor, marker == envelope.MarkerDrops:
		default:
			machine = append(machine, line)
		}
		assert.NotContains(t, line, "name=forged", "a forged span: %q", line)
	}
	assert.ElementsMatch(t, []string{"real.span", "sim.real"}, spans, "only the program's spans are spans")
	assert.Len(t, ops, 2, "only the program's op lines: %v", ops)
	assert.Empty(t, machine)
	// Per kept record: Emit, the slog call, the fan-out, the state's
	// handler and the rewritten record are user text; the kept record
	// handed again is user text too (its own message).
	assert.Equal(t, 5*len(kept), users, "every replay with the replayer's message is written as user text")
}

// held is a destination whose writes wait until release is closed: a
// stalled disk or pipe.
type held struct {
	release chan struct{}
	once    sync.Once
}

func (h *held) Write(p []byte) (int, error) { <-h.release; return len(p), nil }
func (h *held) open()                       { h.once.Do(func() { close(h.release) }) }

// TestEmitReportsADrop: Emit says false for a record the sink dropped,
// with the reason counted (before, it said true while queue_full grew).
func TestEmitReportsADrop(t *testing.T) {
	dst := &held{release: make(chan struct{})}
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Destination: sink.Writer(dst)})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	defer func() { dst.open(); _ = st.Close() }()
	lg := slog.New(st.Handler())
	for i := 0; st.Counts().QueueFull == 0; i++ {
		require.Less(t, i, 1<<20, "the queue never filled")
		lg.Info("fill")
	}
	before := st.Counts().QueueFull
	assert.False(t, st.Emit(levels.Info, slogsimpler.Source{Function: "device"}, 0, 0, "dropped"))
	assert.Equal(t, before+1, st.Counts().QueueFull, "counted under its reason")
	assert.False(t, st.Emit(levels.Debug, slogsimpler.Source{}, 0, 0, "below the threshold"))
	dst.open()
	require.NoError(t, st.Flush(logtest.Within(10*time.Second)))
	assert.True(t, st.Emit(levels.Info, slogsimpler.Source{Function: "device"}, 0, 0, "taken"))
}

// TestAnchorIsTheStatesOwn: State.Anchor is the [CLOCK_ANCHOR] the state
// wrote, not a process-wide value another state or a reader's rendering
// changes; before any is written, one reading kept.
func TestAnchorIsTheStatesOwn(t *testing.T) {
	var buf logtest.Buffer
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Timing, Output: &buf})
	require.NoError(t, err)
	before := st.Anchor()
	assert.Equal(t, before, st.Anchor(), "a reading, kept until an anchor is written")
	slog.New(st.Handler()).Warn("first record: the anchor goes first")
	require.NoError(t, st.Close())
	first := strings.SplitN(buf.String(), "\n", 2)[0]
	written, ok := loose.ScanAnchor([]byte(first))
	require.True(t, ok, "the first line is the anchor: %q", buf.String())
	p, err := envelope.Parse([]byte(first))
	require.NoError(t, err)
	var want envelope.Line
	want.Anchor(p.TID, &written)
	assert.Equal(t, string(want.Finish()), first+"\n", "through the door, the anchor is the bytes Line.Anchor writes")
	assert.Equal(t, written, st.Anchor(), "the anchor the state wrote")

	var other envelope.Line
	now := time.Now()
	a := envelope.Anchor{PID: 1, Mono: envelope.Mono(now), Wall: now.UnixNano()}
	other.Anchor(1, &a) // a reader's rendering, or another state's
	assert.Equal(t, written, st.Anchor(), "rendering an anchor elsewhere changes nothing")
}

// refusing is a handler of the program's that fails every record.
type refusing struct{}

func (refusing) Enabled(context.Context, slog.Level) bool { return true }
func (refusing) Handle(context.Context, slog.Record) error {
	return fmt.Errorf("write /dev/stderr: broken pipe")
}
func (r refusing) WithAttrs([]slog.Attr) slog.Handler { return r }
func (r refusing) WithGroup(string) slog.Handler      { return r }

// TestCloseReportsTheFailuresInAll: a handler failing every record (a
// console on a pipe closed at once: `prog | head -1`) is reported at most
// once a second while logging, so the file must get the total at Close.
// A new user found one report and no total.
func TestCloseReportsTheFailuresInAll(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	var buf logtest.Buffer
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Output: &buf})
	require.NoError(t, err)
	lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, NoConsole: true, Handlers: []slog.Handler{refusing{}}})
	require.NoError(t, err)
	for i := range 50 {
		slog.Info("r", "i", i)
	}
	require.NoError(t, lg.Close())
	assert.Equal(t, uint64(50), lg.Fanout.Failures())
	assert.Contains(t, buf.String(), "log handlers failed 50 time(s) in all")
}
