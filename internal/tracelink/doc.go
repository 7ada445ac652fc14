// Package tracelink lets slogsimpler's file handler ask package spanattr,
// which it does not import, whether a record logged with a context is
// inside a tree of spans that joined a caller's trace, and so must carry
// trace_id= and span_id= in the file (SPEC §13, "Traces that cross
// processes"). spanattr sets [Record] when it is initialised; a program
// that never links spanattr has no spans, and Record stays nil.
package tracelink
