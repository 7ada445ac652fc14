package envelope

import (
	"path/filepath"
	"runtime"
)

// callerPC returns a PC inside itself (as slog records one: a return
// address's frame) with the file and line that PC resolves to.
func callerPC() (uintptr, string, int) {
	var pcs [1]uintptr
	runtime.Callers(1, pcs[:])
	_, file, line, _ := runtime.Caller(0)
	return pcs[0], filepath.Base(file), line - 1
}
