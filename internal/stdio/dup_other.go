//go:build !unix

package stdio

import "os"

// Without SIGPIPE there is nothing to guard against.
const hasSIGPIPE = false

type fileID struct{}

func identity(int) (fileID, bool) { return fileID{}, false }

func dup(*os.File) *os.File { return nil }
