package strace

import (
	"bufio"
	"compress/flate"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"

	"simpler.dev/log/internal/logname"
)

// logGlob is the names a directory's log files have: host.<pid>.log, and
// a rotated set's host.<pid>.<seq>.log; gzGlob a rotated file's once
// compressed (sink.Rotation's Compress), host.<pid>.<seq>.log.gz.
const (
	logGlob = "host.*.log"
	gzGlob  = logGlob + logname.Gz
)

// Inputs returns the files one strace-timing LOG argument names: for a
// directory every host.*.log and host.*.log.gz in it, in name order (an
// error if it holds none), anything else, "-" included, itself. A rotated
// file's compressed name sorts where its plain one does, so a set partly
// compressed is listed in the order written; of a rotated file found under
// both names (its compression ending as the directory was read) only the
// .gz is listed, the one that stays.
func Inputs(in string) ([]string, error) {
	if in == "-" {
		return []string{in}, nil
	}
	fi, err := os.Stat(in)
	if err != nil {
		return nil, err
	}
	if !fi.IsDir() {
		return []string{in}, nil
	}
	// The directory is named literally ("logs[1]" is that directory, not
	// a pattern); only the names inside it are matched, as the
	// reference's Path.glob matches them.
	entries, err := os.ReadDir(in)
	if err != nil {
		return nil, err
	}
	names := map[string]bool{}
	for _, e := range entries {
		plain, _ := filepath.Match(logGlob, e.Name())
		gz, _ := filepath.Match(gzGlob, e.Name())
		if plain || gz {
			names[e.Name()] = true
		}
	}
	if len(names) == 0 {
		return nil, fmt.Errorf("%s is a directory but holds no host.*.log files", in)
	}
	var paths []string
	for n := range names {
		if _, seq, ok := logname.Parse(n); ok && seq > 0 && names[n+logname.Gz] {
			continue // compressed as the directory was read: the .gz stays
		}
		paths = append(paths, filepath.Join(in, n))
	}
	slices.Sort(paths)
	return paths, nil
}

// readInput reads one input the way strace-timing takes its LOG
// arguments into p: "-" is stdin, a directory is every host.*.log and
// host.*.log.gz in it (in name order), anything else a file.
func readInput(p *Parser, in string, stdin io.Reader) error {
	paths, err := Inputs(in)
	if err != nil {
		return err
	}
	if p.Select != nil {
		var skipped int
		paths, skipped = SkipFiles(paths, p.Select)
		p.SkippedFiles += skipped
	}
	var damage []error
	for _, path := range paths {
		if err := ReadFile(p, path, stdin, nil); errors.Is(err, ErrDamaged) {
			damage = append(damage, err) // what it held before the damage is read; the rest goes on
		} else if err != nil {
			return err
		}
	}
	return errors.Join(damage...)
}

// ReadFile reads one file of [Inputs] into p ("-" is stdin), through wrap
// when it is not nil: strace-timing counts the bytes for its progress
// line (of the file as stored). A file whose name ends in .gz (a rotated
// file compressed, host.<pid>.<seq>.log.gz), and stdin that begins as
// gzip does, is read through gzip; a rotated host.<pid>.<seq>.log no
// longer there is read from its .gz, if compressed since it was listed.
// The records it keeps (Parser.KeepRecords) take the pid of the file's
// name, host.<pid>.log or host.<pid>.<seq>.log (.gz or not), else the one
// pid the file's spans carry. A compressed file truncated or corrupt
// past some point is read up to there, and the error wraps [ErrDamaged].
func ReadFile(p *Parser, path string, stdin io.Reader, wrap func(io.Reader) io.Reader) error {
	var r io.Reader = stdin
	compressed := false
	if path != "-" {
		f, err := os.Open(path)
		if errors.Is(err, fs.ErrNotExist) {
			if _, seq, ok := logname.Parse(filepath.Base(path)); ok && seq > 0 && !strings.HasSuffix(path, logname.Gz) {
				if gz, gzErr := os.Open(path + logname.Gz); gzErr == nil {
					f, err, path = gz, nil, path+logname.Gz
				}
			}
		}
		if err != nil {
			return err
		}
		defer f.Close()
		compressed = strings.HasSuffix(path, logname.Gz)
		if fi, err := f.Stat(); err == nil && fi.Mode().IsRegular() {
			// Room for the spans the file holds (a span record is about
			// 300 bytes of log), so a large log is not copied again and
			// again as the span list grows; capped, so that a sparse or
			// junk file reserves no memory for spans it does not hold
			// (past the cap, memory grows with the spans actually read).
			p.Spans = slices.Grow(p.Spans, int(min(fi.Size()/300, 1<<16)))
			if !compressed {
				p.size = fi.Size() // a .gz's size says little of what it holds
			}
		}
		r = f
	}
	if wrap != nil {
		r = wrap(r) // the bytes as stored: before gzip
	}
	if path == "-" {
		// Standard input has no name to say it is compressed: its first
		// bytes do (gzip's magic, which no record begins with), so
		// "cat host.1.2.log.gz | strace-timing -" reads as the file would.
		br := bufio.NewReader(r)
		magic, _ := br.Peek(2)
		compressed, r = len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b, br
	}
	var stored *counted // the compressed bytes read, for damage
	if compressed {
		stored = &counted{r: r}
		zr, err := gzip.NewReader(stored)
		if err != nil {
			if err == io.EOF || err == io.ErrUnexpectedEOF {
				err = errTruncatedGz // empty, or cut within its header
			}
			return damaged(path, fmt.Errorf("%s: %w", path, err), 0, fileSize(path))
		}
		defer zr.Close()
		r = gzReader{zr}
	}
	if err := p.readFileWith(path, r, runtime.GOMAXPROCS(0)); err != nil {
		if stored != nil {
			return damaged(path, err, stored.n, fileSize(path))
		}
		return fmt.Errorf("%s: %w", path, err)
	}
	return nil
}

