package tracelink

import "context"

// Record reports the trace and span ids a record logged with ctx carries
// in the file, and whether it carries any. Set once by package spanattr
// at initialisation, before any record is logged; read by every Handle of
// slogsimpler's file handler that has a context. Nil when spanattr is not
// linked in.
var Record func(ctx context.Context) (traceID [16]byte, spanID [8]byte, ok bool)
