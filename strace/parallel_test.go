package strace

import (
	"bytes"
	"errors"
	"io"
	"os"
	"reflect"
	"slices"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestReadParallelMatchesRead(t *testing.T) {
	fixture, _ := os.ReadFile("testdata/mixed.log")
	many := bytes.Repeat(fixture, 3000) // several blocks, lines across block edges
	long := append(append(bytes.Repeat([]byte("x"), 3*blockSize), " [STRACE] v=1 pid=100 tid=1 inv=1 hid=0 depth=0 name=deep ts=1 dur=1 \n"...), fixture...)
	for name, in := range map[string][]byte{"fixture": fixture, "long line": append(fixture, long...), "many": many, "bench": benchLog(30000), "no final newline": []byte("[STRACE] v=1 pid=1 tid=1 inv=1 hid=0 depth=0 name=a ts=1 dur=1 x=1")} {
		t.Run(name, func(t *testing.T) {
			var seq, par Parser
			require.NoError(t, seq.readFileWith("", bytes.NewReader(in), 1))
			require.NoError(t, par.readFileWith("", iotest.HalfReader(bytes.NewReader(in)), 2))
			seq.intern, par.intern = interner{}, interner{}
			assert.True(t, reflect.DeepEqual(seq, par), "results differ: %d/%d spans, %d/%d heads, %d/%d lines", len(seq.Spans), len(par.Spans), seq.Heads, par.Heads, seq.Lines, par.Lines)
		})
	}
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
