package hostiletest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"simpler.dev/log/internal/testkit/logtest"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/strace"
)

// hostileDest is a destination of the program's that misbehaves as fault
// says (keeping only the first keep bytes of a write, failing it with
// err) and is slow by delay, until healed.
type hostileDest struct {
	mu     sync.Mutex
	out    bytes.Buffer
	calls  int
	batch  int
	delay  time.Duration
	fault  func(call int, b []byte) (keep int, err error)
	healed atomic.Bool
}

func (d *hostileDest) Write(b []byte) (int, error) {
	if d.delay > 0 && !d.healed.Load() {
		time.Sleep(d.delay)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.calls++
	keep, err := len(b), error(nil)
	if d.fault != nil && !d.healed.Load() {
		keep, err = d.fault(d.calls, b)
	}
	keep = min(max(keep, 0), len(b))
	d.out.Write(b[:keep])
	return keep, err
}

func (d *hostileDest) Batch() int   { return d.batch }
func (d *hostileDest) Close() error { return nil }

func (d *hostileDest) bytes() []byte {
	d.mu.Lock()
	defer d.mu.Unlock()
	return bytes.Clone(d.out.Bytes())
}

// recID finds the id of a whole "rec id=<9 digits> end=1" record in line:
// one envelope record (a glued fragment makes two), ending with its
// newline and its last attribute.
func recID(line []byte) (string, bool) {
	if !bytes.HasSuffix(line, []byte(" end=1\n")) || bytes.Count(line, []byte("[mono_ns=")) != 1 {
		return "", false
	}
	if p, err := envelope.Parse(line); err != nil || p.Legacy {
		return "", false
	}
	i := bytes.Index(line, []byte(" rec id="))
	if i < 0 || len(line) < i+8+9 {
		return "", false
	}
	id := line[i+8 : i+8+9]
	if string(line[i+8+9:]) != " end=1\n" {
		return "", false
	}
	return string(id), true
}

// account reads out: the ids of the whole records, how many came twice,
// and the largest drop total this process reported in it.
func account(out []byte) (ids map[string]int, dups int, reported uint64, hasReport bool) {
	ids = map[string]int{}
	for _, line := range bytes.SplitAfter(out, []byte("\n")) {
		if id, ok := recID(line); ok {
			ids[id]++
			if ids[id] == 2 {
				dups++
			}
		}
	}
	var rd strace.Parser
	_ = rd.Read(bytes.NewReader(out))
	if d, ok := rd.Drops[int64(os.Getpid())]; ok {
		reported, hasReport = d.Total, true
	}
	return ids, dups, reported, hasReport
}

// A lossCase logs producers × each records into a state made by opts
// and checks that every one of them is in the output or counted dropped.
type lossCase struct {
	name            string
	producers, each int
	level           slog.Level
	// opts returns the state's options, the hostile destination (nil
	// for a directory) and how to read everything written.
	opts func(t *testing.T) (*slogsimpler.StateOptions, *hostileDest, func() []byte)
	// midway runs when half the records have been logged (a Close or a
	// Quiesce under load); late says records are logged after Close
	// began, so the last report cannot hold every drop (those after it
	// are in Counts only, as documented).
	midway func(st *slogsimpler.State)
	late   bool
}

func destOpts(d *hostileDest, async bool, extra func(o *slogsimpler.StateOptions)) func(t *testing.T) (*slogsimpler.StateOptions, *hostileDest, func() []byte) {
	return func(*testing.T) (*slogsimpler.StateOptions, *hostileDest, func() []byte) {
		o := &slogsimpler.StateOptions{Level: levels.Info, Destination: d, Synchronous: !async}
		if extra != nil {
			extra(o)
		}
		return o, d, d.bytes
	}
}

var errIO = errors.New("hostile destination: input/output error")

func lossCases() []lossCase {
	everyK := func(k int) func(int, []byte) (int, error) {
		return func(call int, _ []byte) (int, error) {
			if call%k == 0 {
				return 0, errIO
			}
			return 1 << 30, nil
		}
	}
	short := func(withErr bool) func(int, []byte) (int, error) {
		return func(call int, b []byte) (int, error) {
			if call%5 == 0 {
				if withErr {
					return len(b)/2 + 1, io.ErrShortWrite
				}
				return len(b)/2 + 1, nil
			}
			return len(b), nil
		}
	}
	// enospc takes 48 KiB, then fails 20 writes (the first partly),
	// then takes 48 KiB again.
	enospc := func() func(int, []byte) (int, error) {
		room, failing := 48<<10, 0
		return func(_ int, b []byte) (int, error) {
			if failing > 0 {
				failing--
				if failing == 0 {
					room = 48 << 10
				}
				return 0, syscall.ENOSPC
			}
			if len(b) <= room {
				room -= len(b)
				return len(b), nil
			}
			n := room
			room, failing = 0, 20
			return n, syscall.ENOSPC
		}
	}
	return []lossCase{
		{name: "every 7th write fails", producers: 4, each: 3000, level: levels.Info,
			opts: destOpts(&hostileDest{batch: 4096, fault: everyK(7)}, true, nil)},
		{name: "every 3rd write fails, pipe-sized batches", producers: 4, each: 2000, level: levels.Info,
			opts: destOpts(&hostileDest{batch: envelope.MaxRecord, fault: everyK(3)}, true, nil)},
		{name: "short writes with an error", producers: 4, each: 3000, level: levels.Info,
			opts: destOpts(&hostileDest{batch: 4096, fault: short(true)}, true, nil)},
		{name: "short writes without an error", producers: 4, each: 3000, level: levels.Info,
			opts: destOpts(&hostileDest{batch: 4096, fault: short(false)}, true, nil)},
		{name: "ENOSPC, partial then refused, then room again", producers: 4, each: 4000, level: levels.Info,
			opts: destOpts(&hostileDest{batch: 16 << 10, fault: enospc()}, true, nil)},
		{name: "ERROR records (flushed) into a failing destination", producers: 4, each: 200, level: levels.Error,
			opts: destOpts(&hostileDest{batch: 4096, fault: everyK(4)}, true, nil)},
		{name: "synchronous, every 3rd write fails", producers: 4, each: 500, level: levels.Info,
			opts: destOpts(&hostileDest{batch: 4096, fault: short(true)}, false, nil)},
		{name: "slow writer, Close under 8 producers", producers: 8, each: 2000, level: levels.Info, late: true,
			opts:   destOpts(&hostileDest{batch: envelope.MaxRecord, delay: time.Millisecond}, true, nil),
			midway: func(st *slogsimpler.State) { _ = st.Shutdown(logtest.Within(100 * time.Millisecond)) }},
		{name: "slow failing writer, Quiesce and Start under 8 producers", producers: 8, each: 2000, level: levels.Info,
			opts: destOpts(&hostileDest{batch: envelope.MaxRecord, delay: 500 * time.Microsecond, fault: everyK(5)}, true, nil),
			midway: func(st *slogsimpler.State) {
				_ = st.Quiesce(logtest.Within(100 * time.Millisecond))
				_ = st.Start()
			}},
		{name: "slow writer with backpressure", producers: 8, each: 1000, level: levels.Info,
			opts: destOpts(&hostileDest{batch: envelope.MaxRecord, delay: 200 * time.Microsecond}, true,
				func(o *slogsimpler.StateOptions) { o.Backpressure = 2 * time.Millisecond })},
		{name: "batch smaller than a record", producers: 2, each: 500, level: levels.Info,
			opts: destOpts(&hostileDest{batch: 64}, true, nil)},
		{name: "rotation at the smallest size, 8 producers", producers: 8, each: 3000, level: levels.Info,
			opts: func(t *testing.T) (*slogsimpler.StateOptions, *hostileDest, func() []byte) {
				dir := t.TempDir()
				return &slogsimpler.StateOptions{Level: levels.Info, Dir: dir,
					Rotation: sink.Rotation{MaxSize: minRotateSize}}, nil, func() []byte { return readLogSet(t, dir) }
			}},
	}
}

// readLogSet reads a directory's host.*.log in name order, the rotated
// files before the current, as the readers do.
func readLogSet(t *testing.T, dir string) []byte {
	names, err := filepath.Glob(filepath.Join(dir, "host.*.log"))
	require.NoError(t, err)
	sort.Strings(names)
	var out []byte
	for _, n := range names {
		b, err := os.ReadFile(n)
		require.NoError(t, err)
		out = append(out, b...)
	}
	return out
}

// lostSection runs every loss case.
func lostSection(t *testing.T, y *tally) {
	for _, c := range lossCases() {
		t.Run(c.name, func(t *testing.T) { runLoss(t, y, c) })
	}
	t.Run("full disk under the real file", func(t *testing.T) { fullDisk(t, y) })
}

// produce logs each records from each of producers goroutines, calling
// midway once half of them are logged, and returns how many were logged.
func produce(l *slog.Logger, producers, each, tag int, level slog.Level, midway func()) int {
	var n atomic.Int64
	half := int64(producers * each / 2)
	var wg sync.WaitGroup
	var once sync.Once
	for g := range producers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				l.Log(context.Background(), level, "rec", "id", fmt.Sprintf("%02d%07d", tag+g, i), "end", 1)
				if n.Add(1) == half && midway != nil {
					once.Do(midway)
				}
			}
		}()
	}
	wg.Wait()
	return int(n.Load())
}

