package envelope

import (
	"unicode"
	"unicode/utf8"
)

// markers are the bracketed tokens that log readers search for. In user
// text, the '[' that opens one is written as %5B.
// Each is written without its '[', which the scanners have already seen.
var markers = [...]string{MarkerSpan[1:], MarkerDrops[1:], MarkerAnchor[1:], MarkerOp[1:], MarkerHeader[1:], MarkerRun[1:]}

// escapesMarker reports whether s, the text after a '%' of user text,
// reads as the escape of a marker's bracket: "5B" and a marker, after any
// number of "25". Such a '%' is written %25, so that a user's own
// "%5BSTRACE]" is not the bytes a neutralised "[STRACE]" is written as,
// and a reader tells them apart (SplitBody).
func escapesMarker(s string) bool {
	for len(s) >= 2 && s[0] == '2' && s[1] == '5' {
		s = s[2:]
	}
	return len(s) >= 2 && s[0] == '5' && s[1] == 'B' && startsMarker(s[2:])
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

// containsMarker reports whether s holds any machine marker with its
// opening bracket. internal/machine applies the same test for this
// module's forwarders; both are held to a search for each marker by their
// tests.
func containsMarker(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] == '[' && startsMarker(s[i+1:]) {
			return true
		}
	}
	return false
}

// plain[c] is true for bytes that user text can carry unchanged in a
// message: printable ASCII other than '[' and '%' (each is written as is
// unless a marker follows: see textMode).
var plain = func() (t [256]bool) {
	for c := 0x20; c < 0x7f; c++ {
		t[c] = c != '[' && c != '%'
	}
	return
}()

// safeToken[c] is true for bytes a key or value can carry unquoted and
// unescaped: printable ASCII other than space, '=', '"', '[' and '%'.
var safeToken = func() (t [256]bool) {
	for c := 0x21; c < 0x7f; c++ {
		t[c] = c != '=' && c != '"' && c != '[' && c != '%'
	}
	return
}()

// text writes user text. When quoted, the text is written between double
// quotes with '"' and '\' escaped, as strconv.Quote would; otherwise as is.
// In both forms control bytes, DEL, C1 controls, line and paragraph
// separators and other non-printing runes are escaped, invalid UTF-8 is
// written as \xNN, and markers are neutralised.
func (b *buffer) text(s string, quoted bool) { b.textMode(s, quoted, userText, nil) }

// textKind says what text textMode writes.
type textKind uint8

const (
	userText    textKind = iota // messages, keys, values, group names
	machineText                 // trusted machine text: escaped, markers left alone
)

// textMode is text for text of kind k: markers are neutralised but in
// machine text. fit is the fitter of a record being fitted when s is its
// message ([Line.Message]), which then goes to the fitter to be shortened
// last; nil for any other text. It is checked here, in the one call a
// message costs.
func (b *buffer) textMode(s string, quoted bool, k textKind, fit *fitter) {
	if fit != nil {
		fit.message(b, s)
		return
	}
	neutralise := k != machineText
	if !quoted && neutralise && plainText(s) {
		b.raw(s)
		return
	}
	if quoted {
		b.byte1('"')
	}
	start := 0
	for i := 0; i < len(s); {
		c := s[i]
		if plain[c] && (!quoted || (c != '"' && c != '\\')) {
			i++
			continue
		}
		b.raw(s[start:i])
		switch {
		case c == '[':
			if neutralise && startsMarker(s[i+1:]) {
				b.raw("%5B")
			} else {
				b.byte1('[')
			}
			i++
		case c == '%':
			if neutralise && escapesMarker(s[i+1:]) {
				b.raw("%25")
			} else {
				b.byte1('%')
			}
			i++
		case c == '"' || c == '\\':
			b.byte1('\\')
			b.byte1(c)
			i++
		case c < utf8.RuneSelf:
			b.escapeByte(c)
			i++
		default:
			r, size := utf8.DecodeRuneInString(s[i:])
			switch {
			case r == utf8.RuneError && size == 1:
				b.escapeByte(c)
			case unicode.IsPrint(r):
				b.raw(s[i : i+size])
			default:
				b.escapeRune(r)
			}
			i += size
		}
		start = i
		if b.over {
			break
		}
	}
	if start < len(s) {
		b.raw(s[start:])
	}
	if quoted {
		b.byte1('"')
	}
}

