// Package satmath adds and subtracts int64 values clamped to the int64
// range: a hostile log can carry any ts and dur, and a wrapped sum would
// put a span at a wrong time or, in a loop bound, never end.
package satmath
