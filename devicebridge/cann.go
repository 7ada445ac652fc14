package devicebridge

import (
	"io"
	"log/slog"
	"os"

	"simpler.dev/log/internal/ladder"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

// CANN device log levels.
const (
	cannDebug   = 0
	cannInfo    = 1
	cannWarning = 2
	cannError   = 3
	cannNull    = 4
	// cannDefault is CANN's level when ASCEND_GLOBAL_LOG_LEVEL is absent
	// or invalid.
	cannDefault = cannError
)

// envGlobalLogLevel is the variable through which an operator sets the
// device log level; when it is present the bridge sets nothing.
const envGlobalLogLevel = "ASCEND_GLOBAL_LOG_LEVEL"

// parseCANNLevel reads a level the way CANN reads ASCEND_GLOBAL_LOG_LEVEL:
// a decimal number filling the whole string, leading white space and one
// sign allowed, in 0–4. Anything else is invalid: ok is false and level is
// the default, ERROR (3).
func parseCANNLevel(s string) (level int, ok bool) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\v' || s[i] == '\f' || s[i] == '\r') {
		i++
	}
	neg := false
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		neg = s[i] == '-'
		i++
	}
	if i == len(s) {
		return cannDefault, false
	}
	v := 0
	for ; i < len(s); i++ {
		c := s[i]
		if c < '0' || c > '9' {
			return cannDefault, false
		}
		v = v*10 + int(c-'0')
		if v > cannNull {
			return cannDefault, false
		}
	}
	if neg {
		v = -v
	}
	if v < cannDebug || v > cannNull {
		return cannDefault, false
	}
	return v, true
}

// A Device is an onboard device's logging, latched once at init.
type Device struct {
	ID int
	// Level is the latched CANN level.
	Level int
	// Timing is whether TIMING records are written (at WARNING, tagged
	// [TIMING]).
	Timing bool
	// FromEnv is true when ASCEND_GLOBAL_LOG_LEVEL decided the level and
	// the bridge set nothing.
	FromEnv bool

	w *cannWriter
}

// DeviceOptions configure InitDevice. Nil means defaults. They say where
// the device's CANN lines go; without Out the environment decides, as CANN
// does: standard output when ASCEND_LOG_PRINT_TO_STDOUT=1, else a
// plog-style file under ASCEND_PROCESS_LOG_PATH, $ASCEND_WORK_PATH/log or
// $HOME/ascend/log.
type DeviceOptions struct {
	// Out, if not nil, receives the device's lines instead.
	Out io.Writer
	// Module names the device code in every line; "" means "AICPU".
	Module string
	// PName is the process name in every line; "" means the base name
	// of os.Args[0].
	PName string
	// MaxFileBytes starts a new file before one would pass it; 0 means
	// 20 MiB. MaxFiles is how many of this process's files are kept; 0
	// means 10.
	MaxFileBytes int64
	MaxFiles     int

	// For tests: the environment (nil means os.LookupEnv) and a writer
	// made beforehand (nil means one made from the fields above).
	lookupEnv func(string) (string, bool)
	writer    *cannWriter
}

// InitDevice latches device id's log level from state's threshold now, or
// from ASCEND_GLOBAL_LOG_LEVEL when it is present (even empty: then CANN's
// own rules apply, and an invalid value means ERROR). The TIMING flag is on
// when the host threshold admits TIMING, or, with the environment, when
// its level admits WARNING. Later changes to the host threshold do not
// reach the device; initialising it again latches again.
func InitDevice(state *slogsimpler.State, id int, opts *DeviceOptions) (*Device, error) {
	if state == nil {
		return nil, ErrNilState
	}
	var o DeviceOptions
	if opts != nil {
		o = *opts
	}
	lookup := o.lookupEnv
	if lookup == nil {
		lookup = os.LookupEnv
	}
	d := &Device{ID: id, w: o.writer}
	if v, ok := lookup(envGlobalLogLevel); ok {
		d.Level, _ = parseCANNLevel(v)
		d.FromEnv = true
		d.Timing = d.Level <= cannWarning
	} else {
		t := state.Level()
		d.Level = ladder.CANN(t)
		d.Timing = t != levels.Nul && levels.Timing >= t
	}
	if d.w == nil {
		w, err := newWriter(&writerOptions{DeviceID: id, lookupEnv: lookup, Out: o.Out, Module: o.Module,
			PName: o.PName, MaxFileBytes: o.MaxFileBytes, MaxFiles: o.MaxFiles})
		if err != nil {
			return nil, err
		}
		d.w = w
	}
	return d, nil
}

// cannLevel maps a record level to CANN's, and reports whether it is a
// TIMING record.
func cannLevel(l slog.Level) (int, bool) {
	switch ladder.RoundRecord(l) {
	case levels.Debug:
		return cannDebug, false
	case levels.Info:
		return cannInfo, false
	case levels.Timing:
		return cannWarning, true
	case levels.Warn:
		return cannWarning, false
	default:
		return cannError, false
	}
}

// Enabled reports whether the latched device writes a record at level.
func (d *Device) Enabled(level slog.Level) bool {
	c, timing := cannLevel(level)
	if d.Level >= cannNull || c < d.Level {
		return false
	}
	return !timing || d.Timing
}

// Log writes one device record: at the CANN level for level (TIMING at
// WARNING with a [TIMING] tag), from src (function, file and line), on
// thread tid. It does nothing when the latched level excludes it.
func (d *Device) Log(level slog.Level, src slogsimpler.Source, tid int64, msg string) error {
	if !d.Enabled(level) {
		return nil
	}
	c, timing := cannLevel(level)
	return d.w.WriteRecord(cannRecord{Level: c, Timing: timing, File: src.File, Line: src.Line, TID: tid, Func: src.Function, Msg: msg})
}

// Close closes the device's writer.
func (d *Device) Close() error { return d.w.Close() }
