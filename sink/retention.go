package sink

import (
	"slices"
	"strings"
	"time"

	"simpler.dev/log/internal/logname"
)

// prune applies r's retention: this process's rotated files beyond
// MaxFiles (the oldest first), and by MaxAge those and every other file of
// the sink's pattern but the current one (old runs, other processes).
//
// Only what the writer itself would write is removed: a name of the
// sink's own pattern (logname.Parse), a regular file with one link owned by this
// user, looked up without following a link and removed relative to the
// directory the sink holds (dirHandle.removable). A file the writer would
// refuse, a symbolic link, a directory or another program's host.log is
// left alone, and not counted among the MaxFiles kept. Failures are
// ignored: retention is tried again at the next rotation.
func (d *logDir) prune(r *Rotation) {
	if r == nil || (r.MaxFiles == 0 && r.MaxAge == 0) {
		return
	}
	names, err := d.dh.list(d.abs)
	if err != nil {
		return
	}
	type rotated struct {
		name string
		seq  int
	}
	var own []rotated
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
		if r.MaxAge > 0 && now.Sub(mt) > r.MaxAge {
			_ = d.dh.remove(d.abs, n)
			continue
		}
		if seq > 0 && strings.HasPrefix(n, d.stem()) {
			own = append(own, rotated{n, seq})
		}
	}
	if r.MaxFiles > 0 && len(own) > r.MaxFiles {
		slices.SortFunc(own, func(a, b rotated) int { return a.seq - b.seq })
		for _, o := range own[:len(own)-r.MaxFiles] {
			_ = d.dh.remove(d.abs, o.name)
		}
	}
}