// fileSize is the size of the file at path, 0 when not known.
func fileSize(path string) int64 {
	if fi, err := os.Stat(path); err == nil && fi.Mode().IsRegular() {
		return fi.Size()
	}
	return 0
}

// ErrDamaged is wrapped by the error of a file that could be read only in
// part: a compressed file truncated, or corrupt past some point. What
// came before the damage was read into the Parser, and the error says how
// much of the file that was; readers report it and go on with the rest.
var ErrDamaged = errors.New("damaged")

// damaged returns err, a compressed file's read error, as an ErrDamaged
// error about path when it is damage (a truncation, a checksum, corrupt
// data), saying how many of the file's size bytes were read before it.
func damaged(path string, err error, read, size int64) error {
	var corrupt flate.CorruptInputError
	if !errors.Is(err, errTruncatedGz) && !errors.Is(err, gzip.ErrChecksum) && !errors.Is(err, gzip.ErrHeader) && !errors.As(err, &corrupt) {
		return err
	}
	lost := "the records before the damage are read, its end is lost"
	switch {
	case errors.Is(err, gzip.ErrChecksum):
		lost = "its records are read, but some may be missing or altered"
	case size > 0 && read < size:
		lost = fmt.Sprintf("the records before the damage are read, the last %d of its %d bytes are lost", size-read, size)
	}
	return fmt.Errorf("%s is %w (%v): %s", path, ErrDamaged, err, lost)
}

// counted counts the bytes read through it.
type counted struct {
	r io.Reader
	n int64
}

func (c *counted) Read(b []byte) (int, error) {
	n, err := c.r.Read(b)
	c.n += int64(n)
	return n, err
}

// errTruncatedGz is a compressed file's read error where it ends before
// its gzip trailer: not the end of the file a reader stops at quietly (a
// plain file's torn last line), as what is missing cannot be told.
var errTruncatedGz = errors.New("gzip: the compressed file ends before its end-of-stream marker (truncated)")

// gzReader reads a .gz file, its truncation an error of its own
// (errTruncatedGz): gzip's io.ErrUnexpectedEOF would read as a short
// read at the end of the file.
type gzReader struct{ r io.Reader }

func (g gzReader) Read(b []byte) (int, error) {
	n, err := g.r.Read(b)
	if errors.Is(err, io.ErrUnexpectedEOF) {
		err = errTruncatedGz
	}
	return n, err
}

// attribute gives the records read from path since index records (and
// the record lines since index lines) the file's pid (see ReadFile);
// spans is where its spans began. A path of "" (a reader given to Read)
// has no name to go by.
func (p *Parser) attribute(path string, records, lines, spans int) {
	if len(p.Records) == records && len(p.RecordLines) == lines {
		return
	}
	var pid int64
	if path != "" {
		// host.<pid>.log, or a rotated host.<pid>.<seq>.log of a set
		// (host.<pid>-<tag>… for a run's own set).
		if set, _, ok := logname.Parse(filepath.Base(path)); ok {
			pid, _ = strconv.ParseInt(logname.PID(set), 10, 64)
		}
	}
	if pid <= 0 {
		pid = 0
		for _, s := range p.Spans[spans:] {
			if pid != 0 && s.PID != pid {
				pid = 0
				break
			}
			pid = s.PID
		}
	}
	for i := records; i < len(p.Records); i++ {
		r := &p.Records[i]
		r.PID = pid
		if r.Run == nil && pid > 0 {
			r.Run = runFor(p, pid, "", 0) // no run record before it: the unmarked run
		} else if r.Run != nil {
			r.PID = r.Run.PID // the run record heading the file says whose
		}
	}
	for i := lines; i < len(p.RecordLines); i++ {
		l := &p.RecordLines[i]
		l.PID = pid
		if l.Run == nil && pid > 0 {
			l.Run = runFor(p, pid, "", 0)
		} else if l.Run != nil {
			l.PID = l.Run.PID
		}
	}
}

