package slogsimpler

import (
	"bytes"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
)

// Placeholders for a Dir in TestSetupKeepsStateOptions' rows: the
// subtest's temporary directory, and another one.
const (
	tmpDir   = "<tmp>"
	otherDir = "<other>"
)

// TestSetupKeepsStateOptions: every option a State carries (each field
// NewState consumes) survives Setup(&Options{State: st, ...}) when Setup
// is not given it (its zero value), and Setup's own value, when given,
// replaces the State's or is refused, as Options.State says. Before the
// fix Setup reset the State's Rotation and Backpressure to none, never
// made a console for a State bound by NewState, and started the writer of
// a State made Synchronous.
func TestSetupKeepsStateOptions(t *testing.T) {
	for _, env := range []string{envLevel, envMAXLevel, envFlushLevel, envConsoleLevel} {
		t.Setenv(env, "") // blank reads as unset: the options alone decide
	}
	const minSize int64 = 64 << 10 // the smallest Rotation.MaxSize
	var console bytes.Buffer       // the Dir row's
	gates := map[string]chan struct{}{}
	gated := func(name string) sink.Destination {
		gates[name] = make(chan struct{})
		return sink.Writer(gateWriter(gates[name]))
	}
	tests := []struct {
		name  string
		state StateOptions // NewState's; Output io.Discard unless a Destination
		setup Options      // Setup's, with State; NoConsole unless a Console
		// during runs between Setup and Logging.Close, check after Close
		// (or after Setup's refusal, wantErr, if one is wanted).
		during  func(t *testing.T, name string, st *State)
		check   func(t *testing.T, st *State, dir string)
		wantErr string
	}{
		{
			name:  "Level kept",
			state: StateOptions{Level: levels.Warn},
			check: func(t *testing.T, st *State, _ string) { assert.Equal(t, levels.Warn, st.Level()) },
		},
		{
			name:  "Level given",
			state: StateOptions{Level: levels.Warn}, setup: Options{Level: levels.Debug},
			check: func(t *testing.T, st *State, _ string) { assert.Equal(t, levels.Debug, st.Level()) },
		},
		{
			name:  "FlushLevel kept",
			state: StateOptions{FlushLevel: levels.Warn},
			check: func(t *testing.T, st *State, _ string) { assert.Equal(t, levels.Warn, st.flush.Load().level.Level()) },
		},
		{
			name:  "FlushLevel given",
			state: StateOptions{FlushLevel: levels.Warn}, setup: Options{FlushLevel: levels.Info},
			check: func(t *testing.T, st *State, _ string) { assert.Equal(t, levels.Info, st.flush.Load().level.Level()) },
		},
		{
			name:  "FlushBound kept",
			state: StateOptions{FlushBound: time.Second},
			check: func(t *testing.T, st *State, _ string) { assert.Equal(t, time.Second, st.flush.Load().bound) },
		},
		{
			name:  "FlushBound given",
			state: StateOptions{FlushBound: time.Second}, setup: Options{FlushBound: time.Minute},
			check: func(t *testing.T, st *State, _ string) { assert.Equal(t, time.Minute, st.flush.Load().bound) },
		},
		{
			// The reported bug: the State's cap was dropped and the file
			// grew without bound.
			name:   "Rotation kept",
			state:  StateOptions{Rotation: sink.Rotation{MaxSize: minSize, MaxFiles: 10}},
			setup:  Options{Dir: tmpDir, Synchronous: true},
			during: writePast(2 * minSize),
			check:  assertRotated(true),
		},
		{
			name:   "Rotation given",
			state:  StateOptions{Rotation: sink.Rotation{MaxSize: minSize, MaxFiles: 10}},
			setup:  Options{Dir: tmpDir, Synchronous: true, Rotation: sink.Rotation{MaxSize: 1 << 30}},
			during: writePast(2 * minSize),
			check:  assertRotated(false),
		},
		{
			name:   "Backpressure kept",
			state:  StateOptions{Destination: gated("Backpressure kept"), Backpressure: time.Hour},
			during: fillQueue(gates),
			check: func(t *testing.T, st *State, _ string) {
				c := st.Counts()
				assert.NotZero(t, c.Waited, "a call waited for room: %+v", c)
				assert.Zero(t, c.Dropped, "none dropped within the State's hour: %+v", c)
			},
		},
		{
			name:   "Backpressure given",
			state:  StateOptions{Destination: gated("Backpressure given"), Backpressure: time.Nanosecond},
			setup:  Options{Backpressure: time.Hour},
			during: fillQueue(gates),
			check: func(t *testing.T, st *State, _ string) {
				c := st.Counts()
				assert.NotZero(t, c.Waited, "a call waited for room: %+v", c)
				assert.Zero(t, c.Dropped, "none dropped within Setup's hour, as after the State's nanosecond: %+v", c)
			},
		},
		{
			// A service's default: a call that finds the queue full
			// waits for room (DefaultBackpressure) rather than drop.
			name:   "Backpressure in neither: Setup waits",
			state:  StateOptions{Destination: gated("Backpressure in neither: Setup waits")},
			during: fillQueue(gates),
			check: func(t *testing.T, st *State, _ string) {
				assert.NotZero(t, st.Counts().Waited, "a call waited for room: %+v", st.Counts())
			},
		},
		{
			name:   "Backpressure kept: DropWhenFull",
			state:  StateOptions{Destination: gated("Backpressure kept: DropWhenFull"), Backpressure: DropWhenFull},
			during: fillQueue(gates),
			check:  droppedUnwaited,
		},
		{
			name:   "Backpressure given: DropWhenFull",
			state:  StateOptions{Destination: gated("Backpressure given: DropWhenFull"), Backpressure: time.Hour},
			setup:  Options{Backpressure: DropWhenFull},
			during: fillQueue(gates),
			check:  droppedUnwaited,
		},
		{
			// A State bound by NewState keeps its file, and gets Setup's
			// console as a State bound by Setup does.
			name:   "Dir kept",
			state:  StateOptions{Dir: tmpDir},
			setup:  Options{Console: &console},
			during: func(*testing.T, string, *State) { slog.Info("to file and console") },
			check: func(t *testing.T, st *State, dir string) {
				assert.Equal(t, dir, filepath.Dir(st.Path()))
				b, err := os.ReadFile(st.Path())
				require.NoError(t, err)
				assert.Contains(t, string(b), "to file and console")
				assert.Contains(t, console.String(), "to file and console", "Setup made the console")
			},
		},
		{
			name:  "Dir given, the same",
			state: StateOptions{Dir: tmpDir}, setup: Options{Dir: tmpDir},
			check: func(t *testing.T, st *State, dir string) { assert.Equal(t, dir, filepath.Dir(st.Path())) },
		},
		{
			name:    "Dir given, another: refused",
			state:   StateOptions{Dir: tmpDir},
			setup:   Options{Dir: otherDir},
			wantErr: sink.ErrAlreadyBound.Error(),
			check:   func(t *testing.T, st *State, dir string) { assert.Equal(t, dir, filepath.Dir(st.Path())) },
		},
		{
			name:  "Synchronous kept",
			state: StateOptions{Synchronous: true},
			during: func(t *testing.T, _ string, st *State) {
				assert.False(t, st.running.Load(), "Setup started the writer")
			},
		},
		{
			name:  "Synchronous given",
			setup: Options{Synchronous: true},
			during: func(t *testing.T, _ string, st *State) {
				assert.False(t, st.running.Load(), "Setup started the writer")
			},
		},
		{
			name:   "Synchronous in neither: Setup starts the writer",
			during: func(t *testing.T, _ string, st *State) { assert.True(t, st.running.Load()) },
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			defer slog.SetDefault(slog.Default())
			dir, other := t.TempDir(), t.TempDir()
			place := func(d string) string {
				switch d {
				case tmpDir:
					return dir
				case otherDir:
					return other
				}
				return d
			}
			so := tt.state
			so.Dir = place(so.Dir)
			if so.Destination == nil {
				so.Output = io.Discard
			}
			st, err := NewState(&so)
			require.NoError(t, err)
			o := tt.setup
			o.State, o.Dir = st, place(o.Dir)
			o.NoConsole = o.Console == nil
			lg, err := Setup(&o)
			if tt.wantErr != "" {
				assert.Nil(t, lg)
				require.ErrorContains(t, err, tt.wantErr)
				if tt.check != nil {
					tt.check(t, st, dir)
				}
				require.NoError(t, st.Close())
				return
			}
			require.NoError(t, err)
			if tt.during != nil {
				tt.during(t, tt.name, st)
			}
			require.NoError(t, lg.Close())
			if tt.check != nil {
				tt.check(t, st, dir)
			}
		})
	}
}

