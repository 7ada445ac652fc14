//go:build cgo && (linux || darwin || freebsd)

#define _GNU_SOURCE
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>

#include "host_log_state.h"
#include "_cgo_export.h"

/* The enqueue entry point C modules call: a C function with the ABI's
 * exact signature, forwarding to the Go one. */
static int hostabi_enqueue(void *context, SimplerHostLogState *state, const char *record, uint32_t size, int32_t anchor_pid) {
	return hostabiGoEnqueue(context, state, (char *)record, size, anchor_pid);
}

SimplerHostLogState *hostabi_new_state(void) {
	return (SimplerHostLogState *)calloc(1, sizeof(SimplerHostLogState));
}

void hostabi_publish(SimplerHostLogState *state, int32_t pid, void *context) {
	__atomic_store_n(&state->sink_process_pid, pid, __ATOMIC_RELEASE);
	__atomic_store_n(&state->sink_context, context, __ATOMIC_RELEASE);
	__atomic_store_n(&state->sink_enqueue, hostabi_enqueue, __ATOMIC_RELEASE);
	__atomic_store_n(&state->sink_owner_pid, pid, __ATOMIC_RELEASE);
}

void *hostabi_dlopen(const char *path) { return dlopen(path, RTLD_NOW | RTLD_LOCAL); }

void *hostabi_dlsym(void *handle, const char *name) {
	dlerror();
	return dlsym(handle, name);
}

const char *hostabi_dlerror(void) { return dlerror(); }

int hostabi_call_bind(void *fn, SimplerHostLogState *state) {
	return ((int (*)(SimplerHostLogState *))fn)(state);
}

/* The path of the module that holds addr, or NULL. */
const char *hostabi_module_of(void *addr) {
	Dl_info info;
	if (addr == NULL || dladdr(addr, &info) == 0) return NULL;
	return info.dli_fname;
}
