//go:build cgo && (linux || darwin || freebsd)

package hostabi

/*
#cgo linux LDFLAGS: -ldl
#include <stdlib.h>
#include "host_log_state.h"

SimplerHostLogState *hostabi_new_state(void);
void hostabi_publish(SimplerHostLogState *state, int32_t pid, void *context);
void *hostabi_dlopen(const char *path);
void *hostabi_dlsym(void *handle, const char *name);
const char *hostabi_dlerror(void);
int hostabi_call_bind(void *fn, SimplerHostLogState *state);
const char *hostabi_module_of(void *addr);
*/
import "C"

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
	"unsafe"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/door"
	"simpler.dev/log/internal/hostlink"
	"simpler.dev/log/internal/ladder"
	"simpler.dev/log/internal/machine"
	"simpler.dev/log/internal/origin"
	"simpler.dev/log/slogsimpler"
)

// bindSymbol is the one symbol a consumer module exports.
const bindSymbol = "simpler_host_log_bind_state"

const producerStop = uint64(1) << 63

// owner is a State's C ABI state. c is allocated once in C memory and
// never freed or moved: a module may keep the pointer for the life of the
// process, since dlclose need not unload it.
type owner struct {
	c  *C.SimplerHostLogState
	st *slogsimpler.State
	id uintptr // sink_context's address: its key in owners
	// altered counts records written otherwise than the module handed them
	// (see Altered); added to by every sink_enqueue caller.
	altered atomic.Uint64
}

var (
	mu sync.Mutex // serialises creating owners
	// owners maps sink_context values to owners, copied on write: the
	// enqueue entry point reads it with one atomic load.
	owners  atomic.Pointer[map[uintptr]*owner]
	byState = map[*slogsimpler.State]*owner{} // guarded by mu
)

// ownerOf returns st's owner, creating its C state the first time.
func ownerOf(st *slogsimpler.State) (*owner, error) {
	if st == nil {
		return nil, errors.New("hostabi: nil State")
	}
	mu.Lock()
	defer mu.Unlock()
	if o := byState[st]; o != nil {
		return o, nil
	}
	c := C.hostabi_new_state()
	if c == nil {
		return nil, errors.New("hostabi: cannot allocate the C state")
	}
	// sink_context: a byte of C memory of the owner's own, whose address
	// is the key C passes back; Go never hands C a Go pointer.
	ctx := C.malloc(1)
	if ctx == nil {
		return nil, errors.New("hostabi: cannot allocate the C state")
	}
	o := &owner{c: c, st: st, id: uintptr(ctx)}
	if err := door.Attach(st, o); err != nil {
		return nil, err
	}
	m := map[uintptr]*owner{}
	if old := owners.Load(); old != nil {
		for k, v := range *old {
			m[k] = v
		}
	}
	m[o.id] = o
	owners.Store(&m)
	byState[st] = o
	C.hostabi_publish(c, C.int32_t(os.Getpid()), ctx)
	return o, nil
}

// State returns the address of st's SimplerHostLogState, creating it
// (and making st its owner) the first time: for a loader of its own that
// passes it to modules.
func State(st *slogsimpler.State) (unsafe.Pointer, error) {
	o, err := ownerOf(st)
	if err != nil {
		return nil, err
	}
	return unsafe.Pointer(o.c), nil
}

// BindPath loads the module at path (dlopen, RTLD_NOW | RTLD_LOCAL) and
// binds it to st (see Bind). It returns the module's handle, for the
// program's own dlsym.
func BindPath(st *slogsimpler.State, path string) (unsafe.Pointer, error) {
	cpath := C.CString(path)
	defer C.free(unsafe.Pointer(cpath))
	h := C.hostabi_dlopen(cpath)
	if h == nil {
		return nil, fmt.Errorf("hostabi: loading %s: %s", path, C.GoString(C.hostabi_dlerror()))
	}
	if err := bind(st, h, path); err != nil {
		return nil, err
	}
	return h, nil
}

// Bind binds the loaded module with handle (from dlopen) to st: it
// resolves simpler_host_log_bind_state in the module and calls it with
// st's state. A module without the symbol, or one whose bind refuses the
// state (it returns nonzero: a nil state or a threshold off the ladder,
// as simpler's consumers refuse), is an error naming the module.
func Bind(st *slogsimpler.State, handle unsafe.Pointer) error {
	return bind(st, handle, "")
}

func bind(st *slogsimpler.State, handle unsafe.Pointer, name string) error {
	if handle == nil {
		return errors.New("hostabi: nil module handle")
	}
	o, err := ownerOf(st)
	if err != nil {
		return err
	}
	csym := C.CString(bindSymbol)
	defer C.free(unsafe.Pointer(csym))
	fn := C.hostabi_dlsym(handle, csym)
	if fn == nil {
		if name == "" {
			name = fmt.Sprintf("module %p", handle)
		}
		return fmt.Errorf("hostabi: %s has no %s: %s", name, bindSymbol, C.GoString(C.hostabi_dlerror()))
	}
	if name == "" {
		// Bind by handle: name the module by the file that holds its
		// bind function.
		name = fmt.Sprintf("module %p", handle)
		if p := C.hostabi_module_of(fn); p != nil {
			name = C.GoString(p)
		}
	}
	if rc := C.hostabi_call_bind(fn, o.c); rc != 0 {
		return fmt.Errorf("hostabi: %s: %s refused the state (returned %d)", name, bindSymbol, int(rc))
	}
	return nil
}