// ReadHost reads one input into p (nil: a new Parser) as the logs of one
// host, labelled after it. It takes the input the way strace-timing takes
// its LOG arguments: "-" is stdin, a directory is every host.*.log and
// host.*.log.gz in it (in name order, as [Inputs] lists them), anything
// else a file. The
// label is a directory's name, a file's directory's name, or for a file
// in the current directory its name; "stdin" for "-". A file that could
// be read only in part (ErrDamaged: a compressed file truncated or
// corrupt) does not stop it: the HostLog holds what the inputs held before
// the damage, and the error, which wraps ErrDamaged, says what was lost of
// which file, one line each.
func ReadHost(p *Parser, in string, stdin io.Reader) (HostLog, error) {
	if p == nil {
		p = &Parser{}
	}
	err := readInput(p, in, stdin)
	if err != nil && !errors.Is(err, ErrDamaged) {
		return HostLog{}, err
	}
	return HostLog{Label: hostLabel(in), Parser: p}, err
}

func hostLabel(in string) string {
	if in == "-" {
		return "stdin"
	}
	clean := filepath.Clean(in)
	if fi, err := os.Stat(clean); err == nil && fi.IsDir() {
		return filepath.Base(clean)
	}
	if dir := filepath.Base(filepath.Dir(clean)); dir != "." && dir != string(filepath.Separator) {
		return dir
	}
	return filepath.Base(clean)
}

// A HostLog is what one host's logs held, with the label its processes
// carry.
type HostLog struct {
	Label  string
	Parser *Parser
}

// RotationGaps says, one sentence each, which rotated files of a log set
// are not among paths: a process whose rotated files (host.<pid>.<seq>.log,
// seq counting up from 1, compressed as host.<pid>.<seq>.log.gz or not:
// the same file) start past 1 or skip numbers lost those files,
// most likely to retention (sink.Rotation's MaxFiles or MaxAge), and a
// reading of the rest is of part of its log. A missing file that is in the
// directory after all (one rotated file named on its own) is said to be
// not given, not lost. Names of other shapes are ignored.
func RotationGaps(paths []string) []string {
	seqs := map[string][]int{}     // by directory and pid
	present := map[string]string{} // a present file's name by key and seq: .log or .log.gz
	for _, p := range paths {
		pid, seq, ok := logname.Parse(filepath.Base(p))
		if !ok || seq == 0 {
			continue
		}
		key := filepath.Join(filepath.Dir(p), "host."+pid)
		seqs[key] = append(seqs[key], seq)
		present[fmt.Sprint(key, "/", seq)] = filepath.Base(p)
	}
	var out []string
	for _, key := range slices.Sorted(maps.Keys(seqs)) {
		ns := seqs[key]
		slices.Sort(ns)
		ns = slices.Compact(ns)
		name := func(n int) string { return logname.Rotated(filepath.Base(key)+".", n) }
		disk := sync.OnceValue(func() map[int]bool { return rotatedOnDisk(key) })
		if ns[0] > 1 {
			out = append(out, fmt.Sprintf("the log set %s.*.log starts at %s: %s, so what follows is read from part of its log",
				key, present[fmt.Sprint(key, "/", ns[0])], notRead(disk(), 1, ns[0]-1, true)))
		}
		for i := 1; i < len(ns); i++ {
			if d := ns[i] - ns[i-1]; d > 1 {
				out = append(out, fmt.Sprintf("the log set %s.*.log has no %s to %s: %s, so what follows is read from part of its log",
					key, name(ns[i-1]+1), name(ns[i]-1), notRead(disk(), ns[i-1]+1, ns[i]-1, false)))
			}
		}
	}
	return out
}

// rotatedOnDisk returns the rotation numbers of the set key's (its
// directory and "host.<pid>") rotated files in its directory, compressed
// or not: one listing, however far apart the numbers given are.
func rotatedOnDisk(key string) map[int]bool {
	entries, _ := os.ReadDir(filepath.Dir(key)) // unreadable: nothing there to name
	seqs := map[int]bool{}
	for _, e := range entries {
		if pid, seq, ok := logname.Parse(e.Name()); ok && seq > 0 && "host."+pid == filepath.Base(key) {
			seqs[seq] = true
		}
	}
	return seqs
}

// notRead says why the rotated files from to to of a set, whose rotated
// files on disk are onDisk, were not read: gone from the directory
// (retention, most likely, when they are the set's earliest), or there
// but not given.
func notRead(onDisk map[int]bool, from, to int, earlier bool) string {
	there := 0
	for seq := range onDisk {
		if seq >= from && seq <= to {
			there++
		}
	}
	gone := to - from + 1 - there
	what, lost := "rotated file(s)", "are missing"
	if earlier {
		what, lost = "earlier rotated file(s)", "are not here (removed by retention?)"
	}
	switch {
	case there == 0:
		return fmt.Sprintf("%d %s %s", gone, what, lost)
	case gone == 0:
		return fmt.Sprintf("%d %s in its directory were not given (give the directory to read the whole set)", there, what)
	}
	return fmt.Sprintf("%d %s are not here (removed by retention?) and %d in its directory were not given", gone, what, there)
}
