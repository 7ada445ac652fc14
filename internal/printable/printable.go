package printable

import (
	"strconv"
	"unicode"
	"unicode/utf8"
)

// Escape returns s as a terminal may print it: control bytes (ESC, so
// every escape sequence, included), DEL, C1 controls, bidi controls,
// U+2028/U+2029 and every other non-printing rune as Go escapes (\x1b,
// \n, \u202e), and invalid UTF-8 as \xNN; printable text, non-ASCII
// included, stays as it is. The result is valid UTF-8 of printable runes
// only, so a span name decoded from %XX can neither move the cursor,
// retitle the window nor reorder what follows it. A backslash is left
// alone: the text is for a person, not to be read back.
func Escape(s string) string {
	i := 0
	for i < len(s) && s[i] >= 0x20 && s[i] < 0x7f {
		i++
	}
	if i == len(s) {
		return s // the common case: printable ASCII, no copy
	}
	b := make([]byte, 0, len(s)+16)
	return string(appendEscaped(append(b, s[:i]...), s[i:]))
}

// Append appends s to b escaped as Escape does, allocating only when b
// must grow.
func Append(b []byte, s string) []byte { return appendEscaped(b, s) }

func appendEscaped(b []byte, s string) []byte {
	i := 0
	for i < len(s) {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			b = append(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			const hex = "0123456789abcdef"
			b = append(b, '\\', 'x', hex[c>>4], hex[c&0xf])
		case c < utf8.RuneSelf || !unicode.IsPrint(r):
			q := strconv.QuoteRune(r) // 'x' with the escape inside
			b = append(b, q[1:len(q)-1]...)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return b
}
