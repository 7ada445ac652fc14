package sink

import (
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"simpler.dev/log/internal/logname"
)

// A compressor gzips a bound directory's rotated files (Rotation.Compress)
// off the writer's path: a rotation hands it the file it renamed (add,
// under the output's lock: an append and, when none is running, a go
// statement), and a goroutine of its own, which lives while there is work,
// writes host.<pid>.<seq>.log.gz beside it, then removes the plain file.
// Nothing a producer or the writer does waits for a compression: the
// writer takes mu briefly (add, and retention's forget), and the goroutine
// holds it for no more than one rename.
//
// Each file goes through a temporary name in the same directory
// (tempName), made and renamed through a descriptor of the directory the
// jobs share, taken at the first rotation that queues one and closed with
// the last job (a Reopen or Close that closes the dirFile's handle leaves
// the jobs theirs; however many files wait, they hold one descriptor),
// never by path: it is written,
// fsync'd, stamped with the plain file's modification time (so MaxAge ages
// it by its records, not by its compression), renamed into place, never
// over an existing name, and the directory fsync'd before the plain file
// is removed. The file compressed is the one the rotation renamed (the
// same device and inode, looked up without following a link): anything
// else at the name since is left alone.
//
// A failure (a full disk, a read-only directory) leaves the plain file as
// it was, whole and readable, and removes the temporary one; it is counted
// (Counts.CompressFailed) and said on standard error, once: again only
// after a compression has succeeded since. A job retention is about to remove is
// dropped, or abandoned if it has begun (forget); Close gives what is left
// its remaining time and abandons the rest (finish).
type compressor struct {
	// failed is the sink's Counts.CompressFailed; set by openFile.
	failed *atomic.Uint64
	// say writes a report on standard error (dirFile.say: or a test's
	// warn); set by openFile.
	say func(msg string)
	// testWrite, when set, writes the compressed bytes instead of
	// f.Write: tests make a disk that fills up with it. Set before the
	// rotations that queue work.
	testWrite func(f *os.File, b []byte) (int, error)

	mu    sync.Mutex
	queue []*zipJob // waiting, oldest first; under mu
	// dir is the directory's descriptor the jobs share, made for the first
	// job and closed with the last one's end: one descriptor however many
	// files wait, so a short descriptor limit costs no record of the
	// writer's. Under mu.
	dir     *sharedDir
	current *zipJob       // the job in progress, nil for none; under mu
	done    chan struct{} // closed as the goroutine exits; nil when none runs; under mu
	stopped bool          // finish gave up: nothing more is queued; under mu
	// told says a failure was said and no compression has succeeded
	// since.
	told atomic.Bool
}

// A sharedDir is a directory's descriptor the queued and running jobs
// share (compressor.dir): src is the dirFile's handle it duplicates, refs
// the jobs holding it. Under the compressor's mu.
type sharedDir struct {
	h, src dirHandle
	abs    string
	refs   int
}

// A zipJob is one rotated file to compress.
type zipJob struct {
	dir    dirHandle  // the directory: shared.h, the jobs' own descriptor
	shared *sharedDir // what dir is, to let go of at the job's end
	abs    string     // the directory's path, for messages (and, without the POSIX calls, the calls)
	name   string     // host.<pid>.<seq>.log
	want   fileState  // the file the rotation renamed to name
	// abandon stops the job at its next read, and before its rename:
	// retention is removing the file, or Close ran out of time, or the
	// writer needs its descriptors (gaveWay: then the file stays plain,
	// counted and said as a compression that failed).
	abandon, gaveWay atomic.Bool
}

// giveWay abandons the compression in progress, if there is one, so that
// the descriptors it holds (the plain file and the temporary one) go back
// to a writer that could not open the log's own file for want of one, and
// waits at most wait for the job to let them go. It reports whether there
// was one: then the open is worth trying again.
func (z *compressor) giveWay(wait time.Duration) bool {
	if z == nil {
		return false
	}
	z.mu.Lock()
	j := z.current
	if j != nil {
		j.gaveWay.Store(true)
		j.abandon.Store(true)
	}
	// The queued files stay plain too: the next job would take the
	// descriptors again before the writer's open (seen under load).
	queued := len(z.queue)
	for _, q := range z.queue {
		z.releaseLocked(q)
	}
	clear(z.queue)
	z.queue = z.queue[:0]
	z.mu.Unlock()
	if queued > 0 {
		z.failed.Add(uint64(queued))
		if z.told.CompareAndSwap(false, true) {
			z.say(fmt.Sprintf("sink: %d rotated files stay uncompressed (counted in CompressFailed): their compression gave way to the log's own file, which could not be opened for want of a descriptor\n", queued))
		}
	}
	if j == nil {
		return queued > 0
	}
	for deadline := time.Now().Add(wait); time.Now().Before(deadline); {
		z.mu.Lock()
		gone := z.current != j
		z.mu.Unlock()
		if gone {
			break
		}
		time.Sleep(100 * time.Microsecond)
	}
	return true
}

