package straceview

import (
	"cmp"
	"fmt"

	"simpler.dev/log/strace"
)

// A proc is a process as the views key it: a pid and its run (see
// strace.Run: two runs with one pid, a restart or two containers' pid 1,
// are two processes). Run is nil in AlignHosts' spans, whose pids it made
// unique per host and run.
type proc struct {
	pid int64
	run *strace.Run
}

func procOf(s *strace.Span) proc { return proc{s.PID, s.Run} }

// compareProcs orders processes by pid, then a pid's runs by start.
func compareProcs(a, b proc) int {
	return cmp.Or(cmp.Compare(a.pid, b.pid), cmp.Compare(runN(a.run), runN(b.run)))
}

func runN(r *strace.Run) int {
	if r == nil {
		return 0
	}
	return r.N
}

// pidTag is what a view's names say of a process in "(pid=…)": "pid=1",
// or for a pid with more than one run, "pid=1, run 2 of 3, started
// 13:02:11" (the run's own pid: SplitRuns gave its spans a lane's). A
// one-run log's names are as they were.
func pidTag(pid int64, r *strace.Run) string {
	if s := runText(r); s != "" {
		return fmt.Sprintf("pid=%d, %s", r.PID, s)
	}
	return fmt.Sprintf("pid=%d", pid)
}

// realPID is s's process's pid, whatever lane SplitRuns gave it.
func realPID(s *strace.Span) int64 {
	if s.Run != nil {
		return s.Run.PID
	}
	return s.PID
}

// SplitRuns gives the spans of every run but the first of a pid that had
// several (see strace.Run) a pid of its own (strace.LanePID), so that
// every view keyed by pid (a Chrome trace's process lanes, the swimlane,
// the HTML timeline) shows two runs as two processes. The views name
// each by its real pid and run ("pid=1, run 2 of 3, started 13:02:11");
// a log with one run a pid is left as it is.
func SplitRuns(spans []strace.Span) {
	for i := range spans {
		spans[i].PID = strace.LanePID(spans[i].PID, spans[i].Run)
	}
}

// runText is r's place among its pid's runs, "run 2 of 3, started
// 13:02:11", or "" for a pid's only run.
func runText(r *strace.Run) string {
	s := r.Suffix()
	if s == "" {
		return ""
	}
	return s[2 : len(s)-1] // " (…)"
}
