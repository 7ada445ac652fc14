package strace

import (
	"strconv"
	"strings"
)

// DecodeField reverses the %XX encoding of a name or attribute value. A
// '%' not followed by two hex digits is kept, and so is a final '~' (the
// mark of a truncated field).
func DecodeField(s string) string {
	i := strings.IndexByte(s, '%')
	if i < 0 {
		return s
	}
	b := make([]byte, 0, len(s))
	b = append(b, s[:i]...)
	for ; i < len(s); i++ {
		if s[i] == '%' && i+2 < len(s) && isHex(s[i+1]) && isHex(s[i+2]) {
			v, _ := strconv.ParseUint(s[i+1:i+3], 16, 8)
			b = append(b, byte(v))
			i += 2
			continue
		}
		b = append(b, s[i])
	}
	return string(b)
}

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
