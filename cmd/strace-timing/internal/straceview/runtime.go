package straceview

import (
	"fmt"

	"simpler.dev/log/strace"
)

// SimplerRuntime reports whether a log, given as the spans of each of its
// hosts (one slice without --hosts), holds spans of simpler's runtime: the
// rule strace-timing reads a log by. It does when any span is of one of
// the runtime's families ([Family] "chip", "core" or "node"): its name
// leads with chip, core, node, network1, network2 or network3, the level
// words of simpler's worker ladder (chip.run and its stages,
// chip.prewarm.build, node.submit, network1.dispatch, …). A log without
// any span counts as simpler's too, so that it prints "No [STRACE]
// markers found." as simpler's reader does.
//
// Any span of those families, not chip.run alone, although chip.run is
// what the reference's tables, tree and rounds table key on: an L3 or L4
// process's log holds only the scheduler family (node.*, network*.*),
// which the reference's swimlane lays out and names, and a chip child
// that only prewarmed holds chip.prewarm.build. Both are simpler's logs,
// and on simpler's logs every view must stay the reference's, byte for
// byte. The external family (ext.<producer>.*) does not count: simpler
// reserves that word for producers outside it, and any program may write
// it (spanattr.ExtName).
//
// A log of other spans only, a Go service's http.request and db.query,
// is any service's log: strace-timing prints the --stats report when no
// view is asked for, notes that --tree and --rounds-table assume
// simpler's runtime, and names processes by pid (the program's name is
// not in the log) rather than as simpler's processes and callables.
func SimplerRuntime(hosts ...[]strace.Span) bool {
	empty := true
	for _, spans := range hosts {
		for i := range spans {
			empty = false
			switch Family(spans[i].Name) {
			case "chip", "core", "node":
				return true
			}
		}
	}
	return empty
}

// serviceProcessLabel names a process of a log without simpler's runtime
// spans, and a process of any log on the HTML timeline: after simpler's
// families when it emitted a span of the runtime's or only external
// producers' spans (ext.*, named after their producer, as
// [ProcessLabel] names them), otherwise by its pid alone, "process
// (pid=N)".
func serviceProcessLabel(pid int64, spans []*strace.Span) string {
	onlyExternal := len(spans) > 0
	for _, s := range spans {
		switch Family(s.Name) {
		case "chip", "core", "node":
			return ProcessLabel(pid, spans)
		case "external":
		default:
			onlyExternal = false
		}
	}
	if onlyExternal {
		return ProcessLabel(pid, spans)
	}
	return pidName(pid, runOf(spans))
}

// pidName names a process by its pid (and run) alone. The "(pid=N)" is
// what --hosts rewrites to the host and original pid ([Aligned.Relabel]).
func pidName(pid int64, r *strace.Run) string { return fmt.Sprintf("process (%s)", pidTag(pid, r)) }

// runOf is the run of a process's spans: the first's (all have it).
func runOf(spans []*strace.Span) *strace.Run {
	if len(spans) == 0 {
		return nil
	}
	return spans[0].Run
}
