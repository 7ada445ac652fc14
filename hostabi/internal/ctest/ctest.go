//go:build cgo && (linux || darwin || freebsd)

// Package ctest calls the entry points of hostabi's test consumer module
// (../../testdata/consumer.c), which Go test files cannot do themselves.
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
*/
import "C"

import (
	"fmt"
	"unsafe"
)

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
