package main

import (
	"bufio"
	"bytes"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
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

// TestHTMLInBrowser loads timelines in a real headless Chromium: the
// script runs to its end without an error, decodes every span and draws
// them, and a screenshot is not blank. One page is of a log this library
// wrote, one of 10^5 spans.
func TestHTMLInBrowser(t *testing.T) {
	bin := chromium(t)
	dir := t.TempDir()
	big := filepath.Join(dir, "big.log")
	f, err := os.Create(big)
	require.NoError(t, err)
	w := bufio.NewWriter(f)
	for i := range 100_000 { // 100 goroutines in turn, 1000 spans each, two deep
		fmt.Fprintf(w, "[mono_ns=%d][T0x1][TIMING] emit_host_span: [STRACE] v=1 pid=7 tid=%d inv=0 hid=0 depth=%d name=svc.step%d ts=%d dur=%d k=%d\n",
			i, 100+i/1000, i%2, i%7, i*1000+(i%2)*100, 900-(i%2)*500, i)
	}
	require.NoError(t, w.Flush())
	require.NoError(t, f.Close())
	for _, tc := range []struct {
		name, log string
		spans     int
	}{
		{"written", writtenLog(t), -1},
		{"1e5 spans", big, 100_000},
	} {
		t.Run(tc.name, func(t *testing.T) {
			page := filepath.Join(dir, tc.name+".html")
			code, _, errs := runCmd(t, "", tc.log, "--html", page)
			require.Equal(t, 0, code, errs)
			dom, logs := runChromium(t, bin, page+"#selftest", "--dump-dom")
			assert.Regexp(t, `<body[^>]*data-ready="1"`, dom, "the page's script did not finish")
			assert.NotRegexp(t, regexp.MustCompile(`(?i)uncaught|CONSOLE\(\d+\)\] "[^"]*error`), logs, "console errors")
			spans := regexp.MustCompile(`data-spans="(\d+)"`).FindStringSubmatch(dom)
			drawn := regexp.MustCompile(`data-drawn="(\d+)"`).FindStringSubmatch(dom)
			require.Len(t, spans, 2)
			require.Len(t, drawn, 2)
			if tc.spans > 0 {
				assert.Equal(t, strconv.Itoa(tc.spans), spans[1], "spans decoded")
			}
			n, _ := strconv.Atoi(drawn[1])
			assert.Positive(t, n, "marks drawn")
			assert.Contains(t, dom, `data-selftest="search next hit details zoom fold ok"`, "the controls, each tried once")

			shot := filepath.Join(dir, tc.name+".png")
			runChromium(t, bin, page, "--screenshot="+shot, "--window-size=1280,700", "--hide-scrollbars")
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
		})
	}
}

// TestHeldViewsAskForAWindow: past the spans a view that holds every
// span takes (a timeline page, a swimlane, hosts on one clock), the run
// reads the log once to count them, holds none, writes nothing and says
// how to select fewer; a selection under the bound draws as ever.
func TestHeldViewsAskForAWindow(t *testing.T) {
	for _, tc := range []struct {
		flag  string
		bound *int
		args  func(out string) []string
		wrote string
	}{
		{"--html", &htmlMaxSpans, func(out string) []string { return []string{fixture, "--html", out} }, "Wrote HTML timeline: "},
		{"--swimlane", &swimlaneMaxSpans, func(out string) []string { return []string{fixture, "--swimlane", out} }, "Wrote host swimlane: "},
		{"--hosts", &hostsMaxSpans, func(out string) []string { return []string{"--hosts", fixture, "--trace-out", out} }, "Wrote Chrome trace: "},
	} {
		t.Run(tc.flag, func(t *testing.T) {
			old := *tc.bound
			*tc.bound = 5
			t.Cleanup(func() { *tc.bound = old })
			out := filepath.Join(t.TempDir(), "view")
			code, _, errs := runCmd(t, "", tc.args(out)...)
			assert.Equal(t, 1, code)
			assert.Contains(t, errs, "strace-timing: "+tc.flag+": the log holds 8 spans, past the 5 ")
			assert.Contains(t, errs, "select a window (--since, --until), a process (--pid) or a run (--run)")
			assert.NoFileExists(t, out)

			code, _, errs = runCmd(t, "", append(tc.args(out), "--pid", "100", "--pid", "200")...)
			assert.Equal(t, 1, code)
			assert.Contains(t, errs, "strace-timing: "+tc.flag+": the selection keeps 8 spans (of 8), past the 5")

			*tc.bound = 8
			code, stdout, errs := runCmd(t, "", tc.args(out)...)
			require.Equal(t, 0, code, errs)
			assert.Contains(t, stdout, tc.wrote+out)
			assert.FileExists(t, out)
		})
	}
}
