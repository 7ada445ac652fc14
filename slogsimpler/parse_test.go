package slogsimpler

import (
	"bytes"
	"fmt"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
)

// parsed is one envelope record read back for tests.
type parsed struct {
	envelope.Parsed
	Msg   string
	Attrs map[string]string // dotted keys, unquoted values
	Raw   string
}

// parseLines reads every record in out, failing the test on a line that is
// not an envelope record.
func parseLines(t testing.TB, out []byte) []parsed {
	t.Helper()
	var recs []parsed
	for _, line := range bytes.SplitAfter(out, []byte{'\n'}) {
		if len(line) == 0 {
			continue
		}
		p, err := parseRecord(line)
		require.NoError(t, err, "line %q: %v", line, err)
		recs = append(recs, p)
	}
	return recs
}

// parseRecord splits a record's body into the message (the leading words
// that are not key=value) and the attributes.
func parseRecord(line []byte) (parsed, error) {
	if len(line) == 0 || line[len(line)-1] != '\n' {
		return parsed{}, fmt.Errorf("no trailing newline")
	}
	p, err := envelope.Parse(line)
	if err != nil {
		return parsed{}, err
	}
	out := parsed{Parsed: p, Attrs: map[string]string{}, Raw: string(line)}
	toks, err := tokens(string(p.Body))
	if err != nil {
		return out, err
	}
	var msg []string
	for i, tok := range toks {
		k, v, ok := splitKV(tok)
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

// tokens splits on spaces outside double quotes.
func tokens(s string) ([]string, error) {
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

func unquote(s string) string {
	if strings.HasPrefix(s, `"`) {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

func splitKV(tok string) (k, v string, ok bool) {
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
	return unquote(tok[:j]), unquote(tok[j+1:]), true
}
