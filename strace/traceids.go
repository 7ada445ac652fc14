package strace

import (
	"encoding/hex"
	"strings"
)

// The ids a record logged in a tree of spans that joined a caller's trace
// carries as its last two attributes (SPEC §13): trace_id=<32 hex>
// span_id=<16 hex>, never cut.
const (
	traceIDKey = "trace_id"
	spanIDKey  = "span_id"
	// traceIDsTail is the length of " trace_id=<32> span_id=<16>".
	traceIDsTail = 1 + len(traceIDKey) + 1 + 32 + 1 + len(spanIDKey) + 1 + 16
)

// TraceIDs returns the trace and span ids the record carries as its last
// two attributes, trace_id= and span_id= (SPEC §13, "Traces that cross
// processes": it was logged in a tree of spans that joined a caller's
// trace), and whether it carries both, well formed. It reads the end of
// the line only, not the record.
func (l *RecordLine) TraceIDs() (traceID [16]byte, spanID [8]byte, ok bool) {
	s := strings.TrimRight(l.text, "\r")
	if len(s) < traceIDsTail {
		return traceID, spanID, false
	}
	tail := s[len(s)-traceIDsTail:]
	const tk, sk = " " + traceIDKey + "=", " " + spanIDKey + "="
	if !strings.HasPrefix(tail, tk) || tail[len(tk)+32:len(tk)+32+len(sk)] != sk {
		return traceID, spanID, false
	}
	return decodeIDs(tail[len(tk):len(tk)+32], tail[len(tk)+32+len(sk):])
}

func decodeIDs(t, s string) (traceID [16]byte, spanID [8]byte, ok bool) {
	if len(t) != 32 || len(s) != 16 || !lowerHex(t) || !lowerHex(s) {
		return traceID, spanID, false
	}
	_, _ = hex.Decode(traceID[:], []byte(t))
	_, _ = hex.Decode(spanID[:], []byte(s))
	return traceID, spanID, traceID != [16]byte{} && spanID != [8]byte{}
}

func lowerHex(s string) bool {
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
