package atrace

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"regexp"
	"runtime/trace"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/petermattis/goid"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
)

func TestParseRecordNum(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want int
		ok   bool
	}{
		{"15", 15, true}, {"+15", 15, true}, {" 15", 15, true}, {"10", 10, true}, {"1000", 1000, true},
		{"9", 10, false}, {"1001", 10, false}, {"15 ", 10, false}, {"1e2", 10, false}, {"0x10", 10, false},
		{"", 10, false}, {"-15", 10, false}, {"99999999999999999999", 10, false},
	} {
		t.Run(fmt.Sprintf("%q", tt.in), func(t *testing.T) {
			n, ok, warning := parseRecordNum(tt.in)
			assert.False(t, n != tt.want || ok != tt.ok, "got %d, %v", n, ok)
			assert.False(t, !ok && warning != fmt.Sprintf("invalid value [%s] for ASCEND_TRACE_RECORD_NUM, expected range: [10, 1000]. Use default dir num=10.", tt.in), "warning %q", warning)
		})
	}
}

type env map[string]string

func (e env) lookup(k string) (string, bool) { v, ok := e[k]; return v, ok }

// waitDumps waits until r has written n dumps: schedule dumps are written
// by the recorder's goroutine, after the logging call returns.
func waitDumps(t *testing.T, r *Recorder, n uint64) {
	t.Helper()
	require.Eventually(t, func() bool { return r.dumps.Load() >= n }, time.Minute, time.Millisecond)
}

// newRecorder returns a recorder dumping under a temporary work path, with
// its warnings going to a buffer.
func newRecorder(t *testing.T, e env, o *Options) (*Recorder, *bytes.Buffer) {
	t.Helper()
	var warnings bytes.Buffer
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Debug, Output: &warnings})
	require.NoError(t, err)
	if e == nil {
		e = env{}
	}
	if _, ok := e[envWorkPath]; !ok {
		e[envWorkPath] = t.TempDir()
	}
	if _, ok := e["HOME"]; !ok {
		e["HOME"] = t.TempDir()
	}
	var opts Options
	if o != nil {
		opts = *o
	}
	opts.State = st
	opts.lookupEnv = e.lookup
	r, err := New(&opts)
	require.NoError(t, err)
	return r, &warnings
}

// dumpEvent dumps the host ring as event, as the recorder does for a
// trigger (schedule), a panic or signal (stackcore, signal 0 and the
// calling goroutine) and Close (exit).
func dumpEvent(r *Recorder, event string) (string, error) {
	if event == eventStackcore {
		return r.dumpStackcore(0, goid.Get())
	}
	return r.dump(event, false, nil)
}

// deviceDump returns the one event directory that holds a device dump.
func deviceDump(t *testing.T, r *Recorder) string {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(r.Dir(), "*_event_*", "schedule_tracer_device.txt"))
	require.Len(t, files, 1, "device dumps")
	return filepath.Dir(files[0])
}

var (
	traceDirRE = regexp.MustCompile(`/atrace/trace_\d+_\d+_\d{20}$`)
	eventDirRE = regexp.MustCompile(`^(schedule|stackcore|exit)_event_\d+_\d{20}$`)
)

func TestScheduleDumpOnError(t *testing.T) {
	r, _ := newRecorder(t, nil, nil)
	log := slog.New(r).With("svc", "api")
	for i := range 5 {
		log.Debug("context before the error", "i", i)
	}
	log.Error("request failed", "code", 500)
	waitDumps(t, r, 1)
	require.True(t, traceDirRE.MatchString(r.Dir()), "trace dir %q", r.Dir())
	ents, _ := os.ReadDir(r.Dir())
	require.False(t, len(ents) != 1 || !eventDirRE.MatchString(ents[0].Name()) || !strings.HasPrefix(ents[0].Name(), "schedule_event_"), "event dirs %v", ents)
	b, err := os.ReadFile(filepath.Join(r.Dir(), ents[0].Name(), "schedule_tracer_host.txt"))
	require.NoError(t, err)
	if strings.Count(string(b), "context before the error") != 5 || !strings.Contains(string(b), "[ERROR] atrace.TestScheduleDumpOnError: [atrace_test.go:") ||
		!strings.Contains(string(b), "request failed svc=api code=500") {
		t.Errorf("dump:\n%s", b)
	}
}

