package logtest

import "fmt"

// AnchorRecord is a whole [CLOCK_ANCHOR] record for pid, as a state writes
// it: monotonic mono maps to wall-clock wall.
func AnchorRecord(pid, mono, wall int64) string {
	return fmt.Sprintf("[mono_ns=%d][T0x%d][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=%d mono_ns=%d wall_ns=%d\n", mono, pid, pid, mono, wall)
}

// SpanRecord is a bare [STRACE] record with hid "abc" (the shape of
// simpler's tests' _span_record), newline included.
func SpanRecord(pid, tid int64, inv uint64, name string, ts, dur int64, attrs string, depth int) string {
	return fmt.Sprintf("[STRACE] v=1 pid=%d tid=%d inv=%d hid=abc depth=%d name=%s ts=%d dur=%d %s\n", pid, tid, inv, depth, name, ts, dur, attrs)
}