const hexDigits = "0123456789abcdef"

// escapeByte writes a single byte the way strconv.Quote writes it.
func (b *buffer) escapeByte(c byte) {
	var u [4]byte
	b.rawBytes(appendEscapedByte(u[:0], c))
}

// escapeRune writes a non-printing rune as \uXXXX or \UXXXXXXXX.
func (b *buffer) escapeRune(r rune) {
	var u [10]byte
	b.rawBytes(appendEscapedRune(u[:0], r))
}

// needsQuoting reports whether a key or string value must be quoted to be
// read back as one token, following slog's TextHandler: empty strings, and
// strings with spaces, '=', '"', or any non-printing or invalid rune.
func needsQuoting(s string) bool {
	if len(s) == 0 {
		return true
	}
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c <= ' ' || c == '=' || c == '"' || c == 0x7f {
				return true
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError || unicode.IsSpace(r) || !unicode.IsPrint(r) {
			return true
		}
		i += size
	}
	return false
}

// token writes a key or value: quoted when needsQuoting says so. The
// common case, a non-empty string of safe bytes, is one pass and a copy.
func (b *buffer) token(s string) {
	i := 0
	for i < len(s) && safeToken[s[i]] {
		i++
	}
	if i == len(s) && i > 0 {
		b.raw(s)
		return
	}
	// The scan stopped at s[i]; s[:i] holds nothing that needs quoting, so
	// a quoting byte there settles it, and otherwise ('[', a control or a
	// multi-byte rune) the rest decides: no second scan from the start.
	quote := i == len(s) // empty
	if !quote {
		c := s[i]
		quote = c <= ' ' || c == '=' || c == '"' || c == 0x7f || needsQuoting(s[i:])
	}
	b.text(s, quote)
}

const (
	lsb = 0x0101010101010101
	msb = 0x8080808080808080
)

// plainText reports whether every byte of s is printable ASCII other than
// '[' and '%'.
func plainText(s string) bool { return plainWords(s, true) }

// plainWords reports whether every byte of s is printable ASCII (and, with
// bracket, not '[' or '%'), eight bytes at a time: a word is plain when no
// byte is below 0x20, none has the high bit, none is 0x7f (and none is
// '[' or '%').
func plainWords(s string, bracket bool) bool {
	n := len(s)
	if n < 8 {
		for i := 0; i < n; i++ {
			if c := s[i]; c < 0x20 || c >= 0x7f || (bracket && (c == '[' || c == '%')) {
				return false
			}
		}
		return true
	}
	for i := 0; ; i += 8 {
		if i+8 > n {
			// The tail as the last eight bytes, one more word: the bytes
			// it shares with the word before were already good.
			i = n - 8
		}
		// One bounds check for the word, so the compiler merges the eight
		// byte loads into one.
		w := s[i : i+8]
		x := uint64(w[0]) | uint64(w[1])<<8 | uint64(w[2])<<16 | uint64(w[3])<<24 |
			uint64(w[4])<<32 | uint64(w[5])<<40 | uint64(w[6])<<48 | uint64(w[7])<<56
		// Any byte < 0x20, or >= 0x80: (x - 0x20 per byte) borrows into or
		// x itself has the high bit.
		bad := ((x - 0x20*lsb) | x) & msb
		// Zero-byte test on x^0x7f (and x^'['): (y - lsb) & ^y & msb.
		y := x ^ (0x7f * lsb)
		bad |= (y - lsb) & ^y & msb
		if bracket {
			y = x ^ ('[' * lsb)
			bad |= (y - lsb) & ^y & msb
			y = x ^ ('%' * lsb)
			bad |= (y - lsb) & ^y & msb
		}
		if bad != 0 {
			return false
		}
		if i+8 == n {
			return true
		}
	}
}
