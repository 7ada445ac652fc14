//go:build linux

package hostiletest

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"
	"net"
	"os"
	"path/filepath"
	"simpler.dev/log/internal/testkit/logtest"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"golang.org/x/sys/unix"
	"golang.org/x/term"

	"simpler.dev/log/internal/testkit/ptytest"
	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
)

// fdCount counts the process's open descriptors.
func fdCount() (int, bool) {
	es, err := os.ReadDir("/proc/self/fd")
	if err != nil {
		return 0, false
	}
	return len(es) - 1, true // less the one that read the directory
}

// fullDisk: RLIMIT_FSIZE makes the log file "full" a little past its
// size (the write that crosses it is cut short, the next fail with
// EFBIG, as on a full disk); Go ignores SIGXFSZ, so the process lives.
func fullDisk(t *testing.T, y *tally) {
	fullDiskRun(t, y, func(path string) (func(), error) {
		fi, err := os.Stat(path)
		if err != nil {
			return nil, err
		}
		var old unix.Rlimit
		if err := unix.Getrlimit(unix.RLIMIT_FSIZE, &old); err != nil {
			return nil, err
		}
		lim := unix.Rlimit{Cur: uint64(fi.Size()) + 20011, Max: old.Max}
		if err := unix.Setrlimit(unix.RLIMIT_FSIZE, &lim); err != nil {
			return nil, err
		}
		undo := func() { _ = unix.Setrlimit(unix.RLIMIT_FSIZE, &old) }
		t.Cleanup(undo)
		return undo, nil
	})
}

// A victim is something in the file system that is not the library's:
// it must keep its bytes and its name.
type victim struct {
	what string
	path string
	kind string // file, dir, fifo, absent, entry
	ino  uint64
	sum  string
	fifo *os.File // the reader end, for a FIFO
}

func fileSum(path string) (ino uint64, sum string, err error) {
	var st unix.Stat_t
	if err := unix.Lstat(path, &st); err != nil {
		return 0, "", err
	}
	if st.Mode&unix.S_IFMT != unix.S_IFREG {
		return st.Ino, "", nil
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return 0, "", err
	}
	h := sha256.Sum256(b)
	return st.Ino, hex.EncodeToString(h[:]), nil
}

// dirSum lists a directory's tree (names relative to it) with each
// file's content hash.
func dirSum(path string) string {
	var b strings.Builder
	_ = filepath.WalkDir(path, func(p string, d os.DirEntry, err error) error {
		if err != nil {
			return nil
		}
		_, s, _ := fileSum(p)
		rel, _ := filepath.Rel(path, p)
		fmt.Fprintf(&b, "%s %s\n", rel, s)
		return nil
	})
	return b.String()
}

// find returns where the entry with inode ino is now: its path when it
// is still there, else another name in the same directory (a rename),
// else "".
func find(path string, ino uint64) string {
	var st unix.Stat_t
	if unix.Lstat(path, &st) == nil && st.Ino == ino {
		return path
	}
	dir := filepath.Dir(path)
	es, _ := os.ReadDir(dir)
	for _, e := range es {
		p := filepath.Join(dir, e.Name())
		if unix.Lstat(p, &st) == nil && st.Ino == ino {
			return p
		}
	}
	return ""
}

func watchFile(t *testing.T, what, path string) *victim {
	ino, sum, err := fileSum(path)
	require.NoError(t, err)
	return &victim{what: what, path: path, kind: "file", ino: ino, sum: sum}
}

func watchEntry(t *testing.T, what, path string) *victim {
	var st unix.Stat_t
	require.NoError(t, unix.Lstat(path, &st))
	return &victim{what: what, path: path, kind: "entry", ino: st.Ino}
}

func watchDir(t *testing.T, what, path string) *victim {
	var st unix.Stat_t
	require.NoError(t, unix.Lstat(path, &st))
	return &victim{what: what, path: path, kind: "dir", ino: st.Ino, sum: dirSum(path)}
}

