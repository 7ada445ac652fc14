package slogsimpler_test

import (
	"context"
	"log/slog"
	"sync"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// TestCaptureAcrossSetups: each test of a process can Setup with a State
// of its own and see its own records, typed; concurrent writers lose
// nothing; what is not a record is left out.
func TestCaptureAcrossSetups(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	for _, name := range []string{"first", "second", "third"} {
		t.Run(name, func(t *testing.T) {
			var c slogsimpler.Capture
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Output: &c})
			require.NoError(t, err)
			lg, err := slogsimpler.Setup(&slogsimpler.Options{State: st, Level: levels.Warn})
			require.NoError(t, err)
			var wg sync.WaitGroup
			for g := range 8 {
				wg.Go(func() {
					for range 100 {
						slog.Warn("from "+name, "g", g)
					}
				})
			}
			wg.Wait()
			slog.Log(context.Background(), levels.Debug, "below the threshold")
			require.NoError(t, lg.Close())
			recs := c.Records()
			require.Len(t, recs, 800, "only this test's records, all of them")
			for _, r := range recs {
				assert.Equal(t, levels.Warn, r.Level)
				assert.Equal(t, "from "+name, r.Message)
				require.Len(t, r.Attrs, 1)
				assert.Equal(t, "g", r.Attrs[0].Key)
				assert.Equal(t, slog.KindInt64, r.Attrs[0].Value.Kind())
				assert.NotZero(t, r.Line)
			}
		})
	}
	var c slogsimpler.Capture
	_, _ = c.Write([]byte("not a record\n[mono_ns=1][T0x1][WARN] f: ok\n~\n"))
	recs := c.Records()
	require.Len(t, recs, 1)
	assert.Equal(t, "ok", recs[0].Message)
}
