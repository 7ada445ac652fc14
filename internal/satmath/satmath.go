package satmath

import "math"

// Add returns a+b clamped to the int64 range.
func Add(a, b int64) int64 {
	c := a + b
	if (c > a) != (b > 0) {
		if b > 0 {
			return math.MaxInt64
		}
		return math.MinInt64
	}
	return c
}

// Sub returns a-b clamped to the int64 range.
func Sub(a, b int64) int64 {
	if b == math.MinInt64 {
		if a >= 0 {
			return math.MaxInt64
		}
		return a - b
	}
	return Add(a, -b)
}
