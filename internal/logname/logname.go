package logname

import (
	"fmt"
	"strconv"
	"strings"
)

// Gz is the suffix of a compressed rotated file: host.<pid>.<seq>.log.gz.
const Gz = ".gz"

// Rotated returns the name of rotated file seq of the set whose names
// begin with stem ("host.<pid>.", a directory before it or not):
// stem, seq in eight digits, ".log" (Gz after it when compressed).
func Rotated(stem string, seq int) string { return fmt.Sprintf("%s%08d.log", stem, seq) }

// Parse reads name (a base name) as a log file's: its set (the pid's
// digits, or pid-tag) and its rotation number, 0 for the current file. A
// rotated name may end in .gz (compressed); the current file's may not.
// ok is false for any other name: host.log, host.x.log, a tag that is not
// 8 to 32 lower-case hex digits, a seq of another width or 0, another
// suffix after .log.
func Parse(name string) (set string, seq int, ok bool) {
	mid, ok := strings.CutPrefix(name, "host.")
	if !ok {
		return "", 0, false
	}
	mid, gz := strings.CutSuffix(mid, Gz)
	if mid, ok = strings.CutSuffix(mid, ".log"); !ok {
		return "", 0, false
	}
	set, rot, rotated := strings.Cut(mid, ".")
	pid, tag, tagged := strings.Cut(set, "-")
	if !digits(pid) || tagged && !hexTag(tag) {
		return "", 0, false
	}
	if !rotated {
		if gz {
			return "", 0, false
		}
		return set, 0, true
	}
	if len(rot) != 8 || !digits(rot) {
		return "", 0, false
	}
	seq, err := strconv.Atoi(rot)
	if err != nil || seq == 0 {
		return "", 0, false
	}
	return set, seq, true
}

// PID returns the pid of a set Parse returned.
func PID(set string) string {
	pid, _, _ := strings.Cut(set, "-")
	return pid
}

// Current returns the name of the current file of a set: host.<set>.log.
func Current(set string) string { return "host." + set + ".log" }

// hexTag reports whether s is 8 to 32 lower-case hex digits.
func hexTag(s string) bool {
	return len(s) >= 8 && len(s) <= 32 && strings.Trim(s, "0123456789abcdef") == ""
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