// giveWayWait bounds a writer's wait for a compression to give way: the
// job notices at its next read of 32 KiB.
const giveWayWait = 100 * time.Millisecond

// releaseLocked lets go of j's share of the directory's descriptor,
// closing it with the last job that held it. mu must be held.
func (z *compressor) releaseLocked(j *zipJob) {
	s := j.shared
	if s == nil {
		return
	}
	j.shared = nil
	if s.refs--; s.refs == 0 {
		s.h.close()
		if z.dir == s {
			z.dir = nil
		}
	}
}

// errAbandoned ends a job forget or finish abandoned: not a failure.
var errAbandoned = errors.New("sink: compression abandoned")

// tempName is the temporary name a compression of name writes: hidden,
// and of no log file's pattern, so no reader and no retention takes it.
func tempName(name string) string { return "." + name + logname.Gz + ".tmp" }

// add queues the compression of name, just renamed by a rotation from the
// file whose state was want, in the directory d, starting the goroutine if
// none runs. After finish, or when the directory cannot be held for the
// job, the file stays as it is.
func (z *compressor) add(d dirHandle, abs, name string, want fileState) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if z.stopped {
		return
	}
	if z.dir == nil || z.dir.src != d || z.dir.abs != abs {
		dh, err := d.dup()
		if err != nil { // out of descriptors: the file stays plain
			z.fail(filepath.Join(abs, name), err)
			return
		}
		z.dir = &sharedDir{h: dh, src: d, abs: abs}
	}
	z.dir.refs++
	z.queue = append(z.queue, &zipJob{dir: z.dir.h, shared: z.dir, abs: abs, name: name, want: want})
	if z.done == nil {
		z.done = make(chan struct{})
		go z.run(z.done)
	}
}

// run compresses the queued files, oldest first, and exits when there are
// none, closing done.
func (z *compressor) run(done chan struct{}) {
	for {
		z.mu.Lock()
		if len(z.queue) == 0 {
			z.done = nil
			z.mu.Unlock()
			close(done)
			return
		}
		j := z.queue[0]
		z.queue[0] = nil
		z.queue = z.queue[1:]
		z.current = j
		z.mu.Unlock()

		err := z.compress(j)
		z.mu.Lock()
		z.current = nil
		z.releaseLocked(j)
		z.mu.Unlock()
		switch {
		case err == nil:
			z.told.Store(false)
		case errors.Is(err, errAbandoned) && j.gaveWay.Load():
			z.fail(filepath.Join(j.abs, j.name), errors.New("gave way to the log's own file, which could not be opened for want of a descriptor"))
		case !errors.Is(err, errAbandoned):
			z.fail(filepath.Join(j.abs, j.name), err)
		}
	}
}

// fail counts a compression that failed and says so, unless a failure
// was said and none has succeeded since.
func (z *compressor) fail(path string, err error) {
	z.failed.Add(1)
	if z.told.CompareAndSwap(false, true) {
		z.say(fmt.Sprintf("sink: cannot compress %s: %v; it stays uncompressed (counted in CompressFailed), and so do later files that fail until one succeeds\n", path, err))
	}
}

