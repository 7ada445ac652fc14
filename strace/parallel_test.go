package strace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"runtime"
	"slices"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/racedetect"
)

func TestReadParallelMatchesRead(t *testing.T) {
	fixture, _ := os.ReadFile("testdata/mixed.log")
	many := bytes.Repeat(fixture, 3000) // several blocks, lines across block edges
	long := append(append(bytes.Repeat([]byte("x"), 3*blockSize), " [STRACE] v=1 pid=100 tid=1 inv=1 hid=0 depth=0 name=deep ts=1 dur=1 \n"...), fixture...)
	for name, in := range map[string][]byte{"fixture": fixture, "long line": append(fixture, long...), "many": many, "bench": benchLog(30000), "no final newline": []byte("[STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=a ts=1 dur=1 x=1")} {
		// The blocks' buffers are sized from what the reader says it
		// holds: nothing (a pipe), the truth, or far less than it holds
		// (a live file, grown since its size was taken).
		var seq Parser
		require.NoError(t, seq.readFileWith("", bytes.NewReader(in), 1))
		seq.intern, seq.attrs = interner{}, arena{}
		for how, r := range map[string]func() io.Reader{
			"size not known": func() io.Reader { return iotest.HalfReader(bytes.NewReader(in)) },
			"size known":     func() io.Reader { return bytes.NewReader(in) },
			"grown past its size": func() io.Reader {
				return lenReader{iotest.HalfReader(bytes.NewReader(in)), min(len(in), 100)}
			},
		} {
			t.Run(name+"/"+how, func(t *testing.T) {
				var par Parser
				require.NoError(t, par.readFileWith("", r(), 2))
				par.intern, par.attrs = interner{}, arena{}
				assert.True(t, reflect.DeepEqual(seq, par), "results differ: %d/%d spans, %d/%d heads, %d/%d lines", len(seq.Spans), len(par.Spans), seq.Heads, par.Heads, seq.Lines, par.Lines)
			})
		}
	}
}

// lenReader says it holds n bytes, whatever it holds.
type lenReader struct {
	io.Reader
	n int
}

func (l lenReader) Len() int { return l.n }

// TestReadSmallInputAllocatesItsSize: reading a file of a few kilobytes
// allocates about that, not a block's buffers of a megabyte each (a
// directory of small logs cleared megabytes per file).
func TestReadSmallInputAllocatesItsSize(t *testing.T) {
	racedetect.SkipAllocs(t)
	in := benchLog(20) // about 2 KiB
	require.Less(t, len(in), 8<<10)
	read := func() {
		var p Parser
		require.NoError(t, p.Read(bytes.NewReader(in)))
		require.Len(t, p.Spans, 10)
	}
	read() // first-use allocations (interning tables) out of the count
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	const n = 20
	for range n {
		read()
	}
	runtime.ReadMemStats(&after)
	perRead := (after.TotalAlloc - before.TotalAlloc) / n
	assert.Less(t, perRead, uint64(128<<10), "a read of %d bytes allocated %d bytes", len(in), perRead)
}

func TestReadParallelError(t *testing.T) {
	var p Parser
	r := io.MultiReader(bytes.NewReader(benchLog(10)), iotest.ErrReader(errors.New("disk gone")))
	err := p.Read(r)
	assert.False(t, err == nil || err.Error() != "disk gone", "err = %v", err)
	assert.EqualValues(t, 5, len(p.Spans), "%d spans before the error, want 5", len(p.Spans))
}

func BenchmarkReadParallel(b *testing.B) {
	const lines = 200000
	log := benchLog(lines)
	b.SetBytes(int64(len(log)))
	for b.Loop() {
		var p Parser
		p.Spans = slices.Grow(p.Spans, lines/2)
		if err := p.Read(bytes.NewReader(log)); err != nil || len(p.Spans) != lines/2 {
			b.Fatal(err, len(p.Spans))
		}
	}
	b.ReportMetric(float64(lines)*float64(b.N)/b.Elapsed().Seconds(), "lines/s")
}
