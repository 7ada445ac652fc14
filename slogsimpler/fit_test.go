package slogsimpler

import (
	"bytes"
	"context"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/testkit/racedetect"
	"simpler.dev/log/levels"
)

// TestFittedNotCut is the case that asked for fitting (SPEC §2): a 1 KB
// query text no longer takes err and attempt with it past the bound.
func TestFittedNotCut(t *testing.T) {
	s, buf := newTestState(t, levels.Warn) // above TIMING: no anchor
	slog.New(s.Handler()).Error("query failed", "sql", strings.Repeat("x", 1024), "err", "deadlock detected", "attempt", 3)
	lines := bytes.SplitAfter(buf.Bytes(), []byte("\n"))
	require.Len(t, lines, 2) // the record, then nothing
	line := lines[0]
	assert.LessOrEqual(t, len(line), envelope.MaxRecord)
	assert.Contains(t, string(line), `"~ err="deadlock detected" attempt=3`+"\n")
	r, err := envelope.ParseRecord(line)
	require.NoError(t, err)
	assert.Equal(t, "query failed", r.Message)
	assert.Equal(t, []string{"sql"}, r.Cut)
	require.Len(t, r.Attrs, 3)
	assert.True(t, strings.HasPrefix(strings.Repeat("x", 1024), r.Attrs[0].Value.String()))
	assert.Equal(t, "err=deadlock detected", r.Attrs[1].String())
	assert.Equal(t, "attempt=3", r.Attrs[2].String())
}

// TestCountsFittedAndCut: Counts tells fitted records (every key kept)
// from records cut at the bound, and counts neither for a record that
// fits.
func TestCountsFittedAndCut(t *testing.T) {
	s, buf := newTestState(t, levels.Warn) // above TIMING: no anchor
	log := slog.New(s.Handler())
	huge := strings.Repeat("v", 2000)

	log.Warn("fits", "k", 1)
	log.Warn("value", "blob", huge, "n", 1)                                              // fitted
	log.With("pre", huge).Warn("pre-rendered")                                           // fitted, the handler's attributes
	log.Warn(huge)                                                                       // no attributes: cut
	s.Emit(levels.Warn, Source{Function: "dev"}, 0, 0, "dma", slog.String("dump", huge)) // fitted
	s.Emit(levels.Warn, Source{Function: "fwd"}, 0, 0, huge)                             // foreign text: cut
	many := make([]any, 0, 400)
	for i := range 200 {
		many = append(many, "key_with_a_long_name", i)
	}
	log.Warn("keys", many...) // the keys alone pass the bound: cut

	c := s.Counts()
	assert.EqualValues(t, 3, c.Fitted, "fitted")
	assert.EqualValues(t, 3, c.Cut, "cut")
	assert.Zero(t, c.Dropped, "shortened records are written, not lost")
	assert.EqualValues(t, 7, c.Written)

	var fitted, cut int
	for _, line := range bytes.SplitAfter(buf.Bytes(), []byte("\n")) {
		if len(line) == 0 {
			continue
		}
		require.LessOrEqual(t, len(line), envelope.MaxRecord)
		if len(line) == envelope.MaxRecord {
			assert.True(t, bytes.HasSuffix(line, []byte("~\n")))
			cut++
			continue
		}
		if r, err := envelope.ParseRecord(line); err == nil && len(r.Cut) > 0 {
			fitted++
		}
	}
	assert.Equal(t, 3, fitted, "records marked cut in the log")
	assert.Equal(t, 3, cut, "records cut at the bound in the log")
}

// TestFittedAllocs: fitting a record through the handler allocates
// nothing, as writing one that fits does not.
func TestFittedAllocs(t *testing.T) {
	racedetect.SkipAllocs(t)
	s, err := NewState(&StateOptions{Level: levels.Warn, Output: io.Discard})
	require.NoError(t, err)
	defer s.Close()
	log := slog.New(s.Handler()).With("svc", "api", "blob", strings.Repeat("b", 700))
	sql := strings.Repeat("x", 1024)
	ctx := context.Background()
	assert.Zero(t, testing.AllocsPerRun(200, func() {
		log.LogAttrs(ctx, levels.Error, "query failed", slog.String("sql", sql), slog.Int("attempt", 3))
	}))
	assert.Positive(t, s.Counts().Fitted)
}
