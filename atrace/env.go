package atrace

import (
	"fmt"
	"path/filepath"

	"simpler.dev/log/internal/safedir"
)

// Aging bounds, as CANN has them.
const (
	minRecordNum     = 10
	maxRecordNum     = 1000
	defaultRecordNum = 10
	// maxRootLen leaves room under the root for the trace directories
	// within Linux's PATH_MAX (4096).
	maxRootLen = 4096 - 256
)

// envRecordNum and envWorkPath are the variables CANN reads.
const (
	envRecordNum = "ASCEND_TRACE_RECORD_NUM"
	envWorkPath  = "ASCEND_WORK_PATH"
)

// parseRecordNum reads ASCEND_TRACE_RECORD_NUM as CANN does: a decimal
// number filling the whole string, leading white space and a '+' allowed,
// in [10, 1000]. Otherwise ok is false, n is 10, and warning is the text
// CANN logs.
func parseRecordNum(s string) (n int, ok bool, warning string) {
	i := 0
	for i < len(s) && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\v' || s[i] == '\f' || s[i] == '\r') {
		i++
	}
	if i < len(s) && s[i] == '+' {
		i++
	}
	v, digits := 0, 0
	for ; i < len(s) && s[i] >= '0' && s[i] <= '9'; i++ {
		if v <= maxRecordNum {
			v = v*10 + int(s[i]-'0')
		}
		digits++
	}
	if digits == 0 || i != len(s) || v < minRecordNum || v > maxRecordNum {
		return defaultRecordNum, false, fmt.Sprintf("invalid value [%s] for %s, expected range: [%d, %d]. Use default dir num=%d.",
			s, envRecordNum, minRecordNum, maxRecordNum, defaultRecordNum)
	}
	return v, true, ""
}

// resolveRoot picks the dump root: ASCEND_WORK_PATH when it is set, not too
// long, and a directory this process can create (0750) and write; else
// $HOME/ascend. why says why the work path was not used.
func resolveRoot(lookup func(string) (string, bool)) (root, why string, err error) {
	if v, ok := lookup(envWorkPath); ok && v != "" {
		abs, aerr := filepath.Abs(v)
		switch {
		case aerr != nil:
			why = aerr.Error()
		case len(abs) > maxRootLen:
			why = fmt.Sprintf("%s is longer than %d bytes", envWorkPath, maxRootLen)
		default:
			if _, merr := safedir.MkdirAll(abs, "", 0o750); merr != nil {
				why = merr.Error()
			} else if real, rerr := filepath.EvalSymlinks(abs); rerr != nil {
				why = rerr.Error()
			} else if !writable(real) {
				why = real + " is not writable"
			} else {
				return real, "", nil
			}
		}
	}
	home, ok := lookup("HOME")
	if !ok || home == "" {
		return "", why, fmt.Errorf("atrace: no dump root: %s unusable (%s) and HOME unset", envWorkPath, why)
	}
	return filepath.Join(home, "ascend"), why, nil
}
