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
	hids, groups := callables(invs, func(iv *Invocation) (string, uint64) { return iv.HID, iv.Inv })
	out := make([]Bucket, len(hids))
	for i := range hids {
		out[i] = Bucket{HID: hids[i], Invocations: groups[i]}
	}
	return out
}

// callables groups invs, given in Group's order, by callable as Buckets
// does: each callable's invocations by inv (stably), the callables
// busiest first, as many keeping the order their hid first comes in.
// key gives an invocation's hid and inv.
func callables[T any, H comparable](invs []T, key func(T) (H, uint64)) ([]H, [][]T) {
	index := map[H]int{}
	var hids []H
	var groups [][]T
	for _, iv := range invs {
		hid, _ := key(iv)
		i, ok := index[hid]
		if !ok {
			i = len(hids)
			index[hid] = i
			hids, groups = append(hids, hid), append(groups, nil)
		}
		groups[i] = append(groups[i], iv)
	}
	for _, g := range groups {
		slices.SortStableFunc(g, func(a, b T) int {
			_, x := key(a)
			_, y := key(b)
			return cmp.Compare(x, y)
		})
	}
	order := make([]int, len(hids))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(len(groups[b]), len(groups[a])) })
	sortedHIDs, sortedGroups := make([]H, len(order)), make([][]T, len(order))
	for i, o := range order {
		sortedHIDs[i], sortedGroups[i] = hids[o], groups[o]
	}
	return sortedHIDs, sortedGroups
}

// Label names a bucket as simpler's reader does: "decode" for the busiest
// when it has more than one invocation, "prefill" for a callable seen once,
// else the hid's first 8 characters.
func Label(buckets []Bucket, hid string) string {
	for i, b := range buckets {
		if b.HID == hid {
			return label(hid, i == 0, len(b.Invocations))
		}
	}
	return label(hid, false, 0)
}

// label is Label of the bucket of hid, the busiest when first, of n
// invocations.
func label(hid string, first bool, n int) string {
	switch {
	case first && n > 1:
		return "decode"
	case n == 1:
		return "prefill"
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