// compress writes j's file gzipped to its .gz name and removes it; see
// compressor. A file no longer at its name, or not the one rotated, is
// left alone: nil.
func (z *compressor) compress(j *zipJob) (err error) {
	src, st, err := j.dir.openRotated(j.abs, j.name)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, ErrUnsafeFile) {
		return nil // removed (retention) or replaced since: not ours to compress
	}
	if err != nil {
		return err
	}
	defer src.Close()
	if !st.same(j.want) {
		return nil
	}
	fi, err := src.Stat()
	if err != nil {
		return err
	}
	tmp := tempName(j.name)
	out, fd, err := j.dir.createTemp(j.abs, tmp)
	if err != nil {
		return err
	}
	placed := false
	defer func() {
		if out != nil {
			out.Close()
		}
		if !placed {
			_ = j.dir.remove(j.abs, tmp)
		}
	}()
	zw, _ := gzip.NewWriterLevel(zipOut{out, z.testWrite}, gzip.BestSpeed) // a valid level: no error
	zw.Name, zw.ModTime = j.name, fi.ModTime()
	if _, err = io.Copy(zw, abandonable{src, &j.abandon}); err != nil {
		return err
	}
	if err = zw.Close(); err != nil {
		return err
	}
	stamp(out, fd, fi.ModTime())
	if err = out.Sync(); err != nil {
		return err
	}
	err, out = out.Close(), nil
	if err != nil {
		return err
	}
	gz := j.name + logname.Gz
	// Under mu: forget either abandons the job before the rename, or
	// comes after it and finds the .gz to remove.
	z.mu.Lock()
	if j.abandon.Load() {
		err = errAbandoned
	} else {
		err = j.dir.renameNew(j.abs, tmp, gz)
	}
	z.mu.Unlock()
	if errors.Is(err, errNameTaken) {
		return fmt.Errorf("%s exists", gz)
	}
	if err != nil {
		return err
	}
	placed = true
	j.dir.sync()
	if err := j.dir.remove(j.abs, j.name); err != nil && !errors.Is(err, fs.ErrNotExist) {
		// Both would be read as one file twice: keep the plain one.
		_ = j.dir.remove(j.abs, gz)
		return err
	}
	return nil
}

// forget drops the compression of name, the plain name of a rotated file
// retention is about to remove: a queued job is dropped, one in progress
// abandoned (it removes its temporary file). It returns once the job can
// no longer rename its .gz into place, so the caller removes whatever is
// there after.
func (z *compressor) forget(name string) {
	if z == nil {
		return
	}
	z.mu.Lock()
	defer z.mu.Unlock()
	if j := z.current; j != nil && j.name == name {
		j.abandon.Store(true)
	}
	for i, j := range z.queue {
		if j.name == name {
			z.releaseLocked(j)
			z.queue = append(z.queue[:i], z.queue[i+1:]...)
			break
		}
	}
}

// closeGrace is the part of Close's time finish keeps for an abandoned
// compression to remove its temporary file and exit, at most: a job
// notices it was abandoned at its next read of 32 KiB.
const closeGrace = 50 * time.Millisecond

// finish is Close's: it waits, until b's end less a grace of up to
// closeGrace, for the queued and running compressions, then abandons what
// is left (those files stay uncompressed, whole) and waits out the grace
// for the goroutine to remove its temporary file and exit. From then on
// nothing is queued. A compression stalled on the disk past the bound
// removes its temporary file when the stalled call returns. A bound that
// ends by cancellation (a context's) has its grace after it.
func (z *compressor) finish(b bound) {
	if z == nil {
		return
	}
	grace := max(min(b.left()/10, closeGrace), 0)
	z.mu.Lock()
	done := z.done
	z.mu.Unlock()
	if done != nil && !b.earlier(grace).wait(done) {
		z.mu.Lock()
		if z.current != nil {
			z.current.abandon.Store(true)
		}
		for _, j := range z.queue {
			z.releaseLocked(j)
		}
		z.queue = nil
		z.mu.Unlock()
		if b.over() { // cancelled, or past the deadline: the grace from now
			b = within(grace)
		}
		b.wait(done)
	}
	z.mu.Lock()
	z.stopped = true
	for _, j := range z.queue { // queued since by a write Close left stalled
		z.releaseLocked(j)
	}
	z.queue = nil
	if z.current != nil {
		z.current.abandon.Store(true)
	}
	z.mu.Unlock()
}

// idle waits, while b lasts, for the files queued to be compressed and
// reports whether they were; it stops nothing (the sink goes on: Quiesce).
func (z *compressor) idle(b bound) bool {
	if z == nil {
		return true
	}
	z.mu.Lock()
	done := z.done
	z.mu.Unlock()
	return done == nil || b.wait(done)
}

// zipOut is the temporary file as the gzip writer's destination, through
// a test's stand-in for a disk that fills.
type zipOut struct {
	f    *os.File
	test func(f *os.File, b []byte) (int, error)
}

func (w zipOut) Write(b []byte) (int, error) {
	if w.test != nil {
		return w.test(w.f, b)
	}
	return w.f.Write(b)
}

// abandonable is the plain file as the compression's source, which stops
// at the next read once the job is abandoned.
type abandonable struct {
	r       io.Reader
	abandon *atomic.Bool
}

func (a abandonable) Read(b []byte) (int, error) {
	if a.abandon.Load() {
		return 0, errAbandoned
	}
	return a.r.Read(b)
}
