package envelope

import (
	"log/slog"
	"strconv"
	"strings"

	"simpler.dev/log/internal/wire"
)

// SplitBody splits the body of an ordinary record (Parsed.Body) into its
// message and its attributes, as this package writes them: the message,
// then " key=value" for each attribute, a key or value that needs it
// quoted as strconv.Quote quotes. The attributes are the longest run of
// key=value tokens that ends the body; a message that itself ends in text
// shaped like key=value is read as attributes too, which is the one
// ambiguity of the format. A value comes back typed where its text is the
// one slog writes for that type: an integer (not "007"), a float (not
// "1.10"), true or false, a duration ("1.5s", not "1500ms"); anything
// else (times included) is a string. Groups come back as their dotted keys. A
// marker's bracket written as %5B is read back as '[', and a '%' written as
// %25 before such an escape as '%', and only there: the writer neutralises
// '[' only before a marker ([STRACE], [HOSTLOG_DROPS], [CLOCK_ANCHOR], [OP],
// [mono_ns=), and escapes a user's own '%' only where "5B" and a marker
// follow it, so any other %5B or %25 is written as it is and stays, and a
// user's own "%5BSTRACE]" comes back as it was logged.
// A quoted key or value is unquoted;
// the message is returned as written, control bytes as their escapes
// (written unquoted, "\n" there could be either).
//
// A value cut so that its record fits (SPEC §2, "fitted, not cut":
// written quoted and followed by '~', k="SELECT * FR"~) comes back as the
// string it kept, without the '~', and its key is in cut: the keys, in
// order, of the values that were cut so that the record fits in
// [MaxRecord] bytes (nil when none was), as [ParseRecord] gives them in
// [Record.Cut]. A record cut at the bound (its first 510 bytes, then
// "~\n") is not fitted: its last value, when it was cut inside, is not
// read as an attribute.
func SplitBody(body []byte) (message string, attrs []slog.Attr, cut []string) {
	s := string(body)
	// Each attribute is written after a space, so the attributes can only
	// start after one; the first start from which the rest is all
	// attributes wins. An empty message leaves the body starting with it.
	for i := 1; i < len(s); i++ {
		if s[i-1] != ' ' {
			continue
		}
		if a, c, ok := parseAttrs(s[i:]); ok {
			return unneutralise(s[:i-1]), a, c
		}
	}
	return unneutralise(s), nil, nil
}

// parseAttrs reads s as key=value tokens separated by single spaces, and
// returns the keys of the values marked as cut (a quoted value followed by
// '~').
func parseAttrs(s string) ([]slog.Attr, []string, bool) {
	var out []slog.Attr
	var cut []string
	for {
		k, _, rest, ok := token(s, true)
		if !ok || rest == "" || rest[0] != '=' {
			return nil, nil, false
		}
		v, quoted, rest, ok := token(rest[1:], false)
		if !ok {
			return nil, nil, false
		}
		if quoted && rest != "" && rest[0] == '~' && (len(rest) == 1 || rest[1] == ' ') {
			// A cut value: what it kept is text, whatever it reads as.
			out = append(out, slog.String(k, v))
			cut = append(cut, k)
			rest = rest[1:]
		} else if quoted {
			out = append(out, slog.String(k, v))
		} else {
			out = append(out, wire.TypedAttr(k, v))
		}
		if rest == "" {
			return out, cut, true
		}
		if rest[0] != ' ' || len(rest) == 1 {
			return nil, nil, false
		}
		s = rest[1:]
	}
}

// token reads one key or value: quoted as strconv.Quote quotes, or a run
// of bytes up to a space, a quote and, for a key, an '='. A key is never
// empty; a value can be.
func token(s string, key bool) (text string, quoted bool, rest string, ok bool) {
	if s != "" && s[0] == '"' {
		q, err := strconv.QuotedPrefix(s)
		if err != nil {
			return "", false, s, false
		}
		u, err := strconv.Unquote(q)
		if err != nil {
			return "", false, s, false
		}
		return unneutralise(u), true, s[len(q):], true
	}
	i := 0
	for i < len(s) && s[i] != ' ' && s[i] != '"' && (!key || s[i] != '=') {
		i++
	}
	if key && i == 0 {
		return "", false, s, false
	}
	return unneutralise(s[:i]), false, s[i:], true
}

// unneutralise reads a marker bracket written as %5B back as '[', and a
// '%' written as %25 before one back as '%': the inverse of the writer
// (buffer.textMode), which writes '[' as %5B exactly when the text after it
// starts a marker, '%' as %25 exactly when the text after it is "5B" and
// a marker after any number of "25" (escapesMarker), and leaves every
// other byte as it is, so the same tests on what follows find what it
// changed.
func unneutralise(s string) string {
	if !strings.Contains(s, "%5B") && !strings.Contains(s, "%25") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch {
		case strings.HasPrefix(s[i:], "%5B") && startsMarker(s[i+3:]):
			b.WriteByte('[')
			i += 2
			continue
		case strings.HasPrefix(s[i:], "%25") && escapesMarker(s[i+3:]):
			b.WriteByte('%')
			i += 2
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
