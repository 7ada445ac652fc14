package straceview

import "simpler.dev/log/internal/printable"

// Escape is printable.Escape: text as a terminal may print it.
func Escape(s string) string { return printable.Escape(s) }

// shown is show, or the text as it is when show is nil.
func shown(show func(string) string, s string) string {
	if show == nil {
		return s
	}
	return show(s)
}
