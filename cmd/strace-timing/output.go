package main

import (
	"errors"
	"os"
	"path/filepath"
)

// An output is a file the command writes whole (a trace, a page, the
// statistics): written to a new file beside its path and renamed over it
// once complete, so that a run killed or failing while it writes leaves
// the path as it was, never a half-written file under the name (a
// killed --trace-out left a part cut in the middle of a string). A path
// that exists and is no regular file (a FIFO, /dev/stdout) is written in
// place.
type output struct {
	*os.File
	tmp, path string // tmp "" when written in place
}

// createOutput opens path for writing, as above. A new file's mode is
// 0644; a file replaced keeps its own.
func createOutput(path string) (*output, error) {
	mode := os.FileMode(0o644)
	if fi, err := os.Stat(path); err == nil {
		if !fi.Mode().IsRegular() {
			f, err := os.OpenFile(path, os.O_WRONLY|os.O_TRUNC, 0)
			if err != nil {
				return nil, err
			}
			return &output{File: f, path: path}, nil
		}
		mode = fi.Mode().Perm()
	}
	f, err := os.CreateTemp(filepath.Dir(path), "."+filepath.Base(path)+".*.tmp")
	if err != nil {
		return nil, err
	}
	if err := f.Chmod(mode); err != nil {
		f.Close()
		os.Remove(f.Name())
		return nil, err
	}
	return &output{File: f, tmp: f.Name(), path: path}, nil
}

// commit closes the file and puts it at its path; on failure the path
// is as it was and the new file is gone.
func (o *output) commit() error {
	err := o.Close()
	if o.tmp == "" {
		return err
	}
	if err == nil {
		err = os.Rename(o.tmp, o.path)
	}
	if err != nil {
		os.Remove(o.tmp)
	}
	return err
}

// abort closes the file and removes what was written of it, leaving the
// path as it was; err is returned, joined with a failure to close.
func (o *output) abort(err error) error {
	if cerr := o.Close(); cerr != nil && !errors.Is(cerr, os.ErrClosed) {
		err = errors.Join(err, cerr)
	}
	if o.tmp != "" {
		os.Remove(o.tmp)
	}
	return err
}
