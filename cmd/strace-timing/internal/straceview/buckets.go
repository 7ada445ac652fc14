package straceview

import (
	"cmp"
	"slices"

	"simpler.dev/log/strace"
)

// A Bucket is every invocation of one callable (hid), ordered by inv.
type Bucket struct {
	HID         string
	Invocations []*Invocation
}

// Buckets groups invocations by hid, busiest first; buckets with as many
// invocations keep the order in which their hid first appears in invs
// (which Group sorts by pid, then inv), as simpler's reader orders them.
func Buckets(invs []*Invocation) []Bucket {
	index := map[string]int{}
	var out []Bucket
	for _, iv := range invs {
		i, ok := index[iv.HID]
		if !ok {
			i = len(out)
			index[iv.HID] = i
			out = append(out, Bucket{HID: iv.HID})
		}
		out[i].Invocations = append(out[i].Invocations, iv)
	}
	for _, b := range out {
		slices.SortStableFunc(b.Invocations, func(a, b *Invocation) int { return cmp.Compare(a.Inv, b.Inv) })
	}
	slices.SortStableFunc(out, func(a, b Bucket) int { return cmp.Compare(len(b.Invocations), len(a.Invocations)) })
	return out
}

// Label names a bucket as simpler's reader does: "decode" for the busiest
// when it has more than one invocation, "prefill" for a callable seen once,
// else the hid's first 8 characters.
func Label(buckets []Bucket, hid string) string {
	if len(buckets) > 0 && buckets[0].HID == hid && len(buckets[0].Invocations) > 1 {
		return "decode"
	}
	for _, b := range buckets {
		if b.HID == hid && len(b.Invocations) == 1 {
			return "prefill"
		}
	}
	return hid[:min(8, len(hid))]
}

// byName returns the earliest span of each name in iv, as simpler's reader
// keys an invocation's spans.
func byName(iv *Invocation) map[string]*strace.Span {
	m := map[string]*strace.Span{}
	for _, s := range iv.Spans {
		if prev, ok := m[s.Name]; !ok || s.TS < prev.TS {
			m[s.Name] = s
		}
	}
	return m
}
