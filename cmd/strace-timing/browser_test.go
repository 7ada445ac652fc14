package main

import (
	"bytes"
	"image/png"
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

// runChromium runs a headless Chromium on page with args; it returns
// stdout and stderr.
func runChromium(t *testing.T, bin, page string, args ...string) (string, string) {
	t.Helper()
	all := append([]string{"--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
		"--no-first-run", "--user-data-dir=" + t.TempDir(), "--enable-logging=stderr", "--v=0"}, args...)
	cmd := exec.Command(bin, append(all, "file://"+page)...)
	var out, errs bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errs
	require.NoError(t, cmd.Run(), errs.String())
	return out.String(), errs.String()
}

// TestHTMLInBrowser loads the timeline of a log this library wrote in a
// real headless Chromium: the script runs to its end without an error,
// every span and lane is in the DOM, and a screenshot is not blank.
func TestHTMLInBrowser(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	page := filepath.Join(dir, "t.html")
	code, _, errs := runCmd(t, "", writtenLog(t), "--html", page)
	require.Equal(t, 0, code, errs)
	want := strings.Count(string(mustRead(t, page)), `<rect class="span"`)
	require.Greater(t, want, 50)

	dom, logs := runChromium(t, bin, page, "--dump-dom")
	assert.Regexp(t, `<body[^>]*data-ready="1"`, dom, "the page's script did not finish")
	assert.Equal(t, want, strings.Count(dom, `<rect class="span"`), "spans in the DOM")
	assert.Equal(t, 1, strings.Count(dom, `<rect class="lane"`), "one lane: one process, one goroutine")
	assert.NotRegexp(t, regexp.MustCompile(`(?i)uncaught|CONSOLE\\(\\d+\\)\\] "[^"]*error`), logs, "console errors")

	shot := filepath.Join(dir, "shot.png")
	runChromium(t, bin, page, "--screenshot="+shot, "--window-size=1700,700", "--hide-scrollbars")
	f, err := os.Open(shot)
	require.NoError(t, err)
	defer f.Close()
	img, err := png.Decode(f)
	require.NoError(t, err)
	colors := map[uint32]bool{}
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y += 3 {
		for x := b.Min.X; x < b.Max.X; x += 3 {
			r, g, bl, _ := img.At(x, y).RGBA()
			colors[r>>8<<16|g>>8<<8|bl>>8] = true
		}
	}
	assert.Greater(t, len(colors), 8, "the screenshot is blank or nearly so")
}