func runLoss(t *testing.T, y *tally, c lossCase) {
	o, d, read := c.opts(t)
	st, err := slogsimpler.NewState(o)
	require.NoError(t, err)
	if !o.Synchronous { // as Setup would: the writer runs
		require.NoError(t, st.Start())
	}
	var midway func()
	if c.midway != nil {
		midway = func() { c.midway(st) }
	}
	logged := produce(slog.New(st.Handler()), c.producers, c.each, 0, c.level, midway)
	if d != nil {
		d.healed.Store(true) // the final report, at least, reaches the output
	}
	checkLoss(t, y, c.name, st, logged, read, !c.late)
}

// checkLoss closes st, waits for nothing to be pending, and counts every
// record neither in the output nor counted dropped, every record there
// twice, and a final report that does not hold every drop.
func checkLoss(t *testing.T, y *tally, name string, st *slogsimpler.State, logged int, read func() []byte, reportAll bool) {
	closeErr := st.Shutdown(logtest.Within(5 * time.Second))
	deadline := time.Now().Add(10 * time.Second)
	for st.Counts().Pending > 0 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	cn := st.Counts()
	ids, dups, reported, hasReport := account(read())
	y.tried(catLost, logged)
	found := len(ids)
	diff := found + int(cn.Dropped) - logged
	y.fail(catLost, abs(diff), "%s: %d logged, %d in the output + %d counted dropped (%+v), close: %v", name, logged, found, cn.Dropped, cn.Counts, closeErr)
	y.fail(catLost, dups, "%s: %d records written twice", name, dups)
	if cn.Pending > 0 {
		y.fail(catLost, int(cn.Pending), "%s: %d records still pending 10 s after Close", name, cn.Pending)
	}
	if reportAll && cn.Dropped > 0 && (!hasReport || reported != cn.Dropped) {
		y.fail(catLost, 1, "%s: %d drops counted, the log's last report says %d (report found: %v)", name, cn.Dropped, reported, hasReport)
	}
	if cn.Dropped > 0 {
		y.note(catLost, "%s: %d of %d dropped and counted (queue_full %d, claim_exhausted %d, output_failed %d, not_admitted %d)",
			name, cn.Dropped, logged, cn.QueueFull, cn.ClaimExhausted, cn.OutputFailed, cn.NotAdmitted)
	}
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// plantLost: a destination that says it wrote a batch it threw away.
func plantLost(t *testing.T, y *tally) {
	d := &hostileDest{batch: 4096}
	d.fault = func(call int, b []byte) (int, error) {
		if call == 3 {
			return 0, nil // keep nothing of this write; lyingDest says it was all written
		}
		return len(b), nil
	}
	lying := &lyingDest{d}
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Destination: lying})
	require.NoError(t, err)
	logged := produce(slog.New(st.Handler()), 1, 50, 0, levels.Info, nil)
	checkLoss(t, y, "planted: a destination that lies", st, logged, d.bytes, true)
}

