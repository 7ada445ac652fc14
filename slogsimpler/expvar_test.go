package slogsimpler

import (
	"encoding/json"
	"expvar"
	"log/slog"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
)

// TestExpvarCounts: after Setup the expvar page shows "slogsimpler" with
// the state's counts, read live.
func TestExpvarCounts(t *testing.T) {
	logtest.KeepDefaults(t)
	st, err := NewState(nil) // not Default(): other tests hold it untouched
	require.NoError(t, err)
	lg, err := Setup(&Options{State: st, Dir: t.TempDir(), NoConsole: true})
	require.NoError(t, err)
	defer lg.Close()
	for i := range 50 {
		slog.Info("counted", "i", i)
	}
	require.NoError(t, lg.State.Flush(logtest.Within(time.Second)))
	rec := httptest.NewRecorder()
	expvar.Handler().ServeHTTP(rec, httptest.NewRequest("GET", "/debug/vars", nil))
	var page map[string]json.RawMessage
	require.NoError(t, json.Unmarshal(rec.Body.Bytes(), &page))
	require.Contains(t, page, "slogsimpler")
	var got Counts
	require.NoError(t, json.Unmarshal(page["slogsimpler"], &got))
	assert.Equal(t, lg.State.Counts(), got, "the page's counts are Counts()")
	assert.GreaterOrEqual(t, got.Written, uint64(50))
}
