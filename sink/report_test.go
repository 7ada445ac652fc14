package sink

import (
	"io"
	"time"

	"simpler.dev/log/envelope"
)

// testReport renders the [HOSTLOG_DROPS] record a State would give the
// sink as its Options.Report, so the sink's tests read the reports they
// always have.
func testReport(dst []byte, c Counts, fresh uint64) []byte {
	d := envelope.Drops{PID: 4711, New: fresh, Total: c.Dropped, QueueFull: c.QueueFull,
		ClaimExhausted: c.ClaimExhausted, OutputFailed: c.OutputFailed, NotAdmitted: c.NotAdmitted}
	var l envelope.Line
	l.Drops(envelope.Mono(time.Time{}), 1, &d)
	return append(dst, l.Finish()...)
}

// dest is Writer(w) for a private writer, else Pipe(w).
func dest(w io.Writer, private bool) Destination {
	if private {
		return Writer(w)
	}
	return Pipe(w)
}
