package devicebridge

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"log/slog"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/trusted"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// forwardBuf bounds how much of one line is read; a record is cut at 512
// bytes anyway, and the rest of a longer line is skipped.
const forwardBuf = 8 << 10

// Forward reads a simulator's output line by line until EOF or a read
// error and re-emits each line through state, at the line's own level
// under the state's live threshold:
//
//   - an envelope line keeps its clock reading, lane, level, function and
//     position, and its body is written as the simulator wrote it, so its
//     spans and drop reports stay machine records;
//   - simpler's older sim format "[LEVEL] func: body" keeps its level and
//     function;
//   - any other line is forwarded at INFO with function "sim", its text
//     treated as user text (escaped, markers neutralised).
//
// An over-long line is cut by the 512-byte rule; a last line without a
// newline is forwarded too. It returns the number of lines forwarded and
// the read error, if any (nil at EOF).
func Forward(r io.Reader, state *slogsimpler.State) (int, error) {
	if state == nil {
		return 0, ErrNilState
	}
	br := bufio.NewReaderSize(r, forwardBuf)
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Forward what fits, skip the rest of the line.
			forwardLine(state, line)
			n++
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = br.ReadSlice('\n')
			}
			if err == nil {
				continue
			}
			line = nil
		}
		if len(line) > 0 {
			forwardLine(state, line)
			n++
		}
		if err == io.EOF {
			return n, nil
		}
		if err != nil {
			return n, err
		}
	}
}

func forwardLine(state *slogsimpler.State, line []byte) {
	line = bytes.TrimRight(line, "\r\n")
	if p, err := envelope.Parse(line); err == nil {
		if lvl, ok := levelName(p.Level); ok {
			trusted.Emit(state, lvl, p.Function, p.File, p.Line, p.Mono, p.TID, string(p.Body))
			return
		}
	}
	if lvl, fn, body, ok := parseSimLine(line); ok {
		trusted.Emit(state, lvl, fn, "", 0, 0, 0, string(body))
		return
	}
	state.Emit(levels.Info, slogsimpler.Source{Function: "sim"}, 0, 0, string(line))
}

// parseSimLine reads simpler's older sim format: "[LEVEL] func: body".
func parseSimLine(line []byte) (slog.Level, string, []byte, bool) {
	if len(line) < 4 || line[0] != '[' {
		return 0, "", nil, false
	}
	name, rest, ok := bytes.Cut(line[1:], []byte("] "))
	if !ok {
		return 0, "", nil, false
	}
	lvl, ok := levelName(string(name))
	if !ok {
		return 0, "", nil, false
	}
	fn, body, ok := bytes.Cut(rest, []byte(": "))
	if !ok || len(fn) == 0 || bytes.ContainsAny(fn, " \t[") {
		return 0, "", nil, false
	}
	return lvl, string(fn), body, true
}

// levelName reads the level field of a simpler record: one of the ladder's
// record names (and WARNING), upper case, nothing else.
func levelName(s string) (slog.Level, bool) {
	switch s {
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