// lyingDest reports every write whole, whatever its destination kept.
type lyingDest struct{ *hostileDest }

func (l *lyingDest) Write(b []byte) (int, error) {
	_, _ = l.hostileDest.Write(b)
	return len(b), nil
}

// fullDiskRun logs records into a real file before, while and after
// fill makes the disk full for it (fill gets the file's path and returns
// how to make room again).
func fullDiskRun(t *testing.T, y *tally, fill func(path string) (undo func(), err error)) {
	dir := t.TempDir()
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Dir: dir})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	l := slog.New(st.Handler())
	logged := produce(l, 2, 500, 0, levels.Info, nil)
	require.NoError(t, st.Flush(logtest.Within(5*time.Second)))
	undo, err := fill(st.Path())
	if err != nil {
		y.note(catLost, "full disk: %v; its case is skipped", err)
		_ = st.Close()
		t.Skip(err)
	}
	logged += produce(l, 2, 1000, 10, levels.Info, nil)
	_ = st.Flush(logtest.Within(5 * time.Second))
	logged += produce(l, 1, 20, 20, levels.Error, nil)
	undo()
	logged += produce(l, 2, 250, 30, levels.Info, nil)
	checkLoss(t, y, "full disk under the real file", st, logged, func() []byte { return readLogSet(t, dir) }, true)
	out := readLogSet(t, dir)
	if n := tornLines(out); n > 0 {
		y.note(catLost, "full disk: the file holds %d torn line(s)", n)
	}
	if !strings.Contains(string(out), "output_failed=") {
		y.note(catLost, "full disk: no report in the file names output_failed")
	}
}

// tornLines counts the lines of out that are not one whole envelope
// record.
func tornLines(out []byte) int {
	n := 0
	for _, line := range bytes.SplitAfter(out, []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		if p, err := envelope.Parse(line); err != nil || p.Legacy || line[len(line)-1] != '\n' || bytes.Count(line, []byte("[mono_ns=")) != 1 {
			n++
		}
	}
	return n
}
