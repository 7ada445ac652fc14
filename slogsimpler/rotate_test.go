package slogsimpler_test

import (
	"compress/gzip"
	"context"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"simpler.dev/log/internal/testkit/logtest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
	"simpler.dev/log/strace"
)

// TestRotatedSetReadsAsOneLog: a run under a size cap leaves only capped
// files, each starting with its [CLOCK_ANCHOR]; strace reads the directory
// as one log with every span, and the state's accounting matches what the
// files hold: logged = written + dropped. With Compress the rotated files
// are host.<pid>.<seq>.log.gz, and all of that holds of what they hold
// decompressed, read back through strace.ReadHost as before.
func TestRotatedSetReadsAsOneLog(t *testing.T) {
	for _, tt := range []struct {
		name     string
		compress bool
	}{
		{"plain", false},
		{"compressed", true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			defer slog.SetDefault(slog.Default())
			dir := t.TempDir()
			st, err := slogsimpler.NewState(nil)
			require.NoError(t, err)
			const maxSize = 256 << 10
			lg, err := slogsimpler.Setup(&slogsimpler.Options{Dir: dir, State: st, NoConsole: true, Level: levels.Timing,
				Backpressure: time.Minute, Rotation: sink.Rotation{MaxSize: maxSize, Compress: tt.compress}})
			require.NoError(t, err)
			const spans, records = 3000, 3000 // ~2 MB: ~8 files
			ctx, inv := spanattr.NewInvocation(context.Background(), 0x9f)
			for i := range spans {
				_, sp := spanattr.Start(ctx, "step", slog.Int("i", i), slog.String("pad", strings.Repeat("p", 200)))
				sp.End()
				slog.Warn("record", "i", i, "pad", strings.Repeat("w", 200))
			}
			inv.End()
			require.NoError(t, st.Shutdown(logtest.Within(time.Minute))) // time for every compression, on a busy machine too
			require.NoError(t, lg.Close())

			plain, err := filepath.Glob(filepath.Join(dir, "host.*.log"))
			require.NoError(t, err)
			gz, err := filepath.Glob(filepath.Join(dir, "host.*.log.gz"))
			require.NoError(t, err)
			names := append(plain, gz...)
			require.Greater(t, len(names), 4, "rotated: %v", names)
			if tt.compress {
				assert.Len(t, plain, 1, "the current file alone plain: %v", plain)
				assert.Len(t, gz, len(names)-1, "every rotated file compressed")
			} else {
				assert.Empty(t, gz)
			}
			lines := 0
			for _, n := range names {
				f, err := os.Open(n)
				require.NoError(t, err)
				var r io.Reader = f
				if strings.HasSuffix(n, ".gz") {
					zr, err := gzip.NewReader(f)
					require.NoError(t, err)
					r = zr
				}
				b, err := io.ReadAll(r)
				f.Close()
				require.NoError(t, err)
				assert.LessOrEqual(t, len(b), maxSize, n)
				rest := slogsimpler.AfterRun(t, string(b))
				first, _, _ := strings.Cut(rest, "\n")
				assert.Contains(t, first, "[CLOCK_ANCHOR] v=1 pid=", "%s starts with its anchor, after its run record", filepath.Base(n))
				lines += strings.Count(rest, "\n") // the run record is not counted written
			}
			h, err := strace.ReadHost(&strace.Parser{ReadOptions: strace.ReadOptions{KeepRecords: levels.Warn}}, dir, nil)
			require.NoError(t, err)
			p := h.Parser
			pid := int64(os.Getpid())
			anchors := 0
			for _, a := range p.Anchors {
				if int64(a.PID) == pid {
					anchors++
				}
			}
			assert.Equal(t, len(names), anchors, "one anchor per file")
			var offs []int64 // wall − mono of each of this process's anchors
			for _, a := range p.Anchors {
				if int64(a.PID) == pid {
					offs = append(offs, a.Wall-a.Mono)
				}
			}
			require.NotEmpty(t, offs)
			assert.LessOrEqual(t, slices.Max(offs)-slices.Min(offs), int64(time.Millisecond), "the files' anchors agree")
			got, warned := 0, 0
			for _, s := range p.Spans {
				if s.Name == "step" {
					got++
				}
			}
			for _, r := range p.Records {
				if r.Message == "record" {
					warned++
				}
			}
			c := st.Counts()
			assert.Zero(t, c.Dropped, "%+v", c)
			assert.Zero(t, c.CompressFailed, "%+v", c)
			assert.Equal(t, spans, got, "every span read back")
			assert.Equal(t, records, warned, "every record read back")
			assert.EqualValues(t, lines, c.Written, "the files hold what was counted written")
			assert.EqualValues(t, spans+records+len(names), c.Written, "spans, records and one anchor per file: %+v", c)
		})
	}
}

func TestRotationRefusedWhenBad(t *testing.T) {
	_, err := slogsimpler.NewState(&slogsimpler.StateOptions{Rotation: sink.Rotation{MaxSize: 10}})
	assert.ErrorContains(t, err, "below the minimum")
	st, _ := slogsimpler.NewState(nil)
	_, err = slogsimpler.Setup(&slogsimpler.Options{State: st, Dir: t.TempDir(), Rotation: sink.Rotation{MaxFiles: -1}})
	assert.ErrorContains(t, err, "negative")
	assert.Empty(t, st.Path(), "nothing bound after a refused option")
}
