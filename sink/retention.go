package sink

import (
	"slices"
	"strings"
	"time"

	"simpler.dev/log/internal/logname"
)

// maxOwn bounds how many of its rotated files' names a dirFile keeps while
// no MaxFiles needs them: a service that rotates for months without
// retention does not grow a list.
const maxOwn = 1 << 12

// rotated notes a file this run just rotated to name (plain), for
// MaxFiles.
func (f *dirFile) rotated(name string, r *Rotation) {
	f.own = append(f.own, name)
	if keep := max(r.MaxFiles, maxOwn); len(f.own) > keep {
		f.own = append(f.own[:0], f.own[len(f.own)-keep:]...)
	}
}

// prune applies r's retention (SPEC §6, "Runs": each run's files are its
// own).
//
//   - MaxFiles: this run's rotated files (own: the names this dirFile
//     rotated its file to, in order) beyond MaxFiles, the oldest first.
//     Files of other runs, with the same pid or not, are never counted
//     or removed by it.
//   - MaxAge: this run's rotated files, and the files other runs left (a
//     restart's predecessors, other processes: current, rotated and
//     compressed names of the sink's pattern), last modified longer ago
//     than MaxAge; never the file this run writes, nor a file a live
//     writer holds (its advisory lock, see logDir.open), however long
//     since it was written.
//
// A rotated file and its compressed name (host.<pid>.<seq>.log and
// .log.gz, both there while a compression ends) are one file: counted once
// among those MaxFiles keeps, and removed together, after f.zip has
// forgotten its compression (one queued is dropped, one running abandoned
// before its rename).
//
// Only what the writer itself would write is removed: a name of the
// sink's own pattern (logname.Parse), a regular file with one link owned
// by this user, looked up without following a link and removed relative
// to the directory the sink holds (dirHandle.removable). A file the
// writer would refuse, a symbolic link, a directory or another program's
// host.log is left alone, and not counted among the MaxFiles kept.
// Failures are ignored: retention is tried again at the next rotation.
func (f *dirFile) prune(r *Rotation) {
	if r == nil || (r.MaxFiles == 0 && r.MaxAge == 0) {
		return
	}
	d := &f.dir
	if r.MaxAge > 0 {
		if names, err := d.dh.list(d.abs); err == nil {
			now := time.Now()
			for _, n := range names {
				if n == d.name {
					continue
				}
				if _, _, ok := logname.Parse(n); !ok {
					continue
				}
				if mt, ok := d.dh.removable(d.abs, n); !ok || now.Sub(mt) <= r.MaxAge || d.dh.live(d.abs, n) {
					continue
				}
				f.removeRotated(strings.TrimSuffix(n, logname.Gz))
			}
		}
	}
	if r.MaxFiles > 0 {
		// Newest first: the first MaxFiles that retention could remove
		// are kept; a file it could not (a hard link planted since) is
		// neither removed nor counted. What is gone (removed by age, or
		// by hand) leaves the list.
		kept, survivors := 0, make([]string, 0, min(len(f.own), r.MaxFiles+1))
		for i := len(f.own) - 1; i >= 0; i-- {
			n := f.own[i]
			if !f.dir.exists(n) {
				continue
			}
			_, plain := d.dh.removable(d.abs, n)
			_, gz := d.dh.removable(d.abs, n+logname.Gz)
			if kept < r.MaxFiles || !plain && !gz {
				if plain || gz {
					kept++
				}
				survivors = append(survivors, n)
				continue
			}
			f.removeRotated(n)
		}
		slices.Reverse(survivors)
		f.own = survivors
	}
}

// exists reports whether rotated file plain is in the directory, plain
// or compressed.
func (d *logDir) exists(plain string) bool {
	return d.dh.exists(d.abs, plain) || d.dh.exists(d.abs, plain+logname.Gz)
}

// removeRotated removes the file plain names (a rotated file, plain and
// compressed, or another run's current file), each name only if
// retention may (removable), once f.zip has forgotten its compression:
// a .gz it renamed into place meanwhile goes too.
func (f *dirFile) removeRotated(plain string) {
	d := &f.dir
	f.zip.forget(plain)
	for _, n := range []string{plain, plain + logname.Gz} {
		if _, ok := d.dh.removable(d.abs, n); ok {
			_ = d.dh.remove(d.abs, n)
		}
	}
}
