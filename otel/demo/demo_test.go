package main

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// chromium finds a headless-capable Chromium; CI (CI=true) installs one
// (.ci/run), so there a missing browser is a failure, elsewhere a skip.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("no Chromium in CI: .ci/run installs Debian's chromium")
	}
	t.Skip("no Chromium here (apt-get install chromium)")
	return ""
}

func get(t *testing.T, url string) string {
	t.Helper()
	resp, err := http.Get(url)
	require.NoError(t, err)
	defer resp.Body.Close()
	require.Equal(t, http.StatusOK, resp.StatusCode, url)
	b, err := io.ReadAll(resp.Body)
	require.NoError(t, err)
	return string(b)
}

// TestDemo runs the demo as `make otel-demo` does, on free ports, and
// while it serves: the list holds the quickstart's traces, its log is
// where it said, and a headless Chromium loads a trace's page and finds
// the quickstart's spans drawn, with the failed job in red and its log
// records beside it.
func TestDemo(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "logs")
	var out bytes.Buffer
	checked := false
	err := run(context.Background(), config{otlp: "127.0.0.1:0", ui: "127.0.0.1:0", dir: dir}, &out, func(url string) {
		checked = true
		list := get(t, url)
		assert.Equal(t, 6, strings.Count(list, `<a href="/trace/`), "five invocations and the cleanup span outside them")
		ids := regexp.MustCompile(`<a href="/trace/([0-9a-f]{32})">chip.run|<a href="/trace/([0-9a-f]{32})">invocation`).FindAllStringSubmatch(list, -1)
		require.NotEmpty(t, ids)
		// The failed job's trace: the one with an error.
		failed := regexp.MustCompile(`<a href="/trace/([0-9a-f]{32})">[^<]+</a></td><td>quickstart</td><td>[^<]+</td><td>[^<]+</td><td>\d+</td><td><span class="err">1</span>`).FindStringSubmatch(list)
		require.Len(t, failed, 2, "a trace with one error: %s", list)
		page := url + "trace/" + failed[1]

		bin := chromium(t)
		cmd := exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
			"--user-data-dir="+t.TempDir(), "--dump-dom", page)
		dom, err := cmd.Output()
		require.NoError(t, err)
		for _, name := range []string{"chip.run", "chip.run.bind", "chip.run.bind.args", "chip.run.bind.arena_build"} {
			assert.Contains(t, string(dom), `data-span="`+name+`"`, "span %s drawn", name)
		}
		assert.Regexp(t, `<span class="bar error"[^>]*title="chip.run `, string(dom), "the failed span in red")
		assert.Contains(t, string(dom), "nothing to do: job has no steps", "its log record, with its attributes")
		shot := filepath.Join(t.TempDir(), "shot.png")
		require.NoError(t, exec.Command(bin, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run",
			"--user-data-dir="+t.TempDir(), "--screenshot="+shot, "--window-size=1280,600", page).Run())
		fi, err := os.Stat(shot)
		require.NoError(t, err)
		assert.Greater(t, fi.Size(), int64(5000), "a screenshot with something drawn")
	})
	require.NoError(t, err, out.String())
	require.True(t, checked)
	assert.Contains(t, out.String(), "Received 48 spans and 19 log records")
	assert.Contains(t, out.String(), "its log goes to "+dir)
	logs, _ := filepath.Glob(filepath.Join(dir, "host.*.log"))
	assert.Len(t, logs, 1, "the run's log is kept where the demo said")
}
