package cli

import "strings"

// Repeated is a flag.Value that collects a flag given several times, in
// order, into the slice it points to.
type Repeated struct{ List *[]string }

func (r Repeated) String() string {
	if r.List == nil {
		return ""
	}
	return strings.Join(*r.List, ",")
}

// Set appends v.
func (r Repeated) Set(v string) error { *r.List = append(*r.List, v); return nil }