// layout returns the offset of every field of the C state and its size
// (key "size"), as cgo laid it out for Go: the layout test compares it with
// the system compiler's.
func layout() map[string]uintptr {
	var c C.SimplerHostLogState
	return map[string]uintptr{
		"threshold":            unsafe.Offsetof(c.threshold),
		"clock_anchor_pid":     unsafe.Offsetof(c.clock_anchor_pid),
		"log_directory_bound":  unsafe.Offsetof(c.log_directory_bound),
		"log_directory":        unsafe.Offsetof(c.log_directory),
		"sink_owner_pid":       unsafe.Offsetof(c.sink_owner_pid),
		"sink_process_pid":     unsafe.Offsetof(c.sink_process_pid),
		"sink_context":         unsafe.Offsetof(c.sink_context),
		"sink_enqueue":         unsafe.Offsetof(c.sink_enqueue),
		"dropped_record_count": unsafe.Offsetof(c.dropped_record_count),
		"pending_record_count": unsafe.Offsetof(c.pending_record_count),
		"sink_producer_state":  unsafe.Offsetof(c.sink_producer_state),
		"dropped_by_reason":    unsafe.Offsetof(c.dropped_by_reason),
		"reported_drop_count":  unsafe.Offsetof(c.reported_drop_count),
		"size":                 unsafe.Sizeof(c),
	}
}

// The fields of the C state, as Go addresses for sync/atomic.

func (o *owner) producers() *uint64 { return (*uint64)(unsafe.Pointer(&o.c.sink_producer_state)) }

// SetThreshold implements hostlink.Listener: the threshold in simpler's
// numbers (Python's: 10 DEBUG … 60 NUL), stored only when it changes.
func (o *owner) SetThreshold(l slog.Level) {
	p := (*int32)(unsafe.Pointer(&o.c.threshold))
	if v := int32(ladder.Python(l)); atomic.LoadInt32(p) != v {
		atomic.StoreInt32(p, v)
	}
}

// BindDir implements hostlink.Listener with simpler's protocol: the first
// directory wins; 0 → -1 claims, the path is written, 1 publishes. A path
// that does not fit the 1024 bytes (with its NUL) is not published.
func (o *owner) BindDir(dir string) {
	bound := (*int32)(unsafe.Pointer(&o.c.log_directory_bound))
	if dir == "" || len(dir) >= len(o.c.log_directory) || !atomic.CompareAndSwapInt32(bound, 0, -1) {
		return
	}
	dst := unsafe.Slice((*byte)(unsafe.Pointer(&o.c.log_directory[0])), len(o.c.log_directory))
	copy(dst, dir)
	dst[len(dir)] = 0
	atomic.StoreInt32(bound, 1)
}

// AnchorClaim implements hostlink.Listener.
func (o *owner) AnchorClaim() *int32 { return (*int32)(unsafe.Pointer(&o.c.clock_anchor_pid)) }

// Counters implements hostlink.Listener: the C state's
// dropped_record_count, dropped_by_reason and pending_record_count.
func (o *owner) Counters() hostlink.Counters {
	return hostlink.Counters{
		Total:   (*uint64)(unsafe.Pointer(&o.c.dropped_record_count)),
		Reasons: (*[4]uint64)(unsafe.Pointer(&o.c.dropped_by_reason[0])),
		Pending: (*uint64)(unsafe.Pointer(&o.c.pending_record_count)),
	}
}

// Close implements hostlink.Listener: it sets the stop bit, then waits for
// the callers already admitted (the low bits) to leave the enqueue path.
func (o *owner) Close(timeout time.Duration) bool {
	p := o.producers()
	atomic.OrUint64(p, producerStop)
	if timeout <= 0 {
		timeout = time.Second
	}
	deadline := time.Now().Add(timeout)
	for atomic.LoadUint64(p)&^producerStop != 0 {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(50 * time.Microsecond)
	}
	return true
}

// Open implements hostlink.Listener.
func (o *owner) Open() { atomic.AndUint64(o.producers(), ^producerStop) }

