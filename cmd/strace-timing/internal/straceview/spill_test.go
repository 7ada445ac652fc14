package straceview

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/strace"
)

// TestSpill: the invocations a Spill gives back are Group's, each with
// its spans as they were added, whichever way they came: invocations
// interleaved (a service's goroutines), a record longer than the window
// spans are read back in, a span placed only at the end (NearestAnchor),
// device spans never, two runs of one pid as two lanes, spans outside
// any invocation counted; through Add and through AddNumbered.
func TestSpill(t *testing.T) {
	r1 := &strace.Run{PID: 7, N: 1, Of: 2}
	r2 := &strace.Run{PID: 7, N: 2, Of: 2}
	anchor := envelope.Anchor{PID: 7, Mono: 1000, Wall: 1_700_000_000_000_000_000}
	var spans []strace.Span
	for i := range 3000 {
		s := strace.Span{PID: 7, TID: int64(i%4 + 1), Inv: uint64(i%4 + 1), HID: "ab12", Depth: i % 3,
			Name: fmt.Sprintf("op.%d", i%7), TS: int64(i * 10), Dur: int64(i), Attrs: fmt.Sprintf("k=%d", i), Run: r1}
		switch {
		case i == 500:
			s.Attrs = strings.Repeat("x", 600<<10) // past the 256 KiB window
		case i%9 == 0:
			s.Attrs += " clk=dev"
		case i%11 == 0:
			s.Name = "node.graph" // in no invocation
		case i%13 == 0:
			s.Run = r2
		}
		if i%5 != 0 && !s.IsDevice() {
			s.Place(anchor) // the others are placed at the end
		}
		spans = append(spans, s)
	}
	nearest := func(r *strace.Run, mono int64) (envelope.Anchor, bool) { return anchor, r == r1 }
	var want []strace.Span
	for _, s := range spans {
		if s.Run == r1 && !s.IsDevice() {
			s.Place(anchor)
		}
		want = append(want, s)
	}
	SplitRuns(want)
	wantInvs := Group(want, InInvocation)

	for _, numbered := range []bool{false, true} {
		t.Run(fmt.Sprintf("numbered=%v", numbered), func(t *testing.T) {
			sp, err := NewSpill(t.TempDir())
			require.NoError(t, err)
			defer func() { assert.NoError(t, sp.Close()) }()
			tb := NewTablesBuilder()
			for i := range spans {
				if numbered {
					tb.Add(&spans[i])
					sp.AddNumbered(&spans[i], tb.Last())
				} else {
					sp.Add(&spans[i], InInvocation)
				}
			}
			invs, err := sp.Invocations(nearest)
			require.NoError(t, err)
			require.Len(t, invs, len(wantInvs))
			others := 0
			for i := range want {
				if !InInvocation(&want[i]) {
					others++
				}
			}
			assert.Equal(t, others, sp.Others())
			assert.Equal(t, len(want)-others, sp.Spans())
			for k, iv := range invs {
				w := wantInvs[k]
				require.Equal(t, [4]any{w.PID, w.Run, w.Inv, w.HID}, [4]any{iv.PID, iv.Run, iv.Inv, iv.HID})
				got, err := iv.spans()
				require.NoError(t, err)
				require.Len(t, got, len(w.Spans))
				for j := range got {
					assert.Equal(t, *w.Spans[j], *got[j], "invocation %d, span %d", k, j)
				}
			}
		})
	}
}

// FuzzSpill: any span comes back from a Spill's file as it went in.
func FuzzSpill(f *testing.F) {
	f.Add(int64(7), int64(1), uint64(1), "ab", 0, "chip.run", int64(5), int64(3), "k=v", int64(-5))
	f.Add(int64(-1), int64(1<<62), uint64(1<<63), "", -3, "", int64(-1<<63), int64(1<<63-1), "clk=dev", int64(0))
	f.Fuzz(func(t *testing.T, pid, tid int64, inv uint64, hid string, depth int, name string, ts, dur int64, attrs string, off int64) {
		sp, err := NewSpill(t.TempDir())
		require.NoError(t, err)
		defer sp.Close()
		r := &strace.Run{PID: pid, N: 1, Of: 1}
		in := strace.Span{PID: pid, TID: tid, Inv: inv, HID: hid, Depth: depth, Name: name, TS: ts, Dur: dur, Attrs: attrs, Run: r}
		if off != 0 {
			in.Place(envelope.Anchor{Wall: off})
		}
		sp.Add(&in, nil)
		sp.Add(&in, nil)
		invs, err := sp.Invocations(nil)
		require.NoError(t, err)
		require.Len(t, invs, 1)
		got, err := invs[0].spans()
		require.NoError(t, err)
		require.Len(t, got, 2)
		assert.Equal(t, in, *got[0])
		assert.Equal(t, in, *got[1])
	})
}