// check says what happened to v: damage when bytes were written into it
// or it was removed; renamed when it is whole but under another name of
// its directory (counted by neither: see judge).
func (v *victim) check() (damage string, renamed string) {
	if v.kind == "absent" {
		if _, err := os.Lstat(v.path); err == nil {
			return fmt.Sprintf("%s (%s) created through a link", v.what, v.path), ""
		}
		return "", ""
	}
	if v.kind == "fifo" {
		b := make([]byte, 4096)
		if n, _ := v.fifo.Read(b); n > 0 {
			return fmt.Sprintf("%s (%s): %d bytes written into it: %q", v.what, v.path, n, b[:n]), ""
		}
	}
	now := find(v.path, v.ino)
	if now == "" {
		return fmt.Sprintf("%s (%s) removed", v.what, v.path), ""
	}
	if now != v.path {
		renamed = fmt.Sprintf("%s planted at %s was renamed %s", v.what, filepath.Base(v.path), filepath.Base(now))
	}
	switch v.kind {
	case "file":
		if _, sum, err := fileSum(now); err != nil || sum != v.sum {
			return fmt.Sprintf("%s (%s) written to", v.what, now), renamed
		}
	case "dir":
		if sum := dirSum(now); sum != v.sum {
			return fmt.Sprintf("%s (%s) changed: was\n%snow\n%s", v.what, now, v.sum, sum), renamed
		}
	}
	return "", renamed
}

// A plant puts something that is not the library's at path (a name the
// sink writes or reads), with the victims outside (in vdir) it could
// hurt, and returns them all.
type plant struct {
	name     string
	rootOnly bool
	put      func(t *testing.T, path, vdir string) []*victim
}

const otherUID = 65534 // nobody

func plants() []plant {
	victimFile := func(t *testing.T, vdir, name string) (string, *victim) {
		p := filepath.Join(vdir, name)
		require.NoError(t, os.WriteFile(p, []byte("not the library's: "+name+"\n"), 0o644))
		return p, watchFile(t, "a file outside the log directory", p)
	}
	return []plant{
		{name: "a symbolic link to another file", put: func(t *testing.T, path, vdir string) []*victim {
			target, v := victimFile(t, vdir, "symlinked-"+filepath.Base(path))
			require.NoError(t, os.Symlink(target, path))
			return []*victim{v, watchEntry(t, "a symbolic link", path)}
		}},
		{name: "a dangling symbolic link", put: func(t *testing.T, path, vdir string) []*victim {
			target := filepath.Join(vdir, "absent-"+filepath.Base(path))
			require.NoError(t, os.Symlink(target, path))
			return []*victim{{what: "the target of a dangling link", path: target, kind: "absent"}, watchEntry(t, "a dangling symbolic link", path)}
		}},
		{name: "a hard link to another file", put: func(t *testing.T, path, vdir string) []*victim {
			target, v := victimFile(t, vdir, "hardlinked-"+filepath.Base(path))
			require.NoError(t, os.Link(target, path))
			return []*victim{v, watchEntry(t, "a hard link", path)}
		}},
		{name: "a FIFO with a reader", put: func(t *testing.T, path, _ string) []*victim {
			require.NoError(t, unix.Mkfifo(path, 0o600))
			r, err := os.OpenFile(path, os.O_RDONLY|syscall.O_NONBLOCK, 0)
			require.NoError(t, err)
			t.Cleanup(func() { r.Close() })
			v := watchEntry(t, "a FIFO", path)
			v.kind, v.fifo = "fifo", r
			return []*victim{v}
		}},
		{name: "a socket", put: func(t *testing.T, path, _ string) []*victim {
			// Bound at a short path (a socket's is at most 107 bytes),
			// then renamed into place.
			short, err := os.MkdirTemp("", "s")
			require.NoError(t, err)
			t.Cleanup(func() { os.RemoveAll(short) })
			l, err := net.Listen("unix", filepath.Join(short, "s"))
			require.NoError(t, err)
			l.(*net.UnixListener).SetUnlinkOnClose(false)
			t.Cleanup(func() { l.Close() })
			require.NoError(t, os.Rename(filepath.Join(short, "s"), path))
			return []*victim{watchEntry(t, "a socket", path)}
		}},
		{name: "a directory", put: func(t *testing.T, path, _ string) []*victim {
			require.NoError(t, os.Mkdir(path, 0o755))
			require.NoError(t, os.WriteFile(filepath.Join(path, "inside"), []byte("inside\n"), 0o644))
			return []*victim{watchDir(t, "a directory", path)}
		}},
		{name: "another user's file", rootOnly: true, put: func(t *testing.T, path, _ string) []*victim {
			require.NoError(t, os.WriteFile(path, []byte("nobody's log\n"), 0o666))
			require.NoError(t, os.Chown(path, otherUID, otherUID))
			return []*victim{watchFile(t, "another user's file", path)}
		}},
	}
}

