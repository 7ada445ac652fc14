package envelope

import (
	"unicode"
	"unicode/utf8"
)

// maxField bounds the function and the file field of a record, in bytes
// as written. A longer field is cut at the last whole unit that leaves
// room for a final '~' (a unit is a byte, a rune, or a whole escape), so a
// field never ends inside an escape or a rune.
const maxField = 128

// The function and file fields come from callers as often as from the
// runtime (State.Emit, a device's function name, a forwarded line), so
// they are user text: written through the same escaping as a message
// (control bytes, C1, bidi controls, U+2028/9 and invalid UTF-8 as Go
// escapes; a machine marker's '[' as %5B), bounded by maxField, never
// empty. Each field also keeps the bytes that would end it early out:
//
//   - function: ':' and white space become '_', so the first ": " of the
//     record is always the separator after the function;
//   - file: '[', ']', ':' stays (readers split at the last ':'), and white
//     space becomes '_', so "[file:line] " always closes where it should.
type fieldKind uint8

const (
	funcField fieldKind = iota
	fileField
)

// fieldSafe[k][c] is true for bytes field k carries unchanged.
var fieldSafe = func() (t [2][256]bool) {
	for c := 0x21; c < 0x7f; c++ {
		t[funcField][c] = c != ':' && c != '['
		t[fileField][c] = c != '[' && c != ']'
	}
	return
}()

// appendField appends s encoded as field k, at most limit bytes (maxField
// for every field a record prints).
func appendField(b []byte, s string, k fieldKind, limit int) []byte {
	start := len(b)
	keep := start // end of the last unit that leaves room for '~'
	safe := &fieldSafe[k]
	for i := 0; i < len(s); {
		var u [10]byte
		unit := u[:0]
		c := s[i]
		size := 1
		switch {
		case safe[c]:
			unit = append(unit, c)
		case c == '[' && k == funcField:
			// Generic instantiations keep their brackets; only a
			// marker's bracket is neutralised.
			if startsMarker(s[i+1:]) {
				unit = append(unit, "%5B"...)
			} else {
				unit = append(unit, '[')
			}
		case c == ' ' || c == ':' || c == '[' || c == ']':
			unit = append(unit, '_')
		case c < utf8.RuneSelf:
			unit = appendEscapedByte(unit, c)
		default:
			var r rune
			r, size = utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				unit = appendEscapedByte(unit, c)
			case unicode.IsSpace(r):
				if unicode.IsPrint(r) {
					unit = append(unit, '_')
				} else {
					unit = appendEscapedRune(unit, r)
				}
			case unicode.IsPrint(r):
				unit = append(unit, s[i:i+size]...)
			default:
				unit = appendEscapedRune(unit, r)
			}
		}
		if len(b)-start+len(unit) > limit {
			return append(b[:keep], '~')
		}
		b = append(b, unit...)
		if len(b)-start < limit {
			keep = len(b)
		}
		i += size
	}
	return b
}

// plainIn reports whether every byte of s is in the safe set: the one scan
// behind fieldPlain, plainKey and the span writers' plain paths.
func plainIn(s string, safe *[256]bool) bool {
	for i := 0; i < len(s); i++ {
		if !safe[s[i]] {
			return false
		}
	}
	return true
}

// fieldPlain reports whether s can be written as field k unchanged.
func fieldPlain(s string, k fieldKind) bool {
	return len(s) > 0 && len(s) <= maxField && plainIn(s, &fieldSafe[k])
}

// escapeFunc returns name as the function field prints it: escaped,
// bounded, and "go" when empty.
func escapeFunc(name string) string {
	if fieldPlain(name, funcField) {
		return name
	}
	if name == "" {
		return "go"
	}
	var buf [maxField + 10]byte
	return string(appendField(buf[:0], name, funcField, maxField))
}

// appendEscapedByte appends c the way strconv.Quote writes a byte.
func appendEscapedByte(b []byte, c byte) []byte {
	switch c {
	case '\a':
		return append(b, `\a`...)
	case '\b':
		return append(b, `\b`...)
	case '\f':
		return append(b, `\f`...)
	case '\n':
		return append(b, `\n`...)
	case '\r':
		return append(b, `\r`...)
	case '\t':
		return append(b, `\t`...)
	case '\v':
		return append(b, `\v`...)
	}
	return append(b, '\\', 'x', hexDigits[c>>4], hexDigits[c&0xf])
}

// appendEscapedRune appends a non-printing rune as \uXXXX or \UXXXXXXXX.
func appendEscapedRune(b []byte, r rune) []byte {
	if r < 0x10000 {
		return append(b, '\\', 'u', hexDigits[r>>12&0xf], hexDigits[r>>8&0xf], hexDigits[r>>4&0xf], hexDigits[r&0xf])
	}
	b = append(b, '\\', 'U')
	for shift := 28; shift >= 0; shift -= 4 {
		b = append(b, hexDigits[r>>uint(shift)&0xf])
	}
	return b
}
