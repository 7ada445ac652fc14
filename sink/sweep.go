package sink

import (
	"compress/gzip"
	"hash/crc32"
	"io"
	"strings"
	"time"

	"simpler.dev/log/internal/logname"
)

// sweep cleans what killed runs left in the directory, at the bind, before
// this run opens its file: a run killed while it compressed leaves its
// temporary .gz (.host.<set>.<seq>.log.gz.tmp, never renamed into place),
// or a rotated file beside its finished .gz (killed between the rename
// and the removal: gunzip logs/*.gz then stops at it), and one killed
// right after it made its file leaves that file empty, without its run
// record (removed at once when its name has a run's tag, host.<pid>-<tag>.log,
// which only this library writes; else once it is emptyGrace old: a
// writer that locks nothing, simpler's own, may be about to fill it).
// Only a dead run's debris is
// touched: a run is live while it
// holds the share lock on its current file, host.<set>.log (see
// logDir.open), and where that cannot be told (livenessKnown false) the
// sweep does nothing. Each rule loses no record even if it misjudges a
// live run between two of its files: a temporary file holds only a copy,
// a rotated file goes only when its .gz decompresses whole to the same
// bytes, and an empty file holds nothing. What it removes it says once on
// standard error.
func (f *dirFile) sweep() {
	if !livenessKnown {
		return
	}
	names, err := f.dir.dh.list(f.dir.abs)
	if err != nil {
		return
	}
	present := make(map[string]bool, len(names))
	for _, n := range names {
		present[n] = true
	}
	live := map[string]bool{} // by set, asked once
	dead := func(set string) bool {
		l, ok := live[set]
		if !ok {
			l = f.dir.dh.live(f.dir.abs, logname.Current(set))
			live[set] = l
		}
		return !l
	}
	var removed []string
	remove := func(name string) {
		if f.dir.dh.remove(f.dir.abs, name) == nil {
			removed = append(removed, name)
		}
	}
	for _, name := range names {
		if plain, ok := strings.CutPrefix(name, "."); ok && strings.HasSuffix(plain, logname.Gz+".tmp") {
			plain = strings.TrimSuffix(plain, logname.Gz+".tmp")
			if set, seq, ok := logname.Parse(plain); ok && seq > 0 && dead(set) {
				remove(name) // a compression a kill cut short
			}
			continue
		}
		set, seq, ok := logname.Parse(name)
		switch {
		case !ok || strings.HasSuffix(name, logname.Gz):
		case seq > 0 && present[name+logname.Gz] && dead(set) && f.dir.sameAsGz(name):
			remove(name) // its .gz is whole: the kill fell before the removal
		case seq == 0 && dead(set) && f.dir.empty(name, logname.PID(set) != set):
			remove(name) // made, then killed before its run record
		}
	}
	if len(removed) > 0 {
		f.say("sink: removed what killed runs left in " + f.dir.abs + ": " + strings.Join(removed, ", ") + "\n")
	}
}

// emptyGrace is how old an empty, unlocked current file without a run's
// tag must be for the sweep to take it for a killed run's: a writer that
// does not lock its file (simpler's C++ one) writes into the file it made
// and would not notice it gone. A run of this library locks the file it
// makes microseconds after the create, and one the sweep catches in
// between loses nothing: its next check finds the file unlinked and
// writes its records into a new one (SPEC §6); so its tagged files need
// no grace, and a container that restarts at once finds none left (issue
// 54: 12 kills, then a restart, left an empty host.1-<tag>.log).
const emptyGrace = 10 * time.Second

// empty reports whether name is an empty regular file, last changed at
// least emptyGrace ago unless tagged.
func (d *logDir) empty(name string, tagged bool) bool {
	r, _, err := d.dh.openRotated(d.abs, name)
	if err != nil {
		return false
	}
	defer r.Close()
	fi, err := r.Stat()
	return err == nil && fi.Size() == 0 && (tagged || time.Since(fi.ModTime()) >= emptyGrace)
}

// sameAsGz reports whether the rotated file name and its .gz hold the same
// bytes: the .gz decompresses whole (its checksum holds) to name's length
// and CRC-32.
func (d *logDir) sameAsGz(name string) bool {
	sum := func(r io.Reader) (int64, uint32, bool) {
		h := crc32.NewIEEE()
		n, err := io.Copy(h, r)
		return n, h.Sum32(), err == nil
	}
	plain, _, err := d.dh.openRotated(d.abs, name)
	if err != nil {
		return false
	}
	defer plain.Close()
	gz, _, err := d.dh.openRotated(d.abs, name+logname.Gz)
	if err != nil {
		return false
	}
	defer gz.Close()
	zr, err := gzip.NewReader(gz)
	if err != nil {
		return false
	}
	pn, ps, pok := sum(plain)
	zn, zs, zok := sum(zr)
	return pok && zok && pn == zn && ps == zs && zr.Close() == nil
}
