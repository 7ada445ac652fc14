package sink

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"regexp"
	"simpler.dev/log/internal/testkit/logtest"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/racedetect"
	"simpler.dev/log/internal/testkit/self"
)

// nofileRun is what a child of TestDescriptorLimit reports: the sink's
// counts at close and the totals of the last [HOSTLOG_DROPS] of the file
// it closed.
type nofileRun struct {
	Counts    Counts
	LastDrops map[string]uint64
}

// TestDescriptorLimit: a service at a short descriptor limit (none, one
// or two over what it holds already, past what ulimit -n 12 leaves),
// rotating at 64 KiB, loses no more records with Compress than without, and the file's last
// [HOSTLOG_DROPS] says what Counts() says: the file is writable at close,
// so the report of every loss is in it. On 95586fe, at ulimit -n 16, the
// compressed run lost 17 677 records and its last report said 1 016. Each
// case runs in a child process, whose limit is its own.
func TestDescriptorLimit(t *testing.T) {
	if spec := os.Getenv("SINK_NOFILE_CHILD"); spec != "" {
		nofileChild(spec)
		return
	}
	n := 12000
	if racedetect.Enabled {
		n = 6000 // four rotations a child still
	}
	for _, extra := range []int{0, 1, 2} {
		lost := map[bool]uint64{}
		for _, compress := range []bool{false, true} {
			t.Run(fmt.Sprintf("%d free descriptors, compress %v", extra, compress), func(t *testing.T) {
				dir := t.TempDir()
				cmd := self.Command("-test.run=^TestDescriptorLimit$", "-test.count=1")
				cmd.Env = append(os.Environ(), fmt.Sprintf("SINK_NOFILE_CHILD=%s,%d,%v,%d", dir, extra, compress, n))
				out, err := cmd.Output()
				require.NoError(t, err, "%s", out)
				var got nofileRun
				require.NoError(t, json.Unmarshal([]byte(lastLine(string(out))), &got), "%s", out)
				c := got.Counts
				assert.EqualValues(t, n, c.Written+c.Dropped, "every record counted once: %+v", c)
				assert.EqualValues(t, c.Written, recordsIn(t, dir), "written counts the records in the files")
				assert.Equal(t, map[string]uint64{"total": c.Dropped, "queue_full": c.QueueFull,
					"claim_exhausted": c.ClaimExhausted, "output_failed": c.OutputFailed, "not_admitted": c.NotAdmitted},
					got.LastDrops, "the last report says what Counts says")
				t.Logf("%+v", c)
				lost[compress] = c.Dropped
			})
		}
		assert.LessOrEqual(t, lost[true], lost[false], "%d free descriptors: compression costs no record", extra)
	}
}

// nofileChild lowers this process's descriptor limit to what it holds
// plus extra, writes n records through a sink rotating at 64 KiB, closes
// it and prints a nofileRun as its last line.
func nofileChild(spec string) {
	var dir string
	var extra, n int
	var compress bool
	parts := regexp.MustCompile(`^(.*),(\d+),(true|false),(\d+)$`).FindStringSubmatch(spec)
	if parts == nil {
		fmt.Println("bad spec", spec)
		os.Exit(2)
	}
	dir, compress = parts[1], parts[3] == "true"
	extra, _ = strconv.Atoi(parts[2])
	n, _ = strconv.Atoi(parts[4])

	s := newTest(&testOptions{Report: testReport})
	if err := s.SetRotation(Rotation{MaxSize: 64 << 10, Compress: compress}); err != nil {
		panic(err)
	}
	ents, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		panic(err)
	}
	var was syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &was); err != nil {
		panic(err)
	}
	limit := func(lim uint64) {
		if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &syscall.Rlimit{Cur: lim, Max: was.Max}); err != nil {
			panic(err)
		}
	}
	if extra > 0 {
		limit(uint64(len(ents) + extra))
	}
	if err := s.BindDir(dir); err != nil {
		panic(err)
	}
	if err := s.Start(); err != nil {
		panic(err)
	}
	for i := range n {
		if extra == 0 { // none to spare for the middle third
			switch i {
			case n / 3:
				limit(3) // no new descriptor at all: the limit bounds the numbers, and 0-2 are taken
			case 2 * n / 3:
				limit(was.Cur)
			}
		}
		_ = put(s, fmt.Appendf(nil, "[mono_ns=%d][T0x1][INFO] f: rec i=%05d\n", i+1, i))
		if i%1000 == 999 {
			_ = s.Flush(logtest.Within(time.Minute)) // a service's pace, not a burst the queue drops
		}
	}
	if err := s.Shutdown(logtest.Within(time.Minute)); err != nil {
		panic(err)
	}
	run := nofileRun{Counts: s.Counts()}
	f, err := os.Open(logPath(dir))
	if err != nil {
		panic(err)
	}
	field := regexp.MustCompile(`(\w+)=(\d+)`)
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		l := sc.Text()
		if !regexp.MustCompile(`\[HOSTLOG_DROPS\]`).MatchString(l) {
			continue
		}
		run.LastDrops = map[string]uint64{}
		for _, m := range field.FindAllStringSubmatch(l, -1) {
			switch m[1] {
			case "total", "queue_full", "claim_exhausted", "output_failed", "not_admitted":
				v, _ := strconv.ParseUint(m[2], 10, 64)
				run.LastDrops[m[1]] = v
			}
		}
	}
	if run.LastDrops == nil { // nothing lost, nothing reported
		run.LastDrops = map[string]uint64{"total": 0, "queue_full": 0, "claim_exhausted": 0, "output_failed": 0, "not_admitted": 0}
	}
	b, _ := json.Marshal(run)
	fmt.Printf("\n%s\n", b)
	os.Exit(0)
}
