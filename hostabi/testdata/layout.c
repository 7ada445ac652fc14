/* Prints the layout of SimplerHostLogState as this compiler sees it. */
#include <stddef.h>
#include <stdio.h>

#include "host_log_state.h"

#define F(f) printf("%s %zu\n", #f, offsetof(SimplerHostLogState, f))

int main(void) {
	F(threshold);
	F(clock_anchor_pid);
	F(log_directory_bound);
	F(log_directory);
	F(sink_owner_pid);
	F(sink_process_pid);
	F(sink_context);
	F(sink_enqueue);
	F(dropped_record_count);
	F(pending_record_count);
	F(sink_producer_state);
	F(dropped_by_reason);
	F(reported_drop_count);
	printf("size %zu\n", sizeof(SimplerHostLogState));
	return 0;
}
