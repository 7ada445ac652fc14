package sink

import (
	"path/filepath"
	"sync/atomic"
)

// A logDir is where a dirFile's files are: the bound directory, held
// open (dh), and this run's names in it. The file is opened, checked,
// renamed and pruned relative to dh, so a directory renamed or removed
// after the bind, or a symbolic link planted at its path, never takes the
// files elsewhere; only Reopen looks the path up again (dirFile.reopen).
// It belongs to one dirFile and, like it, is not safe for concurrent use,
// but for path.
type logDir struct {
	abs string // the directory, absolute; immutable
	// name is the file's name, host.<pid>.log, or once that was found to
	// be another run's, the run's own host.<pid>-<tag>.log (dirFile.open);
	// filePath is abs/name. Both change only under the sink's lock (or in
	// the BindDir that opens the file, before it is shared), through
	// setName, which publishes filePath in path for Sink.Path, which
	// takes no lock.
	name     string
	filePath string
	path     atomic.Pointer[string]
	dh       dirHandle // abs, held open; replaced only by dirFile.reopen
}

// setName makes name the file's name.
func (d *logDir) setName(name string) {
	d.name, d.filePath = name, filepath.Join(d.abs, name)
	p := d.filePath
	d.path.Store(&p)
}
