package machine

import "simpler.dev/log/envelope"

// markers are envelope's machine markers, each without its opening
// bracket, which the scan has already seen.
var markers = [...]string{envelope.MarkerSpan[1:], envelope.MarkerDrops[1:], envelope.MarkerAnchor[1:], envelope.MarkerOp[1:], envelope.MarkerHeader[1:], envelope.MarkerRun[1:]}

// ContainsMarker reports whether s holds any machine marker with its
// opening bracket ([STRACE], [HOSTLOG_DROPS], [CLOCK_ANCHOR], [OP],
// [HOSTLOG_RUN] or [mono_ns=): text that envelope writes neutralised unless it is a whole
// machine record in machine position (envelope.ParseMachine).
func ContainsMarker(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '[' && startsMarker(s[i+1:]) {
			return true
		}
	}
	return false
}

// startsMarker reports whether s (the text after a '[') begins a marker.
func startsMarker(s string) bool {
	for _, m := range markers {
		if len(s) >= len(m) && s[:len(m)] == m {
			return true
		}
	}
	return false
}
