package sink

import (
	"bytes"
	"os"
	"regexp"
)

// runLine matches a [HOSTLOG_RUN] record as the sink writes it at the
// start of every file.
var runLine = regexp.MustCompile(`(?m)^\[mono_ns=\d+\]\[T0x0\]\[INFO\] host_log_run: \[HOSTLOG_RUN\] v=1 pid=\d+ run=[0-9a-f-]+ start_ns=\d+\n`)

// readLog is os.ReadFile without the run records the sink heads each
// file with, for tests about the rest of what a file holds
// (TestRunRecordHeadsEveryFile holds the sink to writing them).
func readLog(path string) ([]byte, error) {
	b, err := os.ReadFile(path)
	return withoutRuns(b), err
}

// withoutRuns returns b without its run records.
func withoutRuns(b []byte) []byte {
	if !bytes.Contains(b, []byte("[HOSTLOG_RUN]")) {
		return b
	}
	return runLine.ReplaceAll(b, nil)
}

// pruneAsRotated applies r's retention to s's directory as if s's run had
// rotated its file to each of names (oldest first): retention's MaxFiles
// counts only what the run itself rotated.
func pruneAsRotated(s *Sink, r Rotation, names ...string) {
	f := s.out.bound.Load()
	s.out.mu.Lock()
	defer s.out.mu.Unlock()
	for _, n := range names {
		f.rotated(n, &r)
	}
	f.prune(&r)
}
