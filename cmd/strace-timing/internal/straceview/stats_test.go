package straceview

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"math/rand/v2"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/internal/testkit/racedetect"
	"simpler.dev/log/strace"
)

func TestStatistics(t *testing.T) {
	t.Run("every span counts, in its process and overall", func(t *testing.T) {
		for _, log := range []string{"mixed.log", "swimlane.log", "current_swimlane.log", "overlap_ok.log"} {
			p := readLog(t, "../../../../strace/testdata/"+log)
			st := Statistics([]strace.HostLog{{Parser: p}})
			assert.Equal(t, len(p.Spans), st.Overall.Spans, log)
			assert.Equal(t, len(p.Spans), countAll(st.Overall.Names), log)
			total := 0
			for _, proc := range st.Processes {
				assert.Equal(t, proc.Spans, countAll(proc.Names), "%s pid %d", log, proc.PID)
				total += proc.Spans
			}
			assert.Equal(t, len(p.Spans), total, log)
		}
	})
	t.Run("percentiles are exact nearest-rank ones", func(t *testing.T) {
		r := rand.New(rand.NewPCG(1, 2))
		for _, n := range []int{1, 2, 3, 10, 99, 100, 101, 1000, 4321} {
			spans := make([]strace.Span, n)
			durs := make([]int64, n)
			for i := range spans {
				durs[i] = r.Int64N(1_000_000)
				spans[i] = strace.Span{PID: 1, Name: "op", Dur: durs[i]}
			}
			slices.Sort(durs)
			got := Statistics(one(spans)).Overall.Names[0]
			for _, pc := range []struct {
				p   int
				got int64
			}{{50, got.P50NS}, {90, got.P90NS}, {99, got.P99NS}} {
				// The smallest duration with at least p % at or below it.
				var want int64
				for _, d := range durs {
					atOrBelow := 0
					for _, e := range durs {
						if e <= d {
							atOrBelow++
						}
					}
					if atOrBelow*100 >= pc.p*n {
						want = d
						break
					}
				}
				assert.Equal(t, want, pc.got, "p%d of %d", pc.p, n)
			}
			assert.Equal(t, durs[n-1], got.MaxNS)
			var sum int64
			for _, d := range durs {
				sum += d
			}
			assert.Equal(t, sum, got.TotalNS)
			assert.InDelta(t, float64(sum)/float64(n), got.MeanNS, 1e-6)
		}
	})
	t.Run("a total past int64 saturates and says so", func(t *testing.T) {
		spans := []strace.Span{{PID: 1, Name: "x", Dur: 1<<63 - 10}, {PID: 1, Name: "x", Dur: 100}}
		got := Statistics(one(spans)).Overall.Names[0]
		assert.True(t, got.Overflow)
		assert.Equal(t, int64(1<<63-1), got.TotalNS)
		var b bytes.Buffer
		WriteStatsText(&b, Statistics(one(spans)))
		assert.Contains(t, b.String(), ">9223372036854775.8")
	})
	t.Run("hosts name their processes, one pid on two hosts is two processes", func(t *testing.T) {
		a := &strace.Parser{Results: strace.Results{Spans: []strace.Span{{PID: 7, Name: "x", Dur: 1000}}}}
		b := &strace.Parser{Results: strace.Results{Spans: []strace.Span{{PID: 7, Name: "x", Dur: 3000}}}}
		st := Statistics([]strace.HostLog{{Label: "a", Parser: a}, {Label: "b", Parser: b}})
		require.Len(t, st.Processes, 2)
		assert.Equal(t, "a", st.Processes[0].Host)
		assert.Equal(t, "b", st.Processes[1].Host)
		assert.Equal(t, 2, st.Overall.Names[0].Count)
		assert.Equal(t, int64(4000), st.Overall.Names[0].TotalNS)
	})
}

func one(spans []strace.Span) []strace.HostLog {
	return []strace.HostLog{{Parser: &strace.Parser{Results: strace.Results{Spans: spans}}}}
}

func countAll(names []NameStats) int {
	n := 0
	for _, s := range names {
		n += s.Count
	}
	return n
}

