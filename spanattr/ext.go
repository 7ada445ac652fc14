package spanattr

import (
	"errors"
	"fmt"
	"strings"
)

// ErrBadProducer is wrapped by ExtName's errors.
var ErrBadProducer = errors.New("spanattr: bad producer name")

// ExtName returns the span name for a producer outside simpler:
// "ext.<producer>.<span>". Readers keep such spans out of simpler's
// invocation views and attribute them to the producer, so the producer
// must be a single non-empty segment: no '.', space or '='. The span part
// must not be empty.
//
//	name, err := spanattr.ExtName("pypto", "decode_layer") // "ext.pypto.decode_layer"
func ExtName(producer, span string) (string, error) {
	if producer == "" || strings.ContainsAny(producer, ". =") {
		return "", fmt.Errorf("%w %q: want one non-empty segment without '.', ' ' or '='", ErrBadProducer, producer)
	}
	if span == "" {
		return "", fmt.Errorf("%w: empty span name for producer %q", ErrBadProducer, producer)
	}
	return "ext." + producer + "." + span, nil
}
