package logtest

import (
	"bytes"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
)

// Record is one envelope record read back for tests: its fields, the
// message (the leading words that are not key=value) and the attributes.
type Record struct {
	envelope.Parsed
	Msg   string
	Attrs map[string]string // dotted keys, unquoted values
	Raw   string
}

// ParseLines reads every record in out, failing the test on a line that is
// not an envelope record.
func ParseLines(t testing.TB, out []byte) []Record {
	t.Helper()
	var recs []Record
	for _, line := range bytes.SplitAfter(out, []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		p, err := ParseRecord(line)
		require.NoError(t, err, "line %q: %v", line, err)
		recs = append(recs, p)
	}
	return recs
}

// ParseRecord splits a record's body into the message (the leading words
// that are not key=value) and the attributes.
func ParseRecord(line []byte) (Record, error) {
	if len(line) == 0 || line[len(line)-1] != '\n' {
		return Record{}, fmt.Errorf("no trailing newline")
	}
	p, err := envelope.Parse(line)
	if err != nil {
		return Record{}, err
	}
	if p.Legacy {
		return Record{}, fmt.Errorf("no envelope header")
	}
	out := Record{Parsed: p, Attrs: map[string]string{}, Raw: string(line)}
	toks, err := Tokens(string(p.Body))
	if err != nil {
		return out, err
	}
	var msg []string
	for i, tok := range toks {
		k, v, ok := SplitKV(tok)
		if !ok {
			if len(out.Attrs) > 0 {
				return out, fmt.Errorf("word %q after attributes", tok)
			}
			msg = append(msg, toks[i])
			continue
		}
		out.Attrs[k] = v
	}
	out.Msg = strings.Join(msg, " ")
	return out, nil
}

// Tokens splits on spaces outside double quotes.
func Tokens(s string) ([]string, error) {
	var toks []string
	for len(s) > 0 {
		if s[0] == ' ' {
			s = s[1:]
			continue
		}
		i, inQ := 0, false
		for ; i < len(s); i++ {
			c := s[i]
			if c == '\\' && inQ {
				i++
				continue
			}
			if c == '"' {
				inQ = !inQ
			}
			if c == ' ' && !inQ {
				break
			}
		}
		if inQ {
			return nil, fmt.Errorf("unterminated quote in %q", s)
		}
		toks = append(toks, s[:i])
		s = s[i:]
	}
	return toks, nil
}

func Unquote(s string) string {
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

func SplitKV(tok string) (k, v string, ok bool) {
	// The key may be quoted; find the '=' after it.
	i := 0
	if strings.HasPrefix(tok, `"`) {
		for i = 1; i < len(tok) && tok[i] != '"'; i++ {
			if tok[i] == '\\' {
				i++
			}
		}
		i++
	}
	j := strings.IndexByte(tok[min(i, len(tok)):], '=')
	if j < 0 {
		return "", "", false
	}
	j += min(i, len(tok))
	return Unquote(tok[:j]), Unquote(tok[j+1:]), true
}

// SlogtestResult is a testing/slogtest result for one record rendered in
// the envelope: level, message, time (unless the record had none: zero),
// source and the attributes, groups rebuilt from dotted keys.
func SlogtestResult(p Record, zero bool) map[string]any {
	m := map[string]any{slog.LevelKey: p.Level, slog.MessageKey: p.Msg}
	if !zero {
		m[slog.TimeKey] = p.Mono
	}
	if p.File != "" {
		m[slog.SourceKey] = fmt.Sprintf("%s:%d", p.File, p.Line)
	}
	for k, v := range p.Attrs {
		Nest(m, k, v)
	}
	return m
}