func TestWriteStats(t *testing.T) {
	text := logtest.SpanRecord(1, 1, 1, "chip.run", 0, 3000, "", 0) +
		logtest.SpanRecord(1, 1, 2, "chip.run", 0, 5000, "", 0) +
		logtest.SpanRecord(1, 1, 2, "chip.run.runner_run.device_wall", 0, 1500, "clk=dev", 0) +
		logtest.SpanRecord(1, 2, 0, "ext.go.%1B[2Jclear", 0, 200, "", 0)
	var p strace.Parser
	require.NoError(t, p.Read(strings.NewReader(text)))
	st := Statistics([]strace.HostLog{{Parser: &p}})
	t.Run("text", func(t *testing.T) {
		var b bytes.Buffer
		WriteStatsText(&b, st)
		assert.Equal(t, `pid 1 — 4 span(s)
  span                                      count    total (us)        mean         p50         p90         p99         max
  chip.run                                      2           8.0         4.0         3.0         5.0         5.0         5.0
  chip.run.runner_run.device_wall [dev]         1           1.5         1.5         1.5         1.5         1.5         1.5
  ext.go.\x1b[2Jclear                           1           0.2         0.2         0.2         0.2         0.2         0.2
`, b.String(), "a control character in a name is shown, not obeyed")
	})
	t.Run("json", func(t *testing.T) {
		var b bytes.Buffer
		require.NoError(t, WriteStatsJSON(&b, st))
		var back SpanStats
		require.NoError(t, json.Unmarshal(b.Bytes(), &back))
		assert.Equal(t, st, back)
		assert.Contains(t, b.String(), `"name": "ext.go.\u001b[2Jclear"`)
	})
	t.Run("nothing", func(t *testing.T) {
		var b bytes.Buffer
		WriteStatsText(&b, Statistics(nil))
		assert.Equal(t, "No [STRACE] markers found.\n", b.String())
		b.Reset()
		require.NoError(t, WriteStatsJSON(&b, Statistics(nil)))
		assert.JSONEq(t, `{"processes": [], "overall": {"pid": 0, "spans": 0, "names": []}}`, b.String())
	})
}

// FuzzMeanIsNearest: the mean is the float64 nearest the exact quotient
// of the exact sum, on the fast path (a sum below 2^53, one division) as
// on the exact one (big.Rat), whichever the durations take.
func FuzzMeanIsNearest(f *testing.F) {
	f.Add(int64(1), int64(2), int64(3))
	f.Add(int64(1)<<52, int64(1)<<52, int64(1))
	f.Add(int64(math.MaxInt64), int64(-5), int64(7))
	f.Fuzz(func(t *testing.T, a, b, c int64) {
		d := []int64{a, b, c}
		sum := new(big.Int)
		for _, v := range d {
			sum.Add(sum, big.NewInt(v))
		}
		want, _ := new(big.Rat).SetFrac(sum, big.NewInt(int64(len(d)))).Float64()
		got := nameStats("n", slices.Clone(d), false)
		assert.Equal(t, want, got.MeanNS, "%v", d)
	})
}

// TestStatsHeldAllocs holds the report's memory to what docs/READING.md
// promises for a log of many names or processes (within twice the log,
// whose lines are well over 100 bytes): the heap a row holds once its
// span is added, and once the report is made, the builder still alive.
// A map of rows held 136 and 176 bytes a row of a name.
func TestStatsHeldAllocs(t *testing.T) {
	racedetect.SkipAllocs(t)
	const n = 1 << 17
	names := make([]string, n)
	runs := make([]strace.Run, n)
	for i := range names {
		names[i] = fmt.Sprintf("op%07d", i)
		runs[i] = strace.Run{PID: int64(i), N: 1, Of: 1}
	}
	for _, tc := range []struct {
		name        string
		span        func(i int) strace.Span
		added, made uint64 // bytes a row at most
	}{
		{"a name each, one process", func(i int) strace.Span { return strace.Span{PID: 7, Name: names[i], Dur: int64(i)} }, 112, 112},
		// A process's report is a table of its own (its ProcessStats, 88
		// bytes, beside its row).
		{"a process each, one name", func(i int) strace.Span {
			return strace.Span{PID: int64(i), Run: &runs[i], Name: "svc.handler", Dur: int64(i)}
		}, 112, 192},
	} {
		t.Run(tc.name, func(t *testing.T) {
			base := heldHeap()
			b := NewStatsBuilder()
			for i := range n {
				s := tc.span(i)
				b.Add(0, &s)
			}
			added := heldHeap()
			st := b.Stats()
			made := heldHeap()
			runtime.KeepAlive(b)
			require.Equal(t, n, st.Overall.Spans)
			t.Logf("bytes a row: %d with the spans added, %d with the report made", (added-base)/n, (made-base)/n)
			assert.LessOrEqual(t, (added-base)/n, tc.added, "bytes a row, the spans added")
			assert.LessOrEqual(t, (made-base)/n, tc.made, "bytes a row, the report made")
		})
	}
}

// heldHeap is the heap's live bytes after a collection: two, so that
// what an earlier test left to a finalizer (an os.File's) is gone too
// (in CI once, 'a name each' measured past 112 bytes a row where it
// measures 80 every time here).
func heldHeap() uint64 {
	runtime.GC()
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapAlloc
}
