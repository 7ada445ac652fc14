package slogsimpler_test

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/wire"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// TestCaptureRecordsTyped: Records gives the program's records typed
// (ordinary ones, spans with their fields, op lines) and leaves the
// library's own out (read with them, those have their fields as
// attributes).
func TestCaptureRecordsTyped(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	var c slogsimpler.Capture
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Output: &c, Level: levels.Trace})
	require.NoError(t, err)
	lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, Synchronous: true})
	require.NoError(t, err)

	ctx, inv := spanattr.NewInvocation(context.Background(), 0xabc)
	slog.Info("hello", "name", "ada", "n", 7, "ok", true, "took", 1500*time.Millisecond)
	spanattr.Emit(ctx, "chip run", envelope.Mono(time.Time{}), 5*time.Millisecond, slog.Int("rank", 3), slog.String("who", "a b"))
	_, op := spanattr.StartOp(ctx, "matmul", &spanattr.OpOptions{Target: "gpu", Task: "0"})
	op.End()
	inv.End()
	// The library's own: a drop report and a report of function
	// slogsimpler, as the sink and a failing handler write them.
	var l envelope.Line
	l.Drops(envelope.Mono(time.Time{}), 1, &envelope.Drops{PID: 42, New: 2, Total: 2, QueueFull: 2})
	_, _ = c.Write(l.Finish())
	var r envelope.Line
	r.Start(&envelope.Header{Mono: envelope.Mono(time.Time{}), TID: 1, Level: levels.Error, Func: "slogsimpler"})
	r.Message("a log handler failed")
	_, _ = c.Write(r.Finish())
	require.NoError(t, lg.Close())

	recs := c.Records()
	require.Len(t, recs, 4, "the record, the span, two op lines: %v", recs)

	hello := recs[0]
	assert.Equal(t, levels.Info, hello.Level)
	assert.Equal(t, "slogsimpler_test.TestCaptureRecordsTyped", hello.Func)
	assert.Equal(t, "hello", hello.Message)
	assert.Equal(t, []string{"name=ada", "n=7", "ok=true", "took=1.5s"}, texts(hello.Attrs))
	assert.Equal(t, []slog.Kind{slog.KindString, slog.KindInt64, slog.KindBool, slog.KindDuration}, kinds(hello.Attrs))
	assert.Nil(t, hello.Span)
	assert.Nil(t, hello.Op)

	var sp, launch, complete slogsimpler.CapturedRecord
	for _, r := range recs[1:] {
		switch {
		case r.Span != nil:
			sp = r
		case r.Op != nil && !r.Op.Complete:
			launch = r
		case r.Op != nil:
			complete = r
		}
	}
	require.NotNil(t, sp.Span, "the span")
	assert.Equal(t, levels.Timing, sp.Level)
	assert.Equal(t, "chip run", sp.Message, "the span's name, decoded")
	assert.Equal(t, "chip run", sp.Span.Name)
	assert.Equal(t, int64(5*time.Millisecond), sp.Span.Dur)
	assert.Equal(t, 0, sp.Span.Depth)
	assert.Equal(t, uint64(0xabc), sp.Span.HID)
	assert.NotZero(t, sp.Span.Inv)
	assert.Equal(t, []string{"rank=3", "who=a b"}, texts(sp.Attrs), "decoded")
	assert.Equal(t, []slog.Kind{slog.KindInt64, slog.KindString}, kinds(sp.Attrs), "typed")

	require.NotNil(t, launch.Op, "the LAUNCH line")
	require.NotNil(t, complete.Op, "the COMPLETE line")
	assert.Equal(t, levels.Debug, launch.Level)
	assert.Equal(t, "matmul", launch.Message)
	assert.Equal(t, "matmul", complete.Op.Name)
	assert.Equal(t, launch.Op.ID, complete.Op.ID)

	all := slogsimpler.CapturedAll(&c)
	require.Len(t, all, len(recs)+3, "and the anchor, the drop report, the report")
	assert.Equal(t, recs, withoutOwn(all), "the library's own records, and Records")
	anchor := all[0]
	assert.Equal(t, wire.FuncAnchor, anchor.Func)
	assert.Equal(t, envelope.MarkerAnchor, anchor.Message)
	assert.Contains(t, texts(anchor.Attrs), "v=1")
	assert.Contains(t, keys(anchor.Attrs), "wall_ns")
	drops := all[len(all)-2]
	assert.Equal(t, wire.FuncDrops, drops.Func)
	assert.Equal(t, envelope.MarkerDrops, drops.Message)
	assert.Contains(t, texts(drops.Attrs), "queue_full=2")
	assert.Contains(t, texts(drops.Attrs), "pid=42")
	report := all[len(all)-1]
	assert.Equal(t, "slogsimpler", report.Func)
	assert.Equal(t, "a log handler failed", report.Message)
}

// withoutOwn drops the library's own records.
func withoutOwn(all []slogsimpler.CapturedRecord) []slogsimpler.CapturedRecord {
	var out []slogsimpler.CapturedRecord
	for _, r := range all {
		switch r.Func {
		case wire.FuncAnchor, wire.FuncDrops, "slogsimpler":
			continue
		}
		out = append(out, r)
	}
	return out
}

func keys(attrs []slog.Attr) []string {
	var out []string
	for _, a := range attrs {
		out = append(out, a.Key)
	}
	return out
}

// texts are the attributes as key=value (slog.Attr.String): compared as
// text, since equal slog.Values need not be reflect.DeepEqual.
func texts(attrs []slog.Attr) []string {
	var out []string
	for _, a := range attrs {
		out = append(out, a.String())
	}
	return out
}

func kinds(attrs []slog.Attr) []slog.Kind {
	var out []slog.Kind
	for _, a := range attrs {
		out = append(out, a.Value.Kind())
	}
	return out
}
