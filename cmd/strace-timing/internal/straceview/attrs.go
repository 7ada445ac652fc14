package straceview

import (
	"strconv"
	"strings"

	"simpler.dev/log/envelope"
)

// ParseAttrs splits a span's attributes into key/value pairs as simpler's
// reader does: tokens separated by white space, each key=value (tokens
// without '=' are skipped), keys as they are. Values that are integers
// become int64; the others are decoded strings. (envelope.EachSpanAttr
// reads the field as this module writes it, keys decoded too.)
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
		m[k] = envelope.DecodeField(v)
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
