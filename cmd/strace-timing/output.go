package main

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
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
	// unnamed: the file has no name until commit (createUnnamed); tmp is
	// the name commit gives it before the rename.
	unnamed bool
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
	if f, ok := createUnnamed(path, mode); ok {
		return &output{File: f, path: path, unnamed: true}, nil
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
	var err error
	if o.unnamed {
		err = o.name() // o.tmp "" once at its path
	}
	if cerr := o.Close(); err == nil {
		err = cerr
	}
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
	if o.tmp != "" && !o.unnamed {
		os.Remove(o.tmp)
	}
	return err
}

// linkOutput is nameUnnamed; a test makes it fail.
var linkOutput = nameUnnamed

// name gives the unnamed file its path when nothing is there yet, else a
// hidden name beside it (o.tmp), to be renamed over it: linked, or, where
// that fails, copied into a new hidden file. Its bytes are synced first, so that a crash after the
// rename finds them whole.
func (o *output) name() error {
	if err := o.Sync(); err != nil {
		return err
	}
	dir, base := filepath.Dir(o.path), filepath.Base(o.path)
	// At its path at once where nothing is there yet: no moment with a
	// second name that a kill could leave behind.
	if err := linkOutput(o.File, o.path); err == nil {
		o.tmp = ""
		return nil
	}
	for range 8 {
		o.tmp = filepath.Join(dir, fmt.Sprintf(".%s.%d.%d.tmp", base, os.Getpid(), rand.Uint32()))
		if err := linkOutput(o.File, o.tmp); err == nil {
			return nil
		} else if !errors.Is(err, fs.ErrExist) {
			break
		}
	}
	// Not linked: the bytes go into a named file instead.
	f, err := os.CreateTemp(dir, "."+base+".*.tmp")
	if err != nil {
		o.tmp = ""
		return err
	}
	o.tmp = f.Name()
	fi, err := o.Stat()
	if err == nil {
		err = f.Chmod(fi.Mode().Perm())
	}
	if err == nil {
		_, err = io.Copy(f, io.NewSectionReader(o.File, 0, fi.Size()))
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(o.tmp)
		o.tmp = ""
	}
	return err
}
