package devicebridge

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"simpler.dev/log/internal/printable"
	"simpler.dev/log/internal/safedir"
	"simpler.dev/log/internal/stdio"
)

// Defaults of a cannWriter's plog-style files.
const (
	defaultModule       = "AICPU"
	defaultMaxFileBytes = 20 << 20
	defaultMaxFiles     = 10
)

// writerOptions configure a cannWriter. The zero value and nil mean defaults.
type writerOptions struct {
	Module   string // "AICPU"
	DeviceID int
	PID      int    // 0: os.Getpid()
	PName    string // process name; "": base name of os.Args[0]
	// Out replaces the destination that the environment selects.
	Out io.Writer
	// now is the clock; nil means time.Now. Times print in local time.
	now func() time.Time
	// lookupEnv reads the environment; nil means os.LookupEnv.
	lookupEnv    func(string) (string, bool)
	MaxFileBytes int64 // 0: 20 MiB
	MaxFiles     int   // 0: 10
}

// A cannWriter writes CANN-format device records ([appendCANN]):
//
//	[LEVEL] MODULE(PID,PNAME):yyyy-mm-dd-hh:mm:ss.mmm.uuu [file:line]<tid> <func> [TIMING]
//	"<message>"
//
// one Write per record, to standard output when ASCEND_LOG_PRINT_TO_STDOUT=1 (or,
// while that is unset, the deprecated ASCEND_SLOG_PRINT_TO_STDOUT=1), else
// to files named debug/device-<id>/device-<pid>_<YYYYMMDDhhmmssmmm>.log
// under ASCEND_PROCESS_LOG_PATH, $ASCEND_WORK_PATH/log or $HOME/ascend/log
// (directories 0750, files 0640), starting a new file before one would pass
// MaxFileBytes and keeping this process's newest MaxFiles files. Safe for
// concurrent use.
type cannWriter struct {
	o    writerOptions
	mu   sync.Mutex
	out  io.Writer // stdout or Out; nil when writing files
	root string    // the log root the user configured (links in it are followed)
	rel  string    // the device directory below root (no link followed)
	dir  string    // root/rel
	f    *os.File
	held *os.Root // dir, held open once made; nil before the first file
	n    int64    // bytes in f
	buf  []byte
}

// newWriter resolves the destination; directories are created when the
// first file is opened.
func newWriter(opts *writerOptions) (*cannWriter, error) {
	w := &cannWriter{}
	if opts != nil {
		w.o = *opts
	}
	o := &w.o
	if o.Module == "" {
		o.Module = defaultModule
	}
	if o.PID == 0 {
		o.PID = os.Getpid()
	}
	if o.PName == "" {
		o.PName = filepath.Base(os.Args[0])
	}
	if o.now == nil {
		o.now = time.Now
	}
	if o.lookupEnv == nil {
		o.lookupEnv = os.LookupEnv
	}
	if o.MaxFileBytes <= 0 {
		o.MaxFileBytes = defaultMaxFileBytes
	}
	if o.MaxFiles <= 0 {
		o.MaxFiles = defaultMaxFiles
	}
	if o.Out != nil {
		w.out = stdio.Writer(o.Out)
		return w, nil
	}
	if v, ok := o.lookupEnv("ASCEND_LOG_PRINT_TO_STDOUT"); ok {
		if v == "1" {
			w.out = stdio.Writer(os.Stdout) // a closed pipe is EPIPE, never SIGPIPE
			return w, nil
		}
	} else if v, ok := o.lookupEnv("ASCEND_SLOG_PRINT_TO_STDOUT"); ok && v == "1" {
		w.out = stdio.Writer(os.Stdout)
		return w, nil
	}
	root, sub, err := logRoot(o.lookupEnv)
	if err != nil {
		return nil, err
	}
	w.root = root
	w.rel = filepath.Join(sub, "debug", fmt.Sprintf("device-%d", o.DeviceID))
	w.dir = filepath.Join(root, w.rel)
	return w, nil
}

// logRoot picks the plog root: ASCEND_PROCESS_LOG_PATH, else
// $ASCEND_WORK_PATH/log, else $HOME/ascend/log. It returns the part the
// user configured (root) and the part below it that the writer creates
// (sub), where no symbolic link is followed.
func logRoot(lookup func(string) (string, bool)) (root, sub string, err error) {
	if v, ok := lookup("ASCEND_PROCESS_LOG_PATH"); ok && v != "" {
		root, err = filepath.Abs(v)
		return root, "", err
	}
	if v, ok := lookup("ASCEND_WORK_PATH"); ok && v != "" {
		root, err = filepath.Abs(v)
		return root, "log", err
	}
	home, ok := lookup("HOME")
	if !ok || home == "" {
		return "", "", fmt.Errorf("devicebridge: no log directory: ASCEND_PROCESS_LOG_PATH, ASCEND_WORK_PATH and HOME are unset")
	}
	return home, filepath.Join("ascend", "log"), nil
}

// Dir returns the device directory, or "" when writing to a stream.
func (w *cannWriter) Dir() string { return w.dir }

var cannNames = [...]string{"DEBUG", "INFO", "WARNING", "ERROR"}

// A cannProcess names the process in every CANN record's header.
type cannProcess struct {
	Module string // "AICPU"
	PID    int
	PName  string // process name
}

// A cannRecord is one device record.
type cannRecord struct {
	Level  int  // CANN level, 0 (DEBUG) to 3 (ERROR)
	Timing bool // a TIMING record: written at WARNING with the [TIMING] tag
	Time   time.Time
	File   string
	Line   int
	TID    int64
	Func   string
	Msg    string
}