// writePast logs records of about 300 bytes until more than n bytes are
// logged.
func writePast(n int64) func(*testing.T, string, *State) {
	return func(*testing.T, string, *State) {
		pad := strings.Repeat("r", 250)
		for i := range n/250 + 1 {
			slog.Info("record", "i", i, "pad", pad)
		}
	}
}

// assertRotated checks whether the directory holds the first rotated file.
func assertRotated(want bool) func(*testing.T, *State, string) {
	return func(t *testing.T, _ *State, dir string) {
		rotated := filepath.Join(dir, fmt.Sprintf("host.%d.00000001.log", os.Getpid()))
		if want {
			assert.FileExists(t, rotated, "the State's rotation")
		} else {
			assert.NoFileExists(t, rotated, "Setup's rotation, 1 GiB")
		}
		assert.FileExists(t, filepath.Join(dir, fmt.Sprintf("host.%d.log", os.Getpid())))
	}
}

// fillQueue logs twice the sink's queue with the writer held by the
// State's gated destination until a call waits for room or drops its
// record, then opens the gate and waits for every call to return.
func fillQueue(gates map[string]chan struct{}) func(*testing.T, string, *State) {
	return func(_ *testing.T, name string, st *State) {
		const n = 2 * 4096
		done := make(chan struct{})
		go func() {
			defer close(done)
			for i := range n {
				slog.Info("record", "i", i)
			}
		}()
		for c := st.Counts(); c.Waited == 0 && c.Dropped == 0; c = st.Counts() {
			time.Sleep(time.Millisecond)
		}
		close(gates[name])
		<-done
	}
}

// droppedUnwaited checks that, under DropWhenFull, no call waited at the
// full queue and the records it could not take were dropped, counted.
func droppedUnwaited(t *testing.T, st *State, _ string) {
	c := st.Counts()
	assert.Zero(t, c.Waited, "no call waited: %+v", c)
	assert.NotZero(t, c.QueueFull, "records dropped at the full queue, counted: %+v", c)
}
