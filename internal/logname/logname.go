// Package logname reads the names of the files a sink writes, the one
// rule the writer's retention and the readers share: host.<pid>.log, the
// current file, and host.<pid>.<seq>.log, a rotated one, seq eight digits
// counting up from 1 (so name order is the order written); a rotated file
// compressed (sink.Rotation's Compress) is host.<pid>.<seq>.log.gz, the
// same file of the set under the same seq, and sorts with the rotated
// names, before host.<pid>.log.
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

// Parse reads name (a base name) as a log file's: its pid's digits and its
// rotation number, 0 for the current file. A rotated name may end in .gz
// (compressed); the current file's may not. ok is false for any other
// name: host.log, host.x.log, a seq of another width or 0, another suffix
// after .log.
func Parse(name string) (pid string, seq int, ok bool) {
	mid, ok := strings.CutPrefix(name, "host.")
	if !ok {
		return "", 0, false
	}
	mid, gz := strings.CutSuffix(mid, Gz)
	if mid, ok = strings.CutSuffix(mid, ".log"); !ok {
		return "", 0, false
	}
	pid, rot, rotated := strings.Cut(mid, ".")
	if !digits(pid) {
		return "", 0, false
	}
	if !rotated {
		if gz {
			return "", 0, false
		}
		return pid, 0, true
	}
	if len(rot) != 8 || !digits(rot) {
		return "", 0, false
	}
	seq, err := strconv.Atoi(rot)
	if err != nil || seq == 0 {
		return "", 0, false
	}
	return pid, seq, true
}

// digits reports whether s is one or more ASCII digits.
func digits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
