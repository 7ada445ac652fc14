//go:build cgo && (linux || darwin || freebsd)

package ctest

/*
#cgo linux LDFLAGS: -ldl
#include <dlfcn.h>
#include <stdlib.h>

static void *sym(void *h, const char *name) { return dlsym(h, name); }
static int call_log(void *fn, int level, const char *msg) { return ((int (*)(int, const char *))fn)(level, msg); }
static int call_span(void *fn, const char *name, unsigned long long inv, int depth, long long ts, long long dur) {
	return ((int (*)(const char *, unsigned long long, int, long long, long long))fn)(name, inv, depth, ts, dur);
}
static int call_raw(void *fn, const char *rec, int n) { return ((int (*)(const char *, int))fn)(rec, n); }
static long call_threads(void *fn, int n, int per) { return ((long (*)(int, int))fn)(n, per); }
static int call_bind(void *fn, void *state) { return ((int (*)(void *))fn)(state); }
static unsigned long long call_counter(void *fn, int which) { return ((unsigned long long (*)(int))fn)(which); }
*/
import "C"

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sync"
	"testing"
	"unsafe"
)

var (
	buildOnce sync.Once
	builtDir  string
	buildErr  error
)

// Consumer builds the consumer module once per test binary with the
// system C compiler (skipping the test, saying so, without one) and
// returns a copy of it under a path of the test's own, so each test loads
// a fresh instance (dlopen returns the loaded one for a path it has seen).
func Consumer(t testing.TB) string {
	t.Helper()
	cc := Compiler(t)
	buildOnce.Do(func() {
		_, self, _, _ := runtime.Caller(0)
		hostabi := filepath.Join(filepath.Dir(self), "..", "..", "..", "hostabi")
		builtDir, buildErr = os.MkdirTemp("", "hostabi-consumer-")
		if buildErr != nil {
			return
		}
		out, err := exec.Command(cc, "-shared", "-fPIC", "-O1", "-Wall", "-I"+hostabi, "-o",
			filepath.Join(builtDir, "libconsumer.so"), filepath.Join(hostabi, "testdata", "consumer.c"), "-lpthread").CombinedOutput()
		if err != nil {
			buildErr = fmt.Errorf("%v\n%s", err, out)
		}
	})
	if buildErr != nil {
		t.Fatalf("building the consumer module: %v", buildErr)
	}
	b, err := os.ReadFile(filepath.Join(builtDir, "libconsumer.so"))
	if err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), "libconsumer.so")
	if err := os.WriteFile(p, b, 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

// Compiler returns the system C compiler ($CC, cc, gcc or clang), or skips
// the test saying there is none.
func Compiler(t testing.TB) string {
	t.Helper()
	for _, c := range []string{os.Getenv("CC"), "cc", "gcc", "clang"} {
		if c == "" {
			continue
		}
		if p, err := exec.LookPath(c); err == nil {
			return p
		}
	}
	t.Skip("no C compiler (cc, gcc or clang) on PATH: the consumer module cannot be built")
	return ""
}

// Cleanup removes the built module; call it from TestMain after the tests.
func Cleanup() {
	if builtDir != "" {
		os.RemoveAll(builtDir)
	}
}

// Module is a loaded consumer module.
type Module struct{ H unsafe.Pointer }

func (m Module) sym(name string) unsafe.Pointer {
	c := C.CString(name)
	defer C.free(unsafe.Pointer(c))
	p := C.sym(m.H, c)
	if p == nil {
		panic(fmt.Sprintf("ctest: no %s in the consumer", name))
	}
	return p
}

// Log logs msg at level (simpler's numbers): 1 accepted, 0 lost, -1
// filtered or never bound.
func (m Module) Log(level int, msg string) int {
	c := C.CString(msg)
	defer C.free(unsafe.Pointer(c))
	return int(C.call_log(m.sym("consumer_log"), C.int(level), c))
}

// Raw hands rec to the owner as it is: 1 accepted, 0 lost.
func (m Module) Raw(rec string) int {
	c := C.CString(rec) // rec holds no NUL: C strings cannot
	defer C.free(unsafe.Pointer(c))
	return int(C.call_raw(m.sym("consumer_raw"), c, C.int(len(rec))))
}

// Span writes a [STRACE] span.
func (m Module) Span(name string, inv uint64, depth int, ts, dur int64) int {
	c := C.CString(name)
	defer C.free(unsafe.Pointer(c))
	return int(C.call_span(m.sym("consumer_span"), c, C.ulonglong(inv), C.int(depth), C.longlong(ts), C.longlong(dur)))
}

// Threads logs per INFO records from each of n C threads and returns how
// many were accepted.
func (m Module) Threads(n, per int) int64 {
	return int64(C.call_threads(m.sym("consumer_threads"), C.int(n), C.int(per)))
}

// Dropped is what the module reads as _host_log_dropped_records(): the C
// state's dropped_record_count.
func (m Module) Dropped() uint64 { return m.counter(-1) }

// DroppedBy is the C state's dropped_by_reason, in simpler's order
// (queue_full, claim_exhausted, output_failed, not_admitted).
func (m Module) DroppedBy() [4]uint64 {
	return [4]uint64{m.counter(0), m.counter(1), m.counter(2), m.counter(3)}
}

// Pending is what the module reads as _host_log_pending_records(): the C
// state's pending_record_count.
func (m Module) Pending() uint64 { return m.counter(-2) }

func (m Module) counter(which int) uint64 {
	return uint64(C.call_counter(m.sym("consumer_counter"), C.int(which)))
}

// Bind calls the module's bind symbol directly with state (nil allowed).
func (m Module) Bind(state unsafe.Pointer) int {
	return int(C.call_bind(m.sym("simpler_host_log_bind_state"), state))
}

// Open loads a module without binding it.
func Open(path string) (Module, error) {
	c := C.CString(path)
	defer C.free(unsafe.Pointer(c))
	h := C.dlopen(c, C.RTLD_NOW|C.RTLD_LOCAL)
	if h == nil {
		return Module{}, fmt.Errorf("ctest: dlopen %s: %s", path, C.GoString(C.dlerror()))
	}
	return Module{H: h}, nil
}
