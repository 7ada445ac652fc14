package envelope

import "time"

// Machine records are written by this module itself, never from user text.
// Each is a complete envelope record with a fixed function name and no
// source position.

// Function names of the machine records, as simpler writes them.
const (
	FuncAnchor = "clock_anchor"
	FuncDrops  = "host_log_drops"
	FuncSpan   = "emit_host_span"
)

// Anchor renders the [CLOCK_ANCHOR] record for process pid, read at t (on
// both clocks at once: t's monotonic reading and its wall-clock value):
//
//	[mono_ns=M][T0x..][TIMING] clock_anchor: [CLOCK_ANCHOR] v=1 pid=P mono_ns=M wall_ns=W
func (l *Line) Anchor(pid int, gid int64, t time.Time) {
	mono := Mono(t)
	l.HeaderName(mono, gid, "TIMING")
	l.Func(FuncAnchor)
	l.raw("[CLOCK_ANCHOR] v=1 pid=")
	l.int64(int64(pid))
	l.raw(" mono_ns=")
	l.int64(mono)
	l.raw(" wall_ns=")
	l.int64(t.UnixNano())
}

// DropCounts are the figures of a [HOSTLOG_DROPS] record.
type DropCounts struct {
	New, Total                                           uint64
	QueueFull, ClaimExhausted, OutputFailed, NotAdmitted uint64
}

// Drops renders the drop report at ERROR:
//
//	[mono_ns=M][T0x..][ERROR] host_log_drops: [HOSTLOG_DROPS] v=1 pid=1234 new=3 total=5 queue_full=5 claim_exhausted=0 output_failed=0 not_admitted=0
func (l *Line) Drops(pid int, gid int64, mono int64, d DropCounts) {
	l.HeaderName(mono, gid, "ERROR")
	l.Func(FuncDrops)
	l.raw("[HOSTLOG_DROPS] v=1 pid=")
	l.int64(int64(pid))
	for _, f := range [...]struct {
		k string
		v uint64
	}{
		{" new=", d.New}, {" total=", d.Total}, {" queue_full=", d.QueueFull},
		{" claim_exhausted=", d.ClaimExhausted}, {" output_failed=", d.OutputFailed},
		{" not_admitted=", d.NotAdmitted},
	} {
		l.raw(f.k)
		l.uint64(f.v)
	}
}
