package straceview

// numbered gives each distinct key a number, in the order first seen,
// and keeps the keys by number: a builder or a spill stores numbers (4
// bytes) where a name, a hid or a run repeats, and reads the keys back
// by them. The zero value is ready.
type numbered[K comparable] struct {
	of   map[K]uint32
	list []K // by number
}

// number returns k's number, giving it the next one on first sight.
func (n *numbered[K]) number(k K) uint32 {
	if i, ok := n.of[k]; ok {
		return i
	}
	if n.of == nil {
		n.of = map[K]uint32{}
	}
	i := uint32(len(n.list))
	n.of[k] = i
	n.list = append(n.list, k)
	return i
}
