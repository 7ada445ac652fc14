package slogsimpler_test

import (
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// lazy is a LogValuer: its value is resolved before it is kept.
type lazy struct{}

func (lazy) LogValue() slog.Value { return slog.IntValue(9) }

// TestCaptureGivesBackLoggedKinds: Records gives each attribute back with
// the kind it was logged with, not one guessed from its text: the string
// "42" is a string, 42 an int, "true" a string (before issue 57 Capture
// read them all from the line and said Int64 and Bool). Groups and the
// handler's own attributes come with the keys the line has, an error as
// the error, a LogValuer resolved; synchronous and asynchronous states
// alike, records logged from several goroutines in the same nanosecond
// included. A value shortened to fit the record's bound keeps the line's
// text.
func TestCaptureGivesBackLoggedKinds(t *testing.T) {
	errBoom := errors.New("boom")
	for _, async := range []bool{false, true} {
		name := "sync"
		if async {
			name = "async"
		}
		t.Run(name, func(t *testing.T) {
			var c slogsimpler.Capture
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Output: &c, Level: levels.Info})
			require.NoError(t, err)
			if async {
				require.NoError(t, st.Start())
			}
			lg := slog.New(st.Handler()).With("svc", "api", "port", 8080).WithGroup("req")
			lg.Info("kinds",
				"s42", "42", "n42", 42, "strue", "true", "btrue", true,
				"f", 2.5, "d", 1500*time.Millisecond, "err", errBoom, "lazy", lazy{},
				slog.Group("g", "u", uint64(7), "s", "x"))
			long := strings.Repeat("v", 600)
			lg.Info("cut", "n", 1, "long", long)
			require.NoError(t, st.Flush(t.Context()))
			require.NoError(t, st.Close())

			recs := c.Records()
			require.Len(t, recs, 2)
			got := map[string]slog.Value{}
			for _, a := range recs[0].Attrs {
				got[a.Key] = a.Value
			}
			for _, tc := range []struct {
				key  string
				kind slog.Kind
				want any
			}{
				{"svc", slog.KindString, "api"},
				{"port", slog.KindInt64, int64(8080)},
				{"req.s42", slog.KindString, "42"},
				{"req.n42", slog.KindInt64, int64(42)},
				{"req.strue", slog.KindString, "true"},
				{"req.btrue", slog.KindBool, true},
				{"req.f", slog.KindFloat64, 2.5},
				{"req.d", slog.KindDuration, 1500 * time.Millisecond},
				{"req.err", slog.KindAny, errBoom},
				{"req.lazy", slog.KindInt64, int64(9)},
				{"req.g.u", slog.KindUint64, uint64(7)},
				{"req.g.s", slog.KindString, "x"},
			} {
				v, ok := got[tc.key]
				if assert.True(t, ok, "%s: not in %v", tc.key, recs[0].Attrs) {
					assert.Equal(t, tc.kind, v.Kind(), tc.key)
					assert.Equal(t, tc.want, v.Any(), tc.key)
				}
			}
			cut := recs[1].Attrs
			require.Len(t, cut, 4)
			assert.Equal(t, slog.KindInt64, cut[2].Value.Kind(), "n, logged as an int")
			assert.Equal(t, []string{"req.long"}, recs[1].Cut)
			assert.Less(t, len(cut[3].Value.String()), len(long), "the long value as written, shortened to fit the bound")
		})
	}
	t.Run("many goroutines", func(t *testing.T) {
		var c slogsimpler.Capture
		st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Output: &c, Level: levels.Info})
		require.NoError(t, err)
		require.NoError(t, st.Start())
		lg := slog.New(st.Handler())
		now := time.Now() // every record at the same time: only the goroutine tells them apart
		done := make(chan struct{})
		for g := range 8 {
			go func() {
				defer func() { done <- struct{}{} }()
				for i := range 100 {
					r := slog.NewRecord(now, slog.LevelInfo, "r", 0)
					if i%2 == 0 {
						r.AddAttrs(slog.String("v", "1"), slog.Int("g", g))
					} else {
						r.AddAttrs(slog.Int("v", 1), slog.Int("g", g))
					}
					_ = lg.Handler().Handle(t.Context(), r)
				}
			}()
		}
		for range 8 {
			<-done
		}
		require.NoError(t, st.Close())
		recs := c.Records()
		require.Len(t, recs, 800)
		strs := 0
		for _, r := range recs {
			require.Len(t, r.Attrs, 2)
			if r.Attrs[0].Value.Kind() == slog.KindString {
				strs++
			} else {
				assert.Equal(t, slog.KindInt64, r.Attrs[0].Value.Kind())
			}
			assert.Equal(t, slog.KindInt64, r.Attrs[1].Value.Kind())
		}
		assert.Equal(t, 400, strs, "each as logged")
	})
}
