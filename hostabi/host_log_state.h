/*
 * simpler's cross-DSO host log state, as the logging design lays it out
 * (seeds/000-simpler-logging.txt, "Cross-DSO host state"). The process
 * owner (here a Go slogsimpler.State, through package hostabi) allocates
 * one; every module bound to it reads the live threshold, coordinates the
 * one [CLOCK_ANCHOR] and submits finished records through sink_enqueue.
 * Every mutable field is accessed with atomic builtins.
 */
#ifndef SIMPLER_HOST_LOG_STATE_H
#define SIMPLER_HOST_LOG_STATE_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Drop reasons, indexes of dropped_by_reason. */
#define SIMPLER_HOST_LOG_DROP_QUEUE_FULL 0
#define SIMPLER_HOST_LOG_DROP_CLAIM_EXHAUSTED 1
#define SIMPLER_HOST_LOG_DROP_OUTPUT_FAILED 2
#define SIMPLER_HOST_LOG_DROP_NOT_ADMITTED 3

/* The high bit of sink_producer_state: admission closed. */
#define SIMPLER_HOST_LOG_PRODUCER_STOP (UINT64_C(1) << 63)

struct SimplerHostLogState;

/* Returns nonzero once the record is accepted. Zero: the record was
 * counted under one reason by the callee. The caller has added one to
 * sink_producer_state's low bits; the callee takes it off on every path. */
typedef int (*SimplerHostLogEnqueueFn)(
    void *context, struct SimplerHostLogState *state,
    const char *record, uint32_t size, int32_t anchor_pid);

typedef struct SimplerHostLogState {
    int32_t threshold;
    int32_t clock_anchor_pid;
    int32_t log_directory_bound;
    char log_directory[1024];
    int32_t sink_owner_pid;
    int32_t sink_process_pid;
    void *sink_context;
    SimplerHostLogEnqueueFn sink_enqueue;
    uint64_t dropped_record_count;
    uint64_t pending_record_count;
    uint64_t sink_producer_state;
    uint64_t dropped_by_reason[4];
    uint64_t reported_drop_count;
} SimplerHostLogState;

int simpler_host_log_bind_state(SimplerHostLogState *state);

#ifdef __cplusplus
}
#endif

#endif
