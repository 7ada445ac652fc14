// Package render turns slog records into host envelope lines, with the
// attributes and groups of WithAttrs and WithGroup rendered once. It is
// the part of slogsimpler's file handler that does not write, shared with
// the trace recorder, which keeps records in the same envelope.
package render
