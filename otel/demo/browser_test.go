package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/consumer/consumertest"
)

// measure opens every row of a trace's waterfall, as clicks would, and
// records where each row's bar is before and after, and whether the
// opened details lie below the row's summary: the page itself has no
// script; this one is the test's.
const measure = `<script>
const rect = e => { const r = e.getBoundingClientRect(); return [r.left, r.width, r.top, r.bottom]; };
const rows = [...document.querySelectorAll('#waterfall details')];
const before = rows.map(d => rect(d.querySelector('.bar')));
rows.forEach(d => d.open = true);
const after = rows.map(d => rect(d.querySelector('.bar')));
const below = rows.map(d => d.querySelector('.detail').getBoundingClientRect().top >= d.querySelector('summary').getBoundingClientRect().bottom - 0.5);
document.body.setAttribute('data-result', JSON.stringify({before, after, below}));
</script>`

// TestWaterfallInBrowser: in a real headless Chromium, a row opened (its
// span clicked for its attributes) keeps its bar where it was, at the
// width it had, and shows its details below it. The rows were flex
// boxes, so an opened row's details were laid out beside its summary,
// squeezing the bar's track: the waterfall was drawn wrong for that row.
func TestWaterfallInBrowser(t *testing.T) {
	bin := chromium(t)
	traces := &consumertest.TracesSink{}
	require.NoError(t, traces.ConsumeTraces(context.Background(), shaped(7, []edge{{1, 0}, {2, 1}, {3, 2}, {4, 1}})))
	srv := httptest.NewServer(viewer(traces, &consumertest.LogsSink{}, io.Discard))
	defer srv.Close()
	list := get(t, srv.URL+"/")
	link := regexp.MustCompile(`href="(/trace/[0-9a-f]+)"`).FindStringSubmatch(list)
	require.NotNil(t, link, "%s", list)
	page := strings.Replace(get(t, srv.URL+link[1]), "</body>", measure+"</body>", 1)
	file := filepath.Join(t.TempDir(), "trace.html")
	require.NoError(t, os.WriteFile(file, []byte(page), 0o600))

	cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
		"--user-data-dir="+t.TempDir(), "--window-size=1200,800", "--dump-dom", "file://"+file)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	require.NoError(t, cmd.Run(), errs.String())
	m := regexp.MustCompile(`data-result="([^"]*)"`).FindStringSubmatch(out.String())
	require.NotNil(t, m, "the script did not run: %s", errs.String())
	var got struct {
		Before, After [][4]float64
		Below         []bool
	}
	require.NoError(t, json.Unmarshal([]byte(strings.ReplaceAll(m[1], "&quot;", `"`)), &got))
	require.Len(t, got.Before, 4)
	for i := range got.Before {
		assert.InDelta(t, got.Before[i][0], got.After[i][0], 0.5, "row %d: the bar moved when the row opened", i)
		assert.InDelta(t, got.Before[i][1], got.After[i][1], 0.5, "row %d: the bar's width changed when the row opened", i)
		assert.True(t, got.Below[i], "row %d: its details are beside its summary, not below", i)
	}
}
