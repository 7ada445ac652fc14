package strace

import (
	"strconv"
	"strings"

	"simpler.dev/log/envelope"
)

// DecodeField reverses the %XX encoding of a name or attribute value. A
// '%' not followed by two hex digits is kept, and so is a final '~' (the
// mark of a truncated field).
func DecodeField(s string) string { return envelope.DecodeField(s) }

// ParseAttrs splits a span's attributes into key/value pairs: tokens
// separated by white space, each key=value (tokens without '=' are
// skipped). Values that are integers become int64; the others are decoded
// strings.
func ParseAttrs(attrs string) map[string]any {
	m := map[string]any{}
	for _, tok := range strings.Fields(attrs) {
		k, v, ok := strings.Cut(tok, "=")
		if !ok {
			continue
		}
		if isInt(v) {
			if n, err := strconv.ParseInt(v, 10, 64); err == nil {
				m[k] = n
				continue
			}
		}
		m[k] = DecodeField(v)
	}
	return m
}

// isInt matches -?\d+.
func isInt(s string) bool {
	s = strings.TrimPrefix(s, "-")
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}
