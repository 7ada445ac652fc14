package atrace

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/trace"
	"slices"
	"strings"
	"time"

	"simpler.dev/log/internal/safedir"
)

// stackcore is what a stackcore event adds: the signal (0 for a panic),
// the thread or goroutine, and every goroutine's stack.
type stackcore struct {
	sig    int
	tid    int64
	stacks []byte
}

// programName is the base name of the program, for stackcore file names.
var programName = filepath.Base(os.Args[0])

// dump writes one event directory: the ring's records, the stacks for a
// stackcore event, and the flight recorder's snapshot when it runs. Dumps
// are serialised; the ring is copied under its own lock first, so logging
// goes on while the files are written.
func (s *shared) dump(event string, device bool, core *stackcore) (string, error) {
	ring, object := s.host, "host"
	if device {
		ring, object = s.device, "device"
	}
	records, lost := ring.snapshot()

	s.dumpMu.Lock()
	defer s.dumpMu.Unlock()
	if s.closed {
		return "", errRecorderClosed
	}
	// Two dumps never share a directory: each takes a time strictly after
	// the last one's (at microsecond resolution).
	t := s.opts.now().Truncate(time.Microsecond)
	if !t.After(s.lastTime) {
		t = s.lastTime.Add(time.Microsecond)
	}
	s.lastTime = t
	name := fmt.Sprintf("%s_event_%d_%s", event, s.pid, stamp(t))
	dir := filepath.Join(s.root, name)

	// Aging as CANN's TraceRecorderSaveNode: schedule and stackcore
	// directories count against ASCEND_TRACE_RECORD_NUM, per side; exit
	// is exempt, and only this process's latest exit directory is kept.
	aged := event != eventExit
	list := &s.hostDirs
	if device {
		list = &s.devDirs
	}
	if err := s.hold(); err != nil {
		return dir, fmt.Errorf("atrace: %w", err)
	}
	if !aged {
		if s.exitDir != "" && s.exitDir != dir {
			if err := removeAll(s.held, s.rel(s.exitDir)); err != nil {
				s.warn(fmt.Sprintf("could not remove old trace directory %s: %v", s.exitDir, err))
			}
		}
		s.exitDir = dir
	}
	if aged && !slices.Contains(*list, dir) {
		for len(*list) >= s.maxDirs {
			old := (*list)[0]
			*list = (*list)[1:]
			if err := removeAll(s.held, s.rel(old)); err != nil {
				s.warn(fmt.Sprintf("could not remove old trace directory %s: %v", old, err))
			} else if _, err := s.held.Lstat(s.rel(old)); err == nil {
				s.warn(fmt.Sprintf("could not remove old trace directory %s", old))
			}
		}
		*list = append(*list, dir)
	}
	// Below the root nothing is followed: a link planted at any level of
	// the tree is refused, and only directories made here are chmodded.
	rel := filepath.Join(s.tree, name)
	if err := s.mkdirs(rel); err != nil {
		return dir, fmt.Errorf("atrace: %w", err)
	}
	var errs []error
	head := fmt.Sprintf("# %s event, pid %d, %d records kept, %d older records pushed out of the ring\n", event, s.pid, bytes.Count(records, []byte{'\n'}), lost)
	errs = append(errs, writeFile(s.held, filepath.Join(rel, fmt.Sprintf("%s_tracer_%s.txt", event, object)), []byte(head), records))
	if core != nil {
		name := fmt.Sprintf("stackcore_tracer_%d_%d_%s_%s.txt", core.sig, core.tid, programName, stamp(t))
		errs = append(errs, writeFile(s.held, filepath.Join(rel, name), core.stacks))
	}
	if fr := s.opts.FlightRecorder; fr != nil && fr.Enabled() {
		errs = append(errs, writeFlight(s.held, filepath.Join(rel, "go.trace"), fr))
	}
	s.dumps.Add(1)
	return dir, errors.Join(errs...)
}

// hold opens the dump root once, making it first if it is missing: from
// then on every directory and file is made relative to it (os.Root), so a
// root renamed away and a link planted at its path never take a dump
// elsewhere. dumpMu must be held.
func (s *shared) hold() error {
	if s.held != nil {
		return nil
	}
	if _, err := safedir.MkdirAll(s.base, "", 0o750); err != nil {
		return err
	}
	held, err := os.OpenRoot(s.base)
	if err != nil {
		return err
	}
	s.held = held
	return nil
}

// rel returns path, a dump directory, relative to the root.
func (s *shared) rel(path string) string {
	r, err := filepath.Rel(s.base, path)
	if err != nil {
		return path
	}
	return r
}

// mkdirs makes rel below the held root one component at a time: a
// component that exists must be a directory, not a symbolic link (refused
// with safedir.ErrSymlink, as below a root everywhere here); one made here
// gets mode 0750 whatever the umask.
func (s *shared) mkdirs(rel string) error {
	at := ""
	for _, c := range strings.Split(filepath.ToSlash(rel), "/") {
		at = filepath.Join(at, c)
		switch err := s.held.Mkdir(at, 0o750); {
		case err == nil:
			if err := s.held.Chmod(at, 0o750); err != nil {
				return err
			}
		case errors.Is(err, fs.ErrExist):
			fi, err := s.held.Lstat(at)
			if err != nil {
				return err
			}
			if !fi.IsDir() {
				return fmt.Errorf("%w: %s", safedir.ErrSymlink, filepath.Join(s.base, at))
			}
		default:
			return err
		}
	}
	return nil
}

// writeFile writes parts to a new file of mode 0640, whatever the umask.
func writeFile(root *os.Root, path string, parts ...[]byte) error {
	return create(root, path, func(w io.Writer) error {
		for _, p := range parts {
			if _, err := w.Write(p); err != nil {
				return err
			}
		}
		return nil
	})
}

// writeFlight writes the flight recorder's snapshot.
func writeFlight(root *os.Root, path string, fr *trace.FlightRecorder) error {
	return create(root, path, func(w io.Writer) error {
		_, err := fr.WriteTo(w)
		return err
	})
}

// create makes path with mode 0640 (whatever the umask) and fills it. It
// opens for append (O_CREAT|O_WRONLY|O_APPEND, as CANN does) and never
// through a symbolic link.
func create(root *os.Root, path string, fill func(io.Writer) error) error {
	f, err := root.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|oNoFollow, 0o640)
	if err != nil {
		return err
	}
	if err := fill(f); err != nil {
		f.Close()
		return err
	}
	if err := f.Chmod(0o640); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}

// removeAll is root.RemoveAll; tests replace it to make a removal fail
// (they run as root in CI, where a read-only directory can still be
// removed).
var removeAll = func(root *os.Root, rel string) error { return root.RemoveAll(rel) }