// judge counts each victim's damage as a failure and a rename as a note.
func judge(y *tally, where string, vs []*victim) {
	for _, v := range vs {
		y.tried(catUnsafe, 1)
		damage, renamed := v.check()
		if damage != "" {
			y.fail(catUnsafe, 1, "%s: %s", where, damage)
		}
		if renamed != "" {
			y.note(catUnsafe, "%s: %s (not removed, not written: not counted)", where, renamed)
		}
	}
}

func logSome(st *slogsimpler.State, n int) {
	l := slog.New(st.Handler())
	pad := strings.Repeat("p", 200)
	for i := range n {
		l.Info("r", "i", i, "pad", pad)
	}
	l.Error("e")
	_ = st.Flush(logtest.Within(time.Second))
}

// unsafeSection plants everything a hostile user can at every name the
// sink touches, at the bind, at a Reopen, at rotation and at retention,
// and counts every byte written into, and every removal of, what is not
// the library's.
func unsafeSection(t *testing.T, y *tally) {
	root := os.Geteuid() == 0
	if !root {
		y.note(catUnsafe, "not root: another user's files and links are not tried")
	}
	pid := os.Getpid()
	name := fmt.Sprintf("host.%d.log", pid)
	for _, p := range plants() {
		if p.rootOnly && !root {
			continue
		}
		t.Run("at bind: "+p.name, func(t *testing.T) {
			d, vdir := plantDirs(t)
			vs := p.put(t, filepath.Join(d, name), vdir)
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Output: &bytes.Buffer{}})
			require.NoError(t, err)
			bindErr := st.BindDir(d)
			logSome(st, 5)
			_ = st.Close()
			if bindErr == nil {
				y.note(catUnsafe, "at bind: %s: BindDir accepted it", p.name)
			}
			judge(y, "at bind, "+p.name, vs)
		})
		t.Run("at Reopen: "+p.name, func(t *testing.T) {
			d, vdir := plantDirs(t)
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Dir: d})
			require.NoError(t, err)
			require.NoError(t, st.Start())
			logSome(st, 5)
			require.NoError(t, os.Rename(filepath.Join(d, name), filepath.Join(d, "renamed-away.log")))
			vs := p.put(t, filepath.Join(d, name), vdir)
			st.Reopen()
			logSome(st, 20)
			_ = st.Close()
			judge(y, "at Reopen, "+p.name, vs)
		})
		t.Run("at rotation, planted at the next rotated name: "+p.name, func(t *testing.T) {
			d, vdir := plantDirs(t)
			var vs []*victim
			for seq := 1; seq <= 3; seq++ {
				vs = append(vs, p.put(t, filepath.Join(d, fmt.Sprintf("host.%d.%08d.log", pid, seq)), vdir)...)
			}
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Dir: d,
				Rotation: sink.Rotation{MaxSize: minRotateSize, MaxFiles: 1}})
			require.NoError(t, err)
			require.NoError(t, st.Start())
			logSome(st, 1500) // about six rotations
			_ = st.Close()
			judge(y, "at rotation (next name), "+p.name, vs)
		})
		t.Run("at rotation, the current name replaced just before it: "+p.name, func(t *testing.T) {
			d, vdir := plantDirs(t)
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Dir: d,
				Rotation: sink.Rotation{MaxSize: minRotateSize, MaxFiles: 1}}) // synchronous: each record written in its call
			require.NoError(t, err)
			l := slog.New(st.Handler())
			pad := strings.Repeat("p", 200)
			for i := 0; ; i++ {
				l.Info("r", "i", i, "pad", pad)
				if fi, err := os.Stat(filepath.Join(d, name)); err == nil && fi.Size() > minRotateSize-1000 {
					break
				}
			}
			require.NoError(t, os.Rename(filepath.Join(d, name), filepath.Join(d, "renamed-away.log")))
			vs := p.put(t, filepath.Join(d, name), vdir)
			for i := range 20 {
				l.Info("r", "i", i, "pad", pad) // the next rotation comes within these
			}
			_ = st.Close()
			judge(y, "at rotation (current name), "+p.name, vs)
		})
	}
	t.Run("at Reopen: the directory replaced by a link, in a world-writable parent", func(t *testing.T) {
		reopenDirLink(t, y, 0o777, false)
	})
	if root {
		t.Run("at Reopen: the directory replaced by another user's link, in a sticky parent", func(t *testing.T) {
			reopenDirLink(t, y, 0o1777, true)
		})
		t.Run("at Reopen: the directory replaced by another user's directory", func(t *testing.T) {
			base := t.TempDir()
			d := filepath.Join(base, "logs")
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Dir: d})
			require.NoError(t, err)
			require.NoError(t, st.Start())
			logSome(st, 5)
			require.NoError(t, os.Rename(d, d+".moved"))
			require.NoError(t, os.Mkdir(d, 0o777))
			require.NoError(t, os.Chown(d, otherUID, otherUID))
			v := watchDir(t, "another user's directory at the bound path", d)
			st.Reopen()
			logSome(st, 20)
			_ = st.Close()
			judge(y, "at Reopen, another user's directory", []*victim{v})
		})
	}
	t.Run("without Reopen: a link planted and noticed by the periodic check", func(t *testing.T) {
		d, vdir := plantDirs(t)
		st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Dir: d})
		require.NoError(t, err)
		require.NoError(t, st.Start())
		logSome(st, 5)
		require.NoError(t, os.Rename(filepath.Join(d, name), filepath.Join(d, "renamed-away.log")))
		vs := plants()[0].put(t, filepath.Join(d, name), vdir)
		time.Sleep(1100 * time.Millisecond) // the path is compared with the open file once a second
		logSome(st, 20)
		_ = st.Close()
		judge(y, "periodic check, a symbolic link", vs)
	})
	t.Run("at retention: old entries of every kind at the sink's names and others", func(t *testing.T) {
		retention(t, y, root)
	})
}