func TestAging(t *testing.T) {
	now := time.Date(2026, 6, 1, 10, 0, 0, 0, time.Local)
	clock := func() time.Time { now = now.Add(time.Second); return now }
	r, _ := newRecorder(t, nil, &Options{now: clock})
	var dirs []string
	for range 11 {
		d, err := r.Dump()
		require.NoError(t, err)
		dirs = append(dirs, d)
	}
	_, err := os.Stat(dirs[0])
	assert.True(t, os.IsNotExist(err), "the oldest dump survived the 11th")
	ents, _ := os.ReadDir(r.Dir())
	assert.EqualValues(t, 10, len(ents), "%d directories, want 10", len(ents))
	// Only exit is exempt from aging (CANN's TraceRecorderSaveNode):
	// stackcore dumps count against the host list like schedule dumps,
	// and device dumps count apart.
	ex, _ := dumpEvent(r, eventExit)
	sc, _ := dumpEvent(r, eventStackcore)
	r.RecordDevice([]byte("[ERROR] AICPU(1,p):2026-06-01-10:00:00.000.000 [k.cpp:1]1 f boom"))
	_, err = r.Dump()
	require.NoError(t, err)
	dev := deviceDump(t, r)
	cores, _ := filepath.Glob(filepath.Join(sc, "stackcore_tracer_0_*_"+programName+"_*.txt"))
	require.Len(t, cores, 1, "CANN's stackcore file name")
	st, _ := os.ReadFile(cores[0])
	assert.Contains(t, string(st), "goroutine ")
	assert.Contains(t, string(st), "TestAging")
	for range 10 {
		dumpEvent(r, eventSchedule) // the host's alone: the device list stays at one
	}
	for _, d := range []string{ex, dev} {
		_, err := os.Stat(d)
		assert.NoError(t, err, "%s was aged out: %v", filepath.Base(d), err)
	}
	_, err = os.Stat(sc)
	assert.True(t, os.IsNotExist(err), "the stackcore dump was not aged: %v", err)
	b, _ := os.ReadFile(filepath.Join(dev, "schedule_tracer_device.txt"))
	assert.Contains(t, string(b), "boom\n", "device dump %q", b)
	ents, _ = os.ReadDir(r.Dir())
	assert.Len(t, ents, 12, "10 host (schedule and stackcore) + exit + 1 device")
	// A second exit dump replaces the first: only the latest is kept.
	ex2, _ := dumpEvent(r, eventExit)
	_, err = os.Stat(ex)
	assert.True(t, os.IsNotExist(err), "the older exit dump survived")
	assert.DirExists(t, ex2)
	t.Run("a crash loop does not fill the disk", func(t *testing.T) {
		r, _ := newRecorder(t, nil, &Options{now: clock})
		for range 25 {
			dumpEvent(r, eventStackcore)
		}
		ents, _ := os.ReadDir(r.Dir())
		assert.Len(t, ents, 10)
	})
	t.Run("ASCEND_TRACE_RECORD_NUM", func(t *testing.T) {
		r, _ := newRecorder(t, env{envRecordNum: "12"}, &Options{now: clock})
		for range 15 {
			r.Dump()
		}
		ents, _ := os.ReadDir(r.Dir())
		assert.EqualValues(t, 12, len(ents), "%d directories, want 12", len(ents))
	})
	t.Run("unset means 10, said at INFO", func(t *testing.T) {
		r, out := newRecorder(t, nil, nil)
		assert.Equal(t, 10, r.maxDirs)
		assert.Contains(t, out.String(), "[INFO] atrace: doesn't set env ASCEND_TRACE_RECORD_NUM, use default dir num=10.")
		assert.NotContains(t, out.String(), "[WARN]")
	})
	t.Run("a valid value is said at INFO", func(t *testing.T) {
		r, out := newRecorder(t, env{envRecordNum: "15"}, nil)
		assert.Equal(t, 15, r.maxDirs)
		assert.Contains(t, out.String(), "[INFO] atrace: set dir num=15 by env ASCEND_TRACE_RECORD_NUM.")
	})
	t.Run("invalid value warns and uses 10", func(t *testing.T) {
		r, warnings := newRecorder(t, env{envRecordNum: "1e2"}, &Options{now: clock})
		assert.False(t, r.maxDirs != 10 || !strings.Contains(warnings.String(), "[WARN] atrace: invalid value [1e2] for ASCEND_TRACE_RECORD_NUM, expected range: [10, 1000]. Use default dir num=10."), "max %d, warnings %q", r.maxDirs, warnings.String())
	})
}

