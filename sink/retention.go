package sink

import (
	"maps"
	"slices"
	"strings"
	"time"

	"simpler.dev/log/internal/logname"
)

// prune applies r's retention: this process's rotated files beyond
// MaxFiles (the oldest first), and by MaxAge those and every other file of
// the sink's pattern but the current one (old runs, other processes).
// A rotated file and its compressed name (host.<pid>.<seq>.log and
// .log.gz, both there while a compression ends) are one file: counted once
// among those MaxFiles keeps, and removed together, after z has forgotten
// its compression (one queued is dropped, one running abandoned before
// its rename).
//
// Only what the writer itself would write is removed: a name of the
// sink's own pattern (logname.Parse), a regular file with one link owned by this
// user, looked up without following a link and removed relative to the
// directory the sink holds (dirHandle.removable). A file the writer would
// refuse, a symbolic link, a directory or another program's host.log is
// left alone, and not counted among the MaxFiles kept. Failures are
// ignored: retention is tried again at the next rotation.
func (d *logDir) prune(r *Rotation, z *compressor) {
	if r == nil || (r.MaxFiles == 0 && r.MaxAge == 0) {
		return
	}
	names, err := d.dh.list(d.abs)
	if err != nil {
		return
	}
	own := map[int]bool{} // this process's rotated files, by seq
	now := time.Now()
	for _, n := range names {
		if n == d.name {
			continue
		}
		_, seq, ok := logname.Parse(n)
		if !ok {
			continue
		}
		mt, ok := d.dh.removable(d.abs, n)
		if !ok {
			continue
		}
		mine := seq > 0 && strings.HasPrefix(n, d.stem())
		if r.MaxAge > 0 && now.Sub(mt) > r.MaxAge {
			if mine {
				d.removeRotated(seq, z)
				delete(own, seq)
			} else {
				_ = d.dh.remove(d.abs, n)
			}
			continue
		}
		if mine {
			own[seq] = true
		}
	}
	if r.MaxFiles > 0 && len(own) > r.MaxFiles {
		seqs := slices.Sorted(maps.Keys(own))
		for _, seq := range seqs[:len(seqs)-r.MaxFiles] {
			d.removeRotated(seq, z)
		}
	}
}

// removeRotated removes this process's rotated file seq, plain and
// compressed, each only if retention may (removable), once z has
// forgotten its compression: a .gz it renamed into place meanwhile goes
// too.
func (d *logDir) removeRotated(seq int, z *compressor) {
	plain := d.rotatedName(seq)
	z.forget(plain)
	for _, n := range []string{plain, plain + logname.Gz} {
		if _, ok := d.dh.removable(d.abs, n); ok {
			_ = d.dh.remove(d.abs, n)
		}
	}
}
