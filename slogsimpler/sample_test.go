package slogsimpler

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
	"simpler.dev/log/spanattr"
)

// TestSampling: zap's production sampling, first 100 of a message a tick
// and every 100th after: 10 000 identical INFO records leave 199, ten
// other INFO all ten, five ERROR all five, 300 spans all 300; the 9 801
// sampled out are counted and the log says so.
func TestSampling(t *testing.T) {
	logtest.KeepDefaults(t)
	dir := t.TempDir()
	st, err := NewState(nil) // its own counts
	require.NoError(t, err)
	lg, err := Setup(&Options{State: st, Dir: dir, NoConsole: true, Level: levels.Timing - 4, // INFO and TIMING
		Sampling: &Sampling{First: 100, Thereafter: 100, Tick: time.Minute}})
	require.NoError(t, err)
	for i := range 10000 {
		slog.Info("hot loop", "i", i)
	}
	for i := range 10 {
		slog.Info("other "+string(rune('a'+i)), "i", i)
	}
	for i := range 5 {
		slog.Error("failing", "i", i)
	}
	ctx := context.Background()
	for range 300 {
		_, sp := spanattr.Start(ctx, "step")
		sp.End()
	}
	require.NoError(t, lg.Close())
	c := lg.State.Counts()
	assert.EqualValues(t, 9801, c.Sampled)
	assert.Zero(t, c.Dropped, "%+v", c)

	files, _ := filepath.Glob(filepath.Join(dir, "host.*.log"))
	require.Len(t, files, 1)
	b, err := os.ReadFile(files[0])
	require.NoError(t, err)
	text := string(b)
	assert.Equal(t, 199, strings.Count(text, "] hot loop i="), "the first 100, then every 100th")
	for i := range 10 {
		assert.Contains(t, text, "] other "+string(rune('a'+i))+" i=")
	}
	assert.Equal(t, 5, strings.Count(text, "] failing i="), "ERROR is never sampled")
	assert.Equal(t, 300, strings.Count(text, " name=step "), "spans are never sampled")
	assert.Regexp(t, `\[WARN\] .*records sampled out sampled=9801 messages="\\"hot loop\\" x9801" sampled_total=9801`, text)
}

// TestSamplingRefused: a negative setting is refused before Setup changes
// anything (Sampling is Setup's: StateOptions has no such field).
func TestSamplingRefused(t *testing.T) {
	logtest.KeepDefaults(t)
	_, err := Setup(&Options{Sampling: &Sampling{First: -1}})
	require.ErrorContains(t, err, "Sampling")
}

// BenchmarkSampling is a kept INFO record with sampling on against off:
//
//	go test -run NONE -bench Sampling -benchmem ./slogsimpler
func BenchmarkSampling(b *testing.B) {
	for _, on := range []bool{false, true} {
		name := "off"
		if on {
			name = "on-kept"
		}
		b.Run(name, func(b *testing.B) {
			logtest.KeepDefaults(b)
			st, err := NewState(nil)
			if err != nil {
				b.Fatal(err)
			}
			o := &Options{State: st, Dir: b.TempDir(), NoConsole: true}
			if on {
				o.Sampling = &Sampling{First: 1 << 30, Tick: time.Hour}
			}
			lg, err := Setup(o)
			if err != nil {
				b.Fatal(err)
			}
			defer lg.Close()
			b.ReportAllocs()
			for b.Loop() {
				slog.LogAttrs(context.Background(), levels.Info, "request done", slog.Int("status", 200), slog.String("path", "/x"))
			}
		})
	}
}