// TestDumpWithDevice: Dump writes the host ring's schedule dump and
// returns its directory; once device records are kept it also writes the
// device ring's, in a directory of its own counted in the device list.
func TestDumpWithDevice(t *testing.T) {
	r, _ := newRecorder(t, nil, nil)
	slog.New(r).Info("host record")
	d, err := r.Dump()
	require.NoError(t, err)
	ents, _ := os.ReadDir(r.Dir())
	require.Len(t, ents, 1, "no device record: the host's dump alone")
	r.RecordDevice([]byte("[ERROR] AICPU(1,p):2026-06-01-10:00:00.000.000 [k.cpp:1]1 f boom"))
	d2, err := r.Dump()
	require.NoError(t, err)
	dev := deviceDump(t, r)
	assert.NotEqual(t, d2, dev, "the device's dump has a directory of its own")
	assert.True(t, eventDirRE.MatchString(filepath.Base(dev)) && strings.HasPrefix(filepath.Base(dev), "schedule_event_"), "device dir %q", dev)
	for _, dir := range []string{d, d2} {
		b, err := os.ReadFile(filepath.Join(dir, "schedule_tracer_host.txt"))
		require.NoError(t, err)
		assert.Contains(t, string(b), "host record")
	}
	b, _ := os.ReadFile(filepath.Join(dev, "schedule_tracer_device.txt"))
	assert.Contains(t, string(b), "boom\n")
	assert.Equal(t, []string{dev}, r.devDirs)
	assert.Len(t, r.hostDirs, 2)
	require.NoError(t, r.Close())
	_, err = r.Dump()
	assert.ErrorIs(t, err, ErrClosed)
}

func TestRemovalFailureWarnsAndContinues(t *testing.T) {
	failed := errors.New("read-only file system")
	orig := removeAll
	removeAll = func(*os.Root, string) error { return failed }
	defer func() { removeAll = orig }()
	r, warnings := newRecorder(t, nil, nil)
	for range 11 {
		_, err := r.Dump()
		require.NoError(t, err)
	}
	assert.Contains(t, warnings.String(), "could not remove old trace directory", "no warning: %q", warnings.String())
	ents, _ := os.ReadDir(r.Dir())
	assert.EqualValues(t, 11, len(ents), "%d directories: the 11th dump did not happen", len(ents))
}

func TestModes(t *testing.T) {
	for _, mask := range []int{0o077, 0o000} {
		t.Run(fmt.Sprintf("umask %03o", mask), func(t *testing.T) {
			old := logtest.Umask(mask)
			defer logtest.Umask(old)
			work := filepath.Join(t.TempDir(), "new", "work")
			r, _ := newRecorder(t, env{envWorkPath: work}, nil)
			d, err := dumpEvent(r, eventExit)
			require.NoError(t, err)
			for _, p := range []string{work, filepath.Dir(work), filepath.Join(work, "atrace"), r.Dir(), d} {
				fi, err := os.Stat(p)
				assert.False(t, err != nil || fi.Mode().Perm() != 0o750, "%s: %v %v", p, fi.Mode().Perm(), err)
			}
			fi, err := os.Stat(filepath.Join(d, "exit_tracer_host.txt"))
			assert.False(t, err != nil || fi.Mode().Perm() != 0o640, "file mode %v %v", fi.Mode().Perm(), err)
		})
	}
}

