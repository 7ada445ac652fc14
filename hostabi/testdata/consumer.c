/*
 * A consumer module for hostabi's tests: the consumer side of simpler's
 * cross-DSO log state as the logging design describes it. It exports only
 * the bind symbol and the test entry points; until bound it is silent.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "host_log_state.h"

#define EXPORT __attribute__((visibility("default")))
#define RECORD 512

enum { DEBUG = 10, INFO = 20, TIMING = 25, WARN = 30, ERROR = 40, NUL = 60 };

static SimplerHostLogState *g_state; /* NULL until bound: silent */

static int on_ladder(int t) {
	return t == DEBUG || t == INFO || t == TIMING || t == WARN || t == ERROR || t == NUL;
}

EXPORT int simpler_host_log_bind_state(SimplerHostLogState *state) {
	if (state == NULL || !on_ladder(__atomic_load_n(&state->threshold, __ATOMIC_ACQUIRE))) return -1;
	__atomic_store_n(&g_state, state, __ATOMIC_RELEASE);
	return 0;
}

static SimplerHostLogState *state(void) { return __atomic_load_n(&g_state, __ATOMIC_ACQUIRE); }

static int enabled(int level) {
	SimplerHostLogState *s = state();
	if (s == NULL) return 0;
	int t = __atomic_load_n(&s->threshold, __ATOMIC_ACQUIRE);
	return t != NUL && level >= t;
}

static const char *name(int level) {
	switch (level) {
	case DEBUG: return "DEBUG";
	case INFO: return "INFO";
	case TIMING: return "TIMING";
	case WARN: return "WARN";
	case ERROR: return "ERROR";
	}
	return "?";
}

static long long mono_ns(void) {
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000000LL + ts.tv_nsec;
}

static void drop_not_admitted(SimplerHostLogState *s) {
	__atomic_fetch_add(&s->dropped_record_count, 1, __ATOMIC_RELAXED);
	__atomic_fetch_add(&s->dropped_by_reason[SIMPLER_HOST_LOG_DROP_NOT_ADMITTED], 1, __ATOMIC_RELAXED);
}

/* submit hands a finished record to the owner's queue: 1 accepted, 0 lost
 * (counted, by the owner or here). */
static int submit(const char *rec, size_t n, int32_t anchor_pid) {
	SimplerHostLogState *s = state();
	uint64_t prev = __atomic_fetch_add(&s->sink_producer_state, 1, __ATOMIC_ACQ_REL);
	if (prev & SIMPLER_HOST_LOG_PRODUCER_STOP) {
		__atomic_fetch_sub(&s->sink_producer_state, 1, __ATOMIC_RELEASE);
		drop_not_admitted(s);
		return 0;
	}
	SimplerHostLogEnqueueFn fn = __atomic_load_n(&s->sink_enqueue, __ATOMIC_ACQUIRE);
	void *ctx = __atomic_load_n(&s->sink_context, __ATOMIC_ACQUIRE);
	if (__atomic_load_n(&s->sink_owner_pid, __ATOMIC_ACQUIRE) != getpid() || fn == NULL || ctx == NULL) {
		__atomic_fetch_sub(&s->sink_producer_state, 1, __ATOMIC_RELEASE);
		drop_not_admitted(s);
		return 0;
	}
	return fn(ctx, s, rec, (uint32_t)n, anchor_pid) != 0; /* the callee releases our reference */
}

/* format writes one envelope record; file may be NULL (machine records). */
static size_t format(char *rec, int level, const char *func, const char *file, int line, const char *fmt, ...) {
	int n = snprintf(rec, RECORD, "[mono_ns=%lld][T0x%lx][%s] %s: ", mono_ns(), (unsigned long)pthread_self(), name(level), func);
	if (file != NULL && n < RECORD) n += snprintf(rec + n, RECORD - n, "[%s:%d] ", file, line);
	va_list ap;
	va_start(ap, fmt);
	if (n < RECORD) n += vsnprintf(rec + n, RECORD - n, fmt, ap);
	va_end(ap);
	if (n >= RECORD - 1) {
		rec[RECORD - 2] = '~';
		rec[RECORD - 1] = '\n';
		return RECORD;
	}
	rec[n++] = '\n';
	return (size_t)n;
}

