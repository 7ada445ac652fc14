package runid

import (
	"crypto/rand"
	"encoding/binary"
	"encoding/hex"
	"os"
	"time"
)

// id, start and pid are set once, at package initialisation (pid, for a
// test, by SetPID before anything logs), and only read after: no
// synchronisation is needed.
var (
	id    string
	start int64
	pid   = os.Getpid()
)

func init() {
	now := time.Now()
	start = now.UnixNano()
	id = draw(now)
}

// draw returns a random (version 4) UUID in its textual form. crypto/rand
// does not fail on the systems Go supports; should it, the UUID is made
// from the start time, the pid and the address-space layout, which still
// tells two runs apart in practice.
func draw(now time.Time) string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		binary.LittleEndian.PutUint64(b[:8], uint64(now.UnixNano()))
		binary.LittleEndian.PutUint64(b[8:], uint64(os.Getpid())<<32^uint64(now.Nanosecond()))
	}
	return Format(b)
}

// Format writes b as a version 4 UUID: the version and variant bits set,
// lower-case hex in the 8-4-4-4-12 groups.
func Format(b [16]byte) string {
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	var s [36]byte
	hex.Encode(s[0:8], b[0:4])
	s[8] = '-'
	hex.Encode(s[9:13], b[4:6])
	s[13] = '-'
	hex.Encode(s[14:18], b[6:8])
	s[18] = '-'
	hex.Encode(s[19:23], b[8:10])
	s[23] = '-'
	hex.Encode(s[24:], b[10:])
	return string(s[:])
}

// ID returns this run's identity, a random UUID drawn when the process
// started: it is the [HOSTLOG_RUN] record's run= and OpenTelemetry's
// service.instance.id.
func ID() string { return id }

// Start returns when this run started, in Unix ns (when the process
// initialised this package, before main).
func Start() int64 { return start }

// Tag returns the short form of a run's identity a file name carries
// (host.<pid>-<tag>.log): its first n hex digits, n at least 8; longer
// tags tell apart two runs whose shorter ones agree.
func Tag(id string, n int) string {
	out := make([]byte, 0, n)
	for i := 0; i < len(id) && len(out) < n; i++ {
		if id[i] != '-' {
			out = append(out, id[i])
		}
	}
	return string(out)
}

// PID returns the pid this process's records and files carry: its own.
func PID() int { return pid }

// SetPID makes the records and files of this process carry pid p instead
// of its own: a test seam, for a test that stands two processes with one
// pid side by side on one directory, as two containers' pid 1 would be,
// without the pid namespaces that need root. It must be called before
// anything logs (in TestMain), and never by a program.
func SetPID(p int) { pid = p }