func TestRootFallback(t *testing.T) {
	home := t.TempDir()
	cwd, _ := os.Getwd()
	file := filepath.Join(t.TempDir(), "a-file")
	os.WriteFile(file, nil, 0o600)
	for _, tt := range []struct {
		name, work string
		wantRoot   string
		warn       bool
	}{
		{"relative made absolute", "rel-work", filepath.Join(cwd, "rel-work"), false},
		{"missing is created", filepath.Join(home, "x", "y"), filepath.Join(home, "x", "y"), false},
		{"unusable (under a file)", filepath.Join(file, "sub"), filepath.Join(home, "ascend"), true},
		{"too long", "/" + strings.Repeat("d", maxRootLen+10), filepath.Join(home, "ascend"), true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if strings.HasPrefix(tt.work, "rel") {
				defer os.RemoveAll(filepath.Join(cwd, tt.work))
			}
			r, warnings := newRecorder(t, env{envWorkPath: tt.work, "HOME": home}, nil)
			assert.True(t, strings.HasPrefix(r.Dir(), tt.wantRoot+"/atrace/"), "dir %q, want under %q", r.Dir(), tt.wantRoot)
			assert.EqualValues(t, strings.Contains(warnings.String(), "ASCEND_WORK_PATH is not usable"), tt.warn, "warnings %q", warnings.String())
		})
	}
	t.Run("unset", func(t *testing.T) {
		r, err := New(&Options{lookupEnv: env{"HOME": home}.lookup})
		assert.False(t, err != nil || !strings.HasPrefix(r.Dir(), filepath.Join(home, "ascend", "atrace")), "%q %v", r.Dir(), err)
	})
}

func TestPanicDump(t *testing.T) {
	r, _ := newRecorder(t, nil, nil)
	log := slog.New(r)
	func() {
		defer func() {
			assert.EqualValues(t, "boom", recover())
		}()
		defer r.RecoverAndDump()
		log.Info("last words")
		panic("boom")
	}()
	ents, _ := os.ReadDir(r.Dir())
	require.False(t, len(ents) != 1 || !strings.HasPrefix(ents[0].Name(), "stackcore_event_"), "%v", ents)
	d := filepath.Join(r.Dir(), ents[0].Name())
	host, _ := os.ReadFile(filepath.Join(d, "stackcore_tracer_host.txt"))
	cores, _ := filepath.Glob(filepath.Join(d, "stackcore_tracer_0_*.txt"))
	require.Len(t, cores, 1)
	stacks, _ := os.ReadFile(cores[0])
	assert.False(t, !strings.Contains(string(host), "last words") || !strings.Contains(string(host), "panic: boom") || !strings.Contains(string(stacks), "TestPanicDump"), "host %q\nstacks %.200q", host, stacks)
}

// TestConcurrentTriggers: errors from many goroutines at once coalesce
// into few dumps (one per interval), every error is in one of them, and
// no record in a dump is damaged.
func TestConcurrentTriggers(t *testing.T) {
	r, _ := newRecorder(t, nil, &Options{Interval: time.Hour})
	log := slog.New(r)
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				log.Info("work", "g", g, "i", i)
			}
			log.Error("failed", "g", g)
		})
	}
	wg.Wait()
	require.NoError(t, r.Close()) // writes the dump still wanted
	ents, _ := os.ReadDir(r.Dir())
	var schedules int
	var all strings.Builder
	for _, e := range ents {
		if !strings.HasPrefix(e.Name(), "schedule_event_") {
			continue
		}
		schedules++
		b, err := os.ReadFile(filepath.Join(r.Dir(), e.Name(), "schedule_tracer_host.txt"))
		require.NoError(t, err)
		all.Write(b)
		lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
		for _, l := range lines[1:] {
			require.False(t, !strings.HasPrefix(l, "[mono_ns=") || !strings.Contains(l, "] atrace.TestConcurrentTriggers.func1: ["), "damaged record %q in %s", l, e.Name())
		}
	}
	assert.GreaterOrEqual(t, schedules, 1)
	assert.LessOrEqual(t, schedules, 2, "8 errors within one interval: the first dump, then one more at most")
	for g := range 8 {
		assert.Contains(t, all.String(), fmt.Sprintf("failed g=%d", g))
	}
}

func TestRingKeepsNewestWhole(t *testing.T) {
	r, _ := newRecorder(t, nil, &Options{RingBytes: 4096})
	log := slog.New(r)
	for i := range 500 {
		log.Info("record", "i", i, "pad", strings.Repeat("p", i%40))
	}
	d, _ := dumpEvent(r, eventExit)
	b, _ := os.ReadFile(filepath.Join(d, "exit_tracer_host.txt"))
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	assert.Contains(t, lines[0], "older records pushed out of the ring", "header %q", lines[0])
	recs := lines[1:]
	require.False(t, len(b) > 4096+200 || len(recs) < 10, "%d bytes, %d records", len(b), len(recs))
	for k, l := range recs {
		want := fmt.Sprintf("record i=%d ", 500-len(recs)+k)
		require.False(t, !strings.HasPrefix(l, "[mono_ns=") || !strings.Contains(l, want), "record %d %q, want %q", k, l, want)
	}
}