static void anchor_if_needed(void) {
	if (!enabled(TIMING)) return;
	SimplerHostLogState *s = state();
	int32_t pid = (int32_t)getpid();
	int32_t seen = __atomic_load_n(&s->clock_anchor_pid, __ATOMIC_ACQUIRE);
	if (seen == pid || seen == -pid) return;
	if (!__atomic_compare_exchange_n(&s->clock_anchor_pid, &seen, -pid, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) return;
	struct timespec mono, wall;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &wall);
	char rec[RECORD];
	size_t n = format(rec, TIMING, "clock_anchor", NULL, 0, "[CLOCK_ANCHOR] v=1 pid=%d mono_ns=%lld wall_ns=%lld", pid,
	                  (long long)mono.tv_sec * 1000000000LL + mono.tv_nsec, (long long)wall.tv_sec * 1000000000LL + wall.tv_nsec);
	int ok = submit(rec, n, pid);
	int32_t claim = -pid;
	__atomic_compare_exchange_n(&s->clock_anchor_pid, &claim, ok ? pid : 0, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE);
}

/* consumer_log logs msg at level: 1 accepted, 0 lost, -1 below the
 * threshold (or never bound). */
EXPORT int consumer_log(int level, const char *msg) {
	if (!enabled(level)) return -1;
	anchor_if_needed();
	char rec[RECORD];
	size_t n = format(rec, level, "consumer_log", "consumer.c", __LINE__, "%s", msg);
	return submit(rec, n, 0);
}

/* consumer_raw hands n bytes to the owner as they are, as a module that
 * formats its own records (or a hostile one) would. */
EXPORT int consumer_raw(const char *rec, int n) {
	return submit(rec, (size_t)n, 0);
}

/* consumer_span writes a [STRACE] span at TIMING. */
EXPORT int consumer_span(const char *span, unsigned long long inv, int depth, long long ts, long long dur) {
	if (!enabled(TIMING)) return -1;
	anchor_if_needed();
	char rec[RECORD];
	size_t n = format(rec, TIMING, "emit_host_span", NULL, 0,
	                  "[STRACE] v=1 pid=%d tid=%ld inv=%llu hid=0 depth=%d name=%s ts=%lld dur=%lld", (int)getpid(),
	                  (long)pthread_self() & 0x7fffffff, inv, depth, span, ts, dur);
	return submit(rec, n, 0);
}

struct job {
	int id, per;
	long accepted;
};

static void *worker(void *arg) {
	struct job *j = arg;
	char msg[64];
	for (int i = 0; i < j->per; i++) {
		snprintf(msg, sizeof msg, "c thread %d record %d", j->id, i);
		if (consumer_log(INFO, msg) == 1) j->accepted++;
	}
	return NULL;
}

/* consumer_threads logs per INFO records from each of n threads and
 * returns how many were accepted. */
EXPORT long consumer_threads(int n, int per) {
	pthread_t t[64];
	struct job jobs[64];
	if (n > 64) n = 64;
	for (int i = 0; i < n; i++) {
		jobs[i] = (struct job){i, per, 0};
		pthread_create(&t[i], NULL, worker, &jobs[i]);
	}
	long total = 0;
	for (int i = 0; i < n; i++) {
		pthread_join(t[i], NULL);
		total += jobs[i].accepted;
	}
	return total;
}

/* What simpler's diagnostics read of the state: _host_log_dropped_records()
 * (the total), its split by reason (reason -1: the total) and
 * _host_log_pending_records(); 0 when never bound. */
EXPORT unsigned long long consumer_counter(int which) {
	SimplerHostLogState *s = state();
	if (s == NULL) return 0;
	if (which == -2) return __atomic_load_n(&s->pending_record_count, __ATOMIC_ACQUIRE);
	if (which == -1) return __atomic_load_n(&s->dropped_record_count, __ATOMIC_ACQUIRE);
	return __atomic_load_n(&s->dropped_by_reason[which & 3], __ATOMIC_ACQUIRE);
}
