// Package racedetect tells tests whether the race detector is on, so an
// allocation budget skips at run time instead of hiding behind a build
// tag (the race detector allocates on its own).
package racedetect
