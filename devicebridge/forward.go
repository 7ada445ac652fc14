package devicebridge

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"os"
	"sync/atomic"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/door"
	"simpler.dev/log/internal/machine"
	"simpler.dev/log/internal/origin"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// forwardBuf bounds how much of one line is read; a record is cut at 512
// bytes anyway, and the rest of a longer line is skipped.
const forwardBuf = 8 << 10

// ForwardOptions configure a [Forwarder]. The zero value and nil mean
// defaults.
type ForwardOptions struct {
	// PID is the simulator's process id as the caller knows it, from the
	// process it started (cmd.Process.Pid): the only pid whose machine
	// records ([STRACE], [HOSTLOG_DROPS], [CLOCK_ANCHOR], and [OP] lines)
	// are forwarded as machine records. A pid the stream declares about
	// itself proves nothing, so zero means none: every forwarded line is
	// user text.
	PID int
}

// A Forwarder re-emits a simulator's output through a state. It is safe
// for concurrent use; each Forward call reads one stream.
type Forwarder struct {
	state *slogsimpler.State
	// pid is the simulator's pid from ForwardOptions, 0 for none;
	// immutable.
	pid         int
	neutralised atomic.Uint64
}

// NewForwarder returns a forwarder into state.
func NewForwarder(state *slogsimpler.State, opts *ForwardOptions) (*Forwarder, error) {
	if state == nil {
		return nil, ErrNilState
	}
	f := &Forwarder{state: state}
	if opts != nil && opts.PID > 0 && opts.PID != os.Getpid() {
		f.pid = opts.PID
	}
	return f, nil
}

// Neutralised returns how many forwarded lines carried a machine marker
// that was not the simulator's own to write (a record claiming the host's
// pid or another one, a nested envelope, any marker before the simulator's
// pid is known) and were therefore written as user text, markers
// neutralised.
func (f *Forwarder) Neutralised() uint64 { return f.neutralised.Load() }

// Forward reads a simulator's output line by line until EOF or a read
// error and re-emits each line through the state, at the line's own level
// under the state's live threshold:
//
//   - an envelope line keeps its clock reading, lane, level, function and
//     position;
//   - simpler's older sim format "[LEVEL] func: body" keeps its level and
//     function;
//   - any other line is forwarded at INFO with function "sim".
//
// Bodies are user text (escaped, markers neutralised) unless every machine
// marker in them belongs to the simulator: a [STRACE], [HOSTLOG_DROPS] or
// [CLOCK_ANCHOR] record whose pid= is the simulator's pid (never the
// host's), or an [OP] line once that pid is known. So a simulator can
// forward its spans and drop reports, and can never make the host's log
// report drops, anchors or spans in the host's name. Lines refused this way
// are counted ([Forwarder.Neutralised]).
//
// An over-long line is cut by the 512-byte rule; a last line without a
// newline is forwarded too. It returns the number of lines forwarded and
// the read error, if any (nil at EOF).
func (f *Forwarder) Forward(r io.Reader) (int, error) {
	br := bufio.NewReaderSize(r, forwardBuf)
	n := 0
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Forward what fits, skip the rest of the line.
			f.forwardLine(line)
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
			f.forwardLine(line)
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

func (f *Forwarder) forwardLine(line []byte) {
	line = bytes.TrimRight(line, "\r\n")
	if p, err := envelope.Parse(line); err == nil {
		body := string(p.Body)
		t := f.trust(p, body)
		if t == trustRefused {
			f.neutralised.Add(1)
		}
		if t == trustMachine {
			_, _ = door.Emit(f.state, p.Level, origin.NewMachine(p.Header, body), body)
			return
		}
		f.state.Emit(p.Level, slogsimpler.Source{Function: p.Func, File: p.File, Line: p.Line}, p.Mono, p.TID, body)
		return
	}
	// Free text never carries a machine record.
	if machine.ContainsMarker(string(line)) {
		f.neutralised.Add(1)
	}
	f.state.Emit(levels.Info, slogsimpler.Source{Function: "sim"}, 0, 0, string(line))
}

type trustLevel uint8

const (
	trustNone    trustLevel = iota // no marker: plain text either way
	trustMachine                   // every marker is the simulator's own
	trustRefused                   // a marker the simulator may not write
)

// trust decides how body, p's, is written: a machine record only when the
// whole line is one in machine position ([envelope.ParseMachine]) and speaks
// for the simulator (an
// op line, which names no pid, once the simulator's pid is known); any
// other marker makes it refused, written as neutralised text.
func (f *Forwarder) trust(p envelope.Parsed, body string) trustLevel {
	if !machine.ContainsMarker(body) {
		return trustNone
	}
	marker, pid, err := envelope.ParseMachine(p)
	switch {
	case err != nil || f.pid == 0 || marker == envelope.MarkerRun:
		// A run record is a sink's, at the start of a file: forwarded,
		// it would claim the records after it for another run.
		return trustRefused
	case marker == envelope.MarkerOp, pid == f.pid:
		return trustMachine
	}
	return trustRefused
}