// hostabiGoEnqueue is sink_enqueue: it takes one record into the Go
// state, under the rules Go's own records keep (see submit). It never
// blocks once the writer runs. A record is refused as not_admitted, and
// counted in the C state as a consumer counts its own, unless it is 1 to
// 512 bytes ending in a newline and comes for a state this package owns;
// a record the queue cannot take is counted by the queue under its
// reason. Either way the caller's admission reference is released, as the
// ABI says.
//
//export hostabiGoEnqueue
func hostabiGoEnqueue(context unsafe.Pointer, state *C.SimplerHostLogState, record *C.char, size C.uint32_t, anchorPID C.int32_t) C.int {
	_ = anchorPID // accepted means claimed: see the package doc
	if state == nil {
		return 0
	}
	defer atomic.AddUint64((*uint64)(unsafe.Pointer(&state.sink_producer_state)), ^uint64(0))
	var o *owner
	if m := owners.Load(); m != nil {
		o = (*m)[uintptr(context)]
	}
	n := int(size)
	if o == nil || o.c != state || record == nil || n == 0 || n > envelope.MaxRecord {
		notAdmitted(state)
		return 0
	}
	rec := unsafe.Slice((*byte)(unsafe.Pointer(record)), n)
	if rec[n-1] != '\n' {
		notAdmitted(state)
		return 0
	}
	if o.submit(rec) != nil {
		return 0 // counted by the queue
	}
	return 1
}

// submit writes one module record as a Go record made outside slog
// (State.Emit): through the program's handlers and the state's one door,
// read into its typed form first. An envelope record keeps its clock,
// lane, level, function and position; its message is user text, escaped
// and neutralised as a Go message is (control bytes, CR, an embedded
// newline, invalid UTF-8, U+2028/9 and bidi controls escaped, kept), unless
// the whole of it is one machine record of this process in machine
// position: a span, an op line, or the file's one anchor while the anchor
// claim is this module's to write (a drop report is the owner's to write:
// Go reports for both sides). A line without an
// envelope header is written as text at INFO from function "cmodule".
// Every record not written as handed over is counted (Altered).
func (o *owner) submit(rec []byte) error {
	line := rec[:len(rec)-1]
	p, err := envelope.Parse(line)
	if err != nil || p.Legacy { // SPEC §12: the envelope header is required
		o.altered.Add(1)
		return o.emit(slog.LevelInfo, origin.NewOutside(envelope.Header{Func: "cmodule"}), string(line))
	}
	level, h := p.Level, p.Header
	body := string(p.Body)
	if marker, pid, err := envelope.ParseMachine(p); err == nil {
		switch {
		case marker == envelope.MarkerDrops, marker == envelope.MarkerRun:
			// The report of losses is the owner's: Go counts and reports
			// for both sides, and a module's own would count them twice.
			// A run record is the sink's, at the start of a file: one
			// mid-file would claim the records after it for another run.
		case pid == 0 || pid == os.Getpid() && (marker != envelope.MarkerAnchor || o.mayAnchor()):
			return o.emit(level, origin.NewMachine(h, body), body)
		}
		o.altered.Add(1) // a machine record it may not write: user text
	} else if machine.ContainsMarker(body) || !plain(p.Body) {
		o.altered.Add(1) // markers neutralised, or bytes escaped
	}
	return o.emit(level, origin.NewOutside(h), body)
}

// mayAnchor reports whether a module's [CLOCK_ANCHOR] for this process is
// the one the file is owed: the shared claim is held (-pid), by the module
// writing it, and the anchor has not been written (pid).
func (o *owner) mayAnchor() bool {
	return atomic.LoadInt32(o.AnchorClaim()) == -int32(os.Getpid())
}

// emit hands the record to the state and returns what the door made of
// it: nil when the queue took it (or wrote it, or no handler wanted it),
// else the error naming the reason it was counted under. It passes the
// program's ReplaceAttr (a redaction holds for C text too) to the state's
// own handler, and through the program's other handlers (the console, a
// recorder, Options.Handlers) only when the program asked
// (Options.CModuleHandlers): they would run on the C thread. It
// never waits at the door for the flush bound, whatever its level.
func (o *owner) emit(level slog.Level, og *origin.Origin, msg string) error {
	og.CModule = true
	_, err := door.Emit(o.st, level, og, msg)
	return err
}

// plain reports whether b is printable ASCII: bytes the envelope writes as
// they are (other text may be, but needs a closer look than this counter
// is worth; it errs on counting).
func plain(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return true
}

// Altered returns how many records st's C modules handed over that were
// not written as they were: a line without an envelope header (written as
// text from function "cmodule"), a machine record refused (another
// process's, or an anchor the file already has, written as neutralised
// text), or a message whose markers were neutralised or whose bytes were
// escaped (control bytes, an embedded newline, non-ASCII text, which the
// envelope may keep as it is). 0 for a state no module is bound to.
func Altered(st *slogsimpler.State) uint64 {
	mu.Lock()
	o := byState[st]
	mu.Unlock()
	if o == nil {
		return 0
	}
	return o.altered.Load()
}

// notAdmitted counts a refused record in the C state, as a consumer
// counts its own.
func notAdmitted(state *C.SimplerHostLogState) {
	atomic.AddUint64((*uint64)(unsafe.Pointer(&state.dropped_record_count)), 1)
	atomic.AddUint64((*uint64)(unsafe.Pointer(&state.dropped_by_reason[3])), 1)
}