// appendCANN appends r as CANN's dlog writes it:
//
//	[LEVEL] MODULE(PID,PNAME):yyyy-mm-dd-hh:mm:ss.mmm.uuu [file:line]<payload>
//
// where the payload is what simpler's onboard device_log.cpp hands to dlog,
// "%lu %s\n\"%s\"": the thread, the function (followed by " [TIMING]" for
// a TIMING record), a newline, and the message in double quotes; then the
// newline that ends the record. A record is therefore two lines, written
// with one Write. Control bytes in every field are escaped, so the message
// can add no line of its own. Times print in local time.
func appendCANN(b []byte, p cannProcess, r cannRecord) []byte {
	level := min(max(r.Level, cannDebug), cannError)
	b = append(b, '[')
	b = append(b, cannNames[level]...)
	b = append(b, "] "...)
	b = appendClean(b, p.Module)
	b = append(b, '(')
	b = strconv.AppendInt(b, int64(p.PID), 10)
	b = append(b, ',')
	b = appendClean(b, p.PName)
	b = append(b, "):"...)
	t := r.Time.Local()
	b = t.AppendFormat(b, "2006-01-02-15:04:05.000")
	b = append(b, '.')
	us := t.Nanosecond() / 1000 % 1000
	b = append(b, byte('0'+us/100), byte('0'+us/10%10), byte('0'+us%10))
	b = append(b, " ["...)
	b = appendClean(b, r.File)
	b = append(b, ':')
	b = strconv.AppendInt(b, int64(r.Line), 10)
	b = append(b, ']')
	b = strconv.AppendInt(b, r.TID, 10)
	b = append(b, ' ')
	b = appendClean(b, r.Func)
	if r.Timing {
		b = append(b, " [TIMING]"...)
	}
	b = append(b, "\n\""...)
	b = appendClean(b, r.Msg)
	return append(b, "\"\n"...)
}

// appendClean appends s escaped for a terminal (internal/printable: control
// bytes, DEL, C1 controls, bidi controls, U+2028/U+2029 and invalid UTF-8),
// so a record is its two lines and, printed to standard output
// (ASCEND_LOG_PRINT_TO_STDOUT), can neither move the cursor nor reorder
// what follows it.
func appendClean(b []byte, s string) []byte { return printable.Append(b, s) }

// WriteRecord writes one record, in one Write (a zero Time means now).
func (w *cannWriter) WriteRecord(r cannRecord) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if r.Time.IsZero() {
		r.Time = w.o.now()
	}
	w.buf = appendCANN(w.buf[:0], cannProcess{Module: w.o.Module, PID: w.o.PID, PName: w.o.PName}, r)
	if w.out != nil {
		_, err := w.out.Write(w.buf)
		return err
	}
	if w.f != nil && w.n+int64(len(w.buf)) > w.o.MaxFileBytes {
		w.f.Close()
		w.f = nil
	}
	if w.f == nil {
		if err := w.openLocked(); err != nil {
			return err
		}
	}
	n, err := w.f.Write(w.buf)
	w.n += int64(n)
	return err
}

// openLocked starts a new file and removes this process's oldest files
// beyond MaxFiles. The device directory is made once (a link planted
// anywhere below the configured root, debug/device-0 pointing at a
// world-writable directory, is refused, and only directories made here get
// mode 0750) and then held open: every file is made, listed and removed
// relative to it, so a directory renamed away and a link planted at its
// path later never take a file elsewhere.
func (w *cannWriter) openLocked() error {
	if w.held == nil {
		if _, err := safedir.MkdirAll(w.root, w.rel, 0o750); err != nil {
			return err
		}
		held, err := os.OpenRoot(w.dir)
		if err != nil {
			return err
		}
		w.held = held
	}
	prefix := fmt.Sprintf("device-%d_", w.o.PID)
	t := w.o.now()
	var f *os.File
	for range 1000 {
		name := prefix + t.Local().Format("20060102150405") + fmt.Sprintf("%03d", t.Nanosecond()/1e6) + ".log"
		var err error
		f, err = w.held.OpenFile(name, os.O_WRONLY|os.O_CREATE|os.O_EXCL|os.O_APPEND, 0o640) // O_EXCL: never through a link
		if err == nil {
			break
		}
		if !os.IsExist(err) {
			return err
		}
		t = t.Add(time.Millisecond) // a file of this millisecond exists: take the next name
	}
	if f == nil {
		return fmt.Errorf("devicebridge: no free file name in %s", w.dir)
	}
	_ = f.Chmod(0o640)
	w.f, w.n = f, 0
	return w.pruneLocked(prefix)
}

func (w *cannWriter) pruneLocked(prefix string) error {
	d, err := w.held.Open(".")
	if err != nil {
		return err
	}
	ents, err := d.ReadDir(-1)
	d.Close()
	if err != nil {
		return err
	}
	var mine []string
	for _, e := range ents {
		if strings.HasPrefix(e.Name(), prefix) && strings.HasSuffix(e.Name(), ".log") {
			mine = append(mine, e.Name())
		}
	}
	// Names end in a fixed-width timestamp, so they sort by age.
	slices.Sort(mine)
	var errs []error
	for len(mine) > w.o.MaxFiles {
		if err := w.held.Remove(mine[0]); err != nil {
			errs = append(errs, err)
		}
		mine = mine[1:]
	}
	if len(errs) > 0 {
		return errs[0]
	}
	return nil
}

// Close closes the current file and the held directory.
func (w *cannWriter) Close() error {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.held != nil {
		w.held.Close()
		w.held = nil
	}
	if w.f != nil {
		err := w.f.Close()
		w.f = nil
		return err
	}
	return nil
}
