package envelope

import (
	"bytes"
	"log/slog"
	"strconv"

	"simpler.dev/log/levels"
)

// Parsed is a record split into its [Header], the one a writer gives
// [Line.Start] (its Level read from the ladder's upper-case record names,
// WARNING as WARN, Func and File as written, File empty when the record
// had no source position, PC zero), and its body: everything after the
// "func: " field and the optional "[file:line] ", the message and the
// attributes, which the format does not separate ([SplitBody] and
// [ParseRecord] do), or a machine record ([ParseMachine]).
type Parsed struct {
	Header
	Body []byte // aliases the input
	// Legacy marks a line of simpler's older simulator format,
	// "[LEVEL] func: body", which has no clock, lane or position: Mono,
	// TID, File and Line are zero. A reader that requires the envelope
	// (a C module's records, SPEC §12) refuses it.
	Legacy bool
}

// Parse splits one record (with or without its trailing newline) into its
// fields. It reads every generation simpler has written: the envelope, as
// this package and simpler's C++ host logger write it, and the older
// simulator lines ([Parsed.Legacy]). A line of neither, or a level off
// simpler's ladder, is ErrNotRecord. This is the one place where a new
// generation is recognised.
func Parse(line []byte) (Parsed, error) {
	if p, err := parseEnvelope(line); err == nil {
		return p, nil
	}
	return parseLegacy(line)
}

// parseEnvelope reads a line with the envelope header.
func parseEnvelope(line []byte) (Parsed, error) {
	var p Parsed
	line = bytes.TrimSuffix(line, []byte{'\n'})
	rest, ok := bytes.CutPrefix(line, []byte(MarkerHeader))
	if !ok {
		return p, ErrNotRecord
	}
	var num []byte
	if num, rest, ok = bytes.Cut(rest, []byte("][T0x")); !ok {
		return p, ErrNotRecord
	}
	mono, err := strconv.ParseInt(string(num), 10, 64)
	if err != nil || mono < 0 {
		return p, ErrNotRecord
	}
	if num, rest, ok = bytes.Cut(rest, []byte("][")); !ok {
		return p, ErrNotRecord
	}
	tid, err := strconv.ParseUint(string(num), 16, 64)
	if err != nil {
		return p, ErrNotRecord
	}
	var lvl []byte
	if lvl, rest, ok = bytes.Cut(rest, []byte("] ")); !ok {
		return p, ErrNotRecord
	}
	level, ok := levelOf(string(lvl))
	if !ok {
		return p, ErrNotRecord
	}
	// The function ends at the first ':', which must be followed by a
	// space; it holds no white space.
	i := bytes.IndexByte(rest, ':')
	if i <= 0 || i+1 >= len(rest) || rest[i+1] != ' ' || bytes.ContainsAny(rest[:i], " \t") {
		return p, ErrNotRecord
	}
	fn := rest[:i]
	rest = rest[i+2:]
	p.Mono, p.TID, p.Level, p.Func = mono, int64(tid), level, string(fn)
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

// levelOf reads the level field of a simpler record: one of the ladder's
// record names, upper case as simpler writes them (and WARNING, the
// name of older generations and of CANN), nothing else.
func levelOf(name string) (slog.Level, bool) {
	switch name {
	case "DEBUG":
		return levels.Debug, true
	case "INFO":
		return levels.Info, true
	case "TIMING":
		return levels.Timing, true
	case "WARN", "WARNING":
		return levels.Warn, true
	case "ERROR":
		return levels.Error, true
	}
	return 0, false
}

// parseLegacy reads simpler's older simulator format, "[LEVEL] func:
// body".
func parseLegacy(line []byte) (Parsed, error) {
	line = bytes.TrimRight(line, "\r\n")
	if len(line) < 4 || line[0] != '[' {
		return Parsed{}, ErrNotRecord
	}
	name, rest, ok := bytes.Cut(line[1:], []byte("] "))
	if !ok {
		return Parsed{}, ErrNotRecord
	}
	level, ok := levelOf(string(name))
	if !ok {
		return Parsed{}, ErrNotRecord
	}
	fn, body, ok := bytes.Cut(rest, []byte(": "))
	if !ok || len(fn) == 0 || bytes.ContainsAny(fn, " \t[") {
		return Parsed{}, ErrNotRecord
	}
	return Parsed{Header: Header{Level: level, Func: string(fn)}, Body: body, Legacy: true}, nil
}
