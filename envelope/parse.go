package envelope

import (
	"bytes"
	"errors"
	"strconv"
)

// Parsed is an envelope line split into its fields. Body is everything
// after the "func: " field and the optional "[file:line] ": the message
// and the attributes, which the format does not separate.
type Parsed struct {
	Mono     int64
	TID      int64
	Level    string
	Function string
	File     string // empty when the record had no source position
	Line     int
	Body     []byte // aliases the input
}

// ErrNotEnvelope is returned by [Parse] for a line that is not an envelope
// record.
var ErrNotEnvelope = errors.New("envelope: not an envelope record")

// Parse splits one record (with or without its trailing newline) into its
// fields. It accepts exactly what this package writes and what simpler's
// C++ host logger writes.
func Parse(line []byte) (Parsed, error) {
	var p Parsed
	line = bytes.TrimSuffix(line, []byte{'\n'})
	rest, ok := bytes.CutPrefix(line, []byte("[mono_ns="))
	if !ok {
		return p, ErrNotEnvelope
	}
	var num []byte
	if num, rest, ok = bytes.Cut(rest, []byte("][T0x")); !ok {
		return p, ErrNotEnvelope
	}
	mono, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || mono < 0 {
		return p, ErrNotEnvelope
	}
	if num, rest, ok = bytes.Cut(rest, []byte("][")); !ok {
		return p, ErrNotEnvelope
	}
	tid, err := strconv.ParseUint(string(num), 16, 64)
	if err != nil {
		return p, ErrNotEnvelope
	}
	var lvl []byte
	if lvl, rest, ok = bytes.Cut(rest, []byte("] ")); !ok || len(lvl) == 0 || bytes.IndexFunc(lvl, notUpper) >= 0 {
		return p, ErrNotEnvelope
	}
	// The function ends at the first ':', which must be followed by a
	// space; it holds no white space.
	i := bytes.IndexByte(rest, ':')
	if i <= 0 || i+1 >= len(rest) || rest[i+1] != ' ' || bytes.ContainsAny(rest[:i], " \t") {
		return p, ErrNotEnvelope
	}
	fn := rest[:i]
	rest = rest[i+2:]
	p.Mono, p.TID, p.Level, p.Function = mono, int64(tid), string(lvl), string(fn)
	p.Body = rest
	if len(rest) > 0 && rest[0] == '[' {
		if src, after, ok := bytes.Cut(rest[1:], []byte("] ")); ok {
			if i := bytes.LastIndexByte(src, ':'); i > 0 {
				if n, err := strconv.Atoi(string(src[i+1:])); err == nil && n >= 0 {
					p.File, p.Line, p.Body = string(src[:i]), n, after
				}
			}
		}
	}
	return p, nil
}

func notUpper(r rune) bool { return r < 'A' || r > 'Z' }
