package main

import (
	"bytes"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTable(t *testing.T) {
	in := `goos: linux
cpu: Test CPU @ 1GHz
BenchmarkStatic/nop-2   	1000	200.0 ns/op	0 B/op	0 allocs/op
BenchmarkStatic/nop-2   	1000	210.0 ns/op	0 B/op	0 allocs/op
BenchmarkStatic/nop-2   	1000	190.0 ns/op	0 B/op	0 allocs/op
BenchmarkStatic/slogsimpler-2	1000	300.0 ns/op	0 B/op	0 allocs/op
BenchmarkStatic/slogsimpler-2	1000	315.0 ns/op	0 B/op	0 allocs/op
BenchmarkStatic/slogsimpler-2	1000	285.0 ns/op	0 B/op	0 allocs/op
BenchmarkStatic/zerolog-2	1000	400.0 ns/op	0 B/op	0 allocs/op
BenchmarkStatic/zerolog-2	1000	410.0 ns/op	0 B/op	0 allocs/op
BenchmarkStatic/zerolog-2	1000	390.0 ns/op	0 B/op	0 allocs/op
BenchmarkStatic/text-2	1000	1200.0 ns/op	360 B/op	5 allocs/op
BenchmarkStatic/discard-2	1000	4.0 ns/op	0 B/op	0 allocs/op
BenchmarkDisabled/nop-2	1000	300.0 ns/op	0 B/op	1 allocs/op
BenchmarkDisabled/slogsimpler-2	1000	20.0 ns/op	0 B/op	0 allocs/op
BenchmarkDisabled/zerolog-2	1000	25.0 ns/op	0 B/op	0 allocs/op
BenchmarkParallel/slogsimpler-2	1000	500.0 ns/op	0 B/op	0 allocs/op	1100 cpu-ns/op
BenchmarkSaturation-2	1	200000000 ns/op	0.5 drop_%	2500000 records/s
BenchmarkSaturation-2	1	200000000 ns/op	0 drop_%	2000000 records/s
BenchmarkSaturation-2	1	200000000 ns/op	0 drop_%	3000000 records/s
BenchmarkSpan/slogsimpler-logattrs3-2	1000	400.0 ns/op	0 B/op	0 allocs/op
BenchmarkSpan/slogsimpler-logattrs3-2	1000	500.0 ns/op	0 B/op	0 allocs/op
BenchmarkSpan/slogsimpler-enabled-2	1000	600.0 ns/op	416 B/op	1 allocs/op
BenchmarkSpan/slogsimpler-enabled-2	1000	650.0 ns/op	416 B/op	1 allocs/op
BenchmarkOwn/Static/nop-2	1000	5.0 ns/op	0 B/op	0 allocs/op
BenchmarkOwn/Static/slogsimpler-2	1000	155.0 ns/op	0 B/op	0 allocs/op
BenchmarkOwn/Static/zerolog-2	1000	205.0 ns/op	0 B/op	0 allocs/op
BenchmarkDeployed/Static/nop-2	1000	200.0 ns/op	250.0 cpu-ns/op	0 B/op	0 allocs/op
BenchmarkDeployed/Static/slogsimpler-2	1000	300.0 ns/op	450.0 cpu-ns/op	0 lost	0 B/op	0 allocs/op
BenchmarkDeployed/Static/zerolog-2	1000	1500.0 ns/op	1600.0 cpu-ns/op	0 lost	0 B/op	0 allocs/op
BenchmarkDeployed/Static/zerolog-diode-2	1000	700.0 ns/op	1200.0 cpu-ns/op	14000 lost	0 B/op	0 allocs/op
BenchmarkDeployed/Static/phuslu-async-2	1000	600.0 ns/op	1000.0 cpu-ns/op	0 lost	0 B/op	0 allocs/op
PASS
`
	var out bytes.Buffer
	require.NoError(t, run(strings.NewReader(in), &out))
	got := out.String()
	for _, tt := range []struct{ name, want string }{
		{"environment above the table", "cpu: Test CPU @ 1GHz, GOMAXPROCS=2, " + runtime.Version() + "\n"},
		{"nop has no own cost", "| Static | nop | 200.0 | 0 |  |  |  |  |"},
		{"own cost against the fastest peer's, pass by pass, with its range", "| Static | slogsimpler | 300.0 | 0 | 1.50 | 100 | 0.50 (0.47–0.53, zerolog) |  |"},
		{"× nop pass by pass", "| Static | zerolog | 400.0 | 0 | 2.00 (1.95–2.05) | 200 | 1.00 (zerolog) |  |"},
		{"discard, disabled, has no own cost", "| Static | discard | 4.0 | 0 |  |  |  |  |"},
		{"a slower peer", "| Static | text | 1200.0 | 5 | 6.00 | 1000 | 5.00 (zerolog) |  |"},
		{"no floor: whole calls compared", "| Disabled | slogsimpler | 20.0 | 0 |  |  | 0.80 (zerolog, whole call) |  |"},
		{"custom metrics", "| Parallel | slogsimpler | 500.0 | 0 |  |  |  | cpu-ns/op=1100 |"},
		{"a scenario of two levels", "| Own/Static | slogsimpler | 155.0 | 0 | 31.00 | 150 | 0.75 (zerolog) |  |"},
		{"no scenario handler; a drop in any pass is told", "| Saturation | - | 200000000.0 | 0 |  |  |  | drop_%=0 (in 1 of 3 passes, at most 0.5) records/s=2.5e+06 (2e+06–3e+06) |"},
		{"a span against its baseline, pass by pass", "| Span | slogsimpler-enabled | 625.0 | 1 |  |  |  | × slogsimpler-logattrs3 1.40 (1.30–1.50) |"},
		{"deployed: whole call and CPU against the fastest peer that lost nothing", "| Deployed/Static | slogsimpler | 300.0 | 0 | 1.50 |  | 0.50 (phuslu-async, whole call) | cpu-ns/op=450 lost=0 cpu × phuslu-async 0.45 |"},
		{"deployed: a peer that lost records is marked and not ranked", "| Deployed/Static | zerolog-diode **LOST, not ranked** | 700.0 | 0 | 3.50 |  | 1.17 (phuslu-async, whole call) | cpu-ns/op=1200 lost=1.4e+04 cpu × phuslu-async 1.20 |"},
		{"the baseline itself has no ratio", "| Span | slogsimpler-logattrs3 | 450.0 | 0 |  |  |  |  |"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Contains(t, got, tt.want)
		})
	}
	t.Run("no nop row under Disabled", func(t *testing.T) {
		assert.NotContains(t, got, "| Disabled | nop |")
	})
	t.Run("empty input is an error", func(t *testing.T) {
		assert.Error(t, run(strings.NewReader("nothing"), &out))
	})
}