func TestLevelsAndClose(t *testing.T) {
	r, _ := newRecorder(t, nil, &Options{Level: levels.Info, Trigger: levels.Warn})
	assert.False(t, r.Enabled(context.Background(), levels.Debug) || !r.Enabled(context.Background(), levels.Info), "level")
	log := slog.New(r)
	log.Debug("not kept")
	log.Warn("triggers")
	require.NoError(t, r.Close())
	assert.EqualValues(t, nil, r.Close())
	_, err := r.Dump()
	assert.True(t, errors.Is(err, ErrClosed), "dump after Close: %v", err)
	assert.ErrorIs(t, err, sink.ErrClosed, "one sentinel for a use after Close, the library's")
	assert.EqualError(t, err, "atrace: recorder closed: sink: closed")
	ents, _ := os.ReadDir(r.Dir())
	require.EqualValues(t, 2, len(ents), "%v", ents)
	b, _ := os.ReadFile(filepath.Join(r.Dir(), ents[0].Name(), "exit_tracer_host.txt"))
	assert.False(t, strings.Contains(string(b), "not kept") || !strings.Contains(string(b), "triggers"), "%q", b)
}

func TestFlightRecorderSnapshot(t *testing.T) {
	if trace.IsEnabled() {
		t.Skip("tracer already running")
	}
	fr := trace.NewFlightRecorder(trace.FlightRecorderConfig{})
	if err := fr.Start(); err != nil {
		t.Skip(err)
	}
	defer fr.Stop()
	r, _ := newRecorder(t, nil, &Options{FlightRecorder: fr})
	slog.New(r).Error("with a go trace")
	waitDumps(t, r, 1)
	ents, _ := os.ReadDir(r.Dir())
	fi, err := os.Stat(filepath.Join(r.Dir(), ents[0].Name(), "go.trace"))
	assert.False(t, err != nil || fi.Size() == 0 || fi.Mode().Perm() != 0o640, "go.trace: %v %v", fi, err)
}

// FuzzParseRecordNum compares with CANN's rule written another way.
func FuzzParseRecordNum(f *testing.F) {
	for _, s := range []string{"15", "+15", " 15", "9", "1001", "15 ", "1e2", "0x10", ""} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, ok, warning := parseRecordNum(s)
		rest := strings.TrimPrefix(strings.TrimLeft(s, " \t\n\v\f\r"), "+")
		v, err := strconv.Atoi(rest)
		want := err == nil && rest != "" && strings.Trim(rest, "0123456789") == "" && v >= 10 && v <= 1000
		require.False(t, ok != want || (ok && n != v) || (!ok && (n != 10 || warning == "")), "parseRecordNum(%q) = %d, %v", s, n, ok)
	})
}

// TestRootSwappedAfterStart: the dump root renamed away and a link
// planted at its path after the first dump: the next dump is made in the
// root the recorder holds, never through the link (at c70c1aa the path was
// looked up on every dump, and a schedule dump landed in the link's
// target).
func TestRootSwappedAfterStart(t *testing.T) {
	parent, victim := t.TempDir(), t.TempDir()
	work := filepath.Join(parent, "work")
	require.NoError(t, os.Mkdir(work, 0o750))
	r, _ := newRecorder(t, env{envWorkPath: work}, nil)
	_, err := r.Dump()
	require.NoError(t, err)
	moved := filepath.Join(parent, "moved")
	require.NoError(t, os.Rename(work, moved))
	require.NoError(t, os.Symlink(victim, work))
	_, err = r.Dump()
	require.NoError(t, err)
	planted, err := os.ReadDir(victim)
	require.NoError(t, err)
	assert.Empty(t, planted, "a dump was made through the planted link")
	dumps, _ := filepath.Glob(filepath.Join(moved, "atrace", "trace_*", "schedule_event_*"))
	assert.Len(t, dumps, 2, "both dumps in the root the recorder holds")
}