// reopenDirLink binds base/logs in a parent of the given mode, then
// moves the directory away and plants a link to a victim directory at
// its path (owned by another user when other), and reopens.
func reopenDirLink(t *testing.T, y *tally, mode os.FileMode, other bool) {
	base := t.TempDir()
	parent, vdir := filepath.Join(base, "shared"), filepath.Join(base, "victim-dir")
	require.NoError(t, os.MkdirAll(parent, 0o750))
	require.NoError(t, os.Chmod(parent, mode))
	require.NoError(t, os.MkdirAll(vdir, 0o777))
	require.NoError(t, os.WriteFile(filepath.Join(vdir, "theirs"), []byte("theirs\n"), 0o644))
	d := filepath.Join(parent, "logs")
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Dir: d})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	logSome(st, 5)
	require.NoError(t, os.Rename(d, d+".moved"))
	require.NoError(t, os.Symlink(vdir, d))
	if other {
		require.NoError(t, os.Lchown(d, otherUID, otherUID))
	}
	v := watchDir(t, "the directory a planted link points at", vdir)
	st.Reopen()
	logSome(st, 20)
	_ = st.Close()
	judge(y, fmt.Sprintf("at Reopen, the directory replaced by a link (parent %#o, link of another user: %v)", mode, other), []*victim{v})
}

