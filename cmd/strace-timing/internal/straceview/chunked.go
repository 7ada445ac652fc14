package straceview

// A chunked holds values in chunks of chunkLen that never move: a pointer
// to one stays valid as more are added, and no growth copies them (a
// slice grown by doubling held its old copy beside the new for a moment,
// a third more than what it held). The report builders keep their rows
// and invocations in one. The zero chunked is empty and ready.
type chunked[T any] struct {
	chunks [][]T
	n      int
}

const chunkLen = 1 << 12

// add appends the zero T and returns it.
func (c *chunked[T]) add() *T {
	if c.n%chunkLen == 0 {
		c.chunks = append(c.chunks, make([]T, chunkLen))
	}
	c.n++
	return c.at(c.n - 1)
}

// at returns value i.
func (c *chunked[T]) at(i int) *T { return &c.chunks[i/chunkLen][i%chunkLen] }

// len is how many values c holds.
func (c *chunked[T]) len() int { return c.n }

// done lets value i's chunk go once i is its last value (or the last of
// all): a reader going through the values in order releases them as it
// goes. Values of a chunk let go must not be read again.
func (c *chunked[T]) done(i int) {
	if i%chunkLen == chunkLen-1 || i == c.n-1 {
		c.chunks[i/chunkLen] = nil
	}
}

// reset empties c.
func (c *chunked[T]) reset() { *c = chunked[T]{} }
