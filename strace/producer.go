package strace

import "strings"

// ExternalProducer returns the producer of an ext.<producer>.<span> name,
// or "" when the name is not one (all three segments must be non-empty).
func ExternalProducer(name string) string {
	rest, ok := strings.CutPrefix(name, "ext.")
	if !ok {
		return ""
	}
	producer, span, ok := strings.Cut(rest, ".")
	if !ok || producer == "" || span == "" || span[0] == '.' {
		return ""
	}
	return producer
}