// retention plants old entries at names of the sink's pattern that
// retention must not take (links, FIFOs, directories, another user's
// files) and old files of ours at names outside its pattern, then binds
// with MaxAge and MaxFiles and rotates a few times.
func retention(t *testing.T, y *tally, root bool) {
	d, vdir := plantDirs(t)
	pid := os.Getpid()
	old := time.Now().Add(-30 * 24 * time.Hour)
	var vs []*victim
	i := 0
	for _, p := range plants() {
		if p.rootOnly && !root {
			continue
		}
		for _, n := range []string{fmt.Sprintf("host.%d.%08d.log", pid, 90+i), fmt.Sprintf("host.%d.log", pid+1000+i)} {
			path := filepath.Join(d, n)
			vs = append(vs, p.put(t, path, vdir)...)
			ts := []unix.Timeval{unix.NsecToTimeval(old.UnixNano()), unix.NsecToTimeval(old.UnixNano())}
			_ = unix.Lutimes(path, ts)
		}
		i++
	}
	for _, n := range []string{fmt.Sprintf("host.%d.log.1", pid), "notes.txt", "host..log", "host.x.log",
		fmt.Sprintf("host.%d.1.log", pid), fmt.Sprintf("host.%d.000000001.log", pid), fmt.Sprintf("HOST.%d.log", pid),
		fmt.Sprintf("host.%d.00000000.log", pid), fmt.Sprintf("host.%d.log~", pid)} {
		path := filepath.Join(d, n)
		require.NoError(t, os.WriteFile(path, []byte("ours, but no log of the sink's: "+n+"\n"), 0o640))
		require.NoError(t, os.Chtimes(path, old, old))
		vs = append(vs, watchFile(t, "a file outside the sink's names", path))
	}
	// The victims' own times must not say "old" to anything but retention.
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Dir: d,
		Rotation: sink.Rotation{MaxSize: minRotateSize, MaxFiles: 1, MaxAge: time.Hour}})
	require.NoError(t, err)
	require.NoError(t, st.Start())
	logSome(st, 1500)
	_ = st.Close()
	judge(y, "at retention", vs)
	es, _ := os.ReadDir(d)
	var names []string
	for _, e := range es {
		names = append(names, e.Name())
	}
	sort.Strings(names)
	y.note(catUnsafe, "retention left %d names in the directory", len(names))
}

// plantUnsafe: the library's own file watched as if it were a victim:
// the next records are bytes written into it, and judge counts them.
func plantUnsafe(t *testing.T, y *tally) {
	d := t.TempDir()
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Dir: d})
	require.NoError(t, err)
	logSome(st, 1)
	v := watchFile(t, "planted: the library's own file, watched", st.Path())
	logSome(st, 1)
	require.NoError(t, st.Close())
	judge(y, "planted", []*victim{v})
}

// openPTY opens a pseudo-terminal in raw mode (no \n to \r\n), for a
// console that must see a terminal.
func openPTY() (master, slave *os.File, err error) {
	m, s, err := ptytest.Open()
	if err != nil {
		return nil, nil, err
	}
	if _, err := term.MakeRaw(int(s.Fd())); err != nil {
		s.Close()
		m.Close()
		return nil, nil, err
	}
	return m, s, nil
}

// plantDirs makes the log directory a case binds and, beside it, the
// directory its victims live in (what a planted link points into).
func plantDirs(t *testing.T) (logs, outside string) {
	base := t.TempDir()
	logs, outside = filepath.Join(base, "logs"), filepath.Join(base, "outside")
	require.NoError(t, os.MkdirAll(logs, 0o750))
	require.NoError(t, os.MkdirAll(outside, 0o750))
	return logs, outside
}
