package envelope

import (
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
)

// A frame is a resolved program counter: what the envelope prints between
// the level and the message.
type frame struct {
	PC       uintptr
	Function string // last path element of the runtime name, e.g. "sink.(*Sink).Write"
	File     string // base name of the source file
	Line     int

	prefix string // "Function: [File:Line] ", rendered once
}

// Resolving a PC through runtime.CallersFrames costs about 170 ns and a few
// hundred bytes; a logging call site resolves the same PC every time. The
// cache is direct-mapped: frameCacheSize slots indexed by a hash of the PC,
// each an atomic pointer to an immutable frame. A hit is one atomic load and
// a compare. Two PCs that collide evict each other, which costs a re-resolve
// and is never wrong: a slot is only used when its frame's PC matches.
// Readers and writers are any goroutine; the atomic pointer publishes a
// fully built frame.
const frameCacheSize = 4096

var frameCache [frameCacheSize]atomic.Pointer[frame]

// lookup returns the frame for pc, which must be non-zero (a PC as
// slog.Record carries it: a return address).
func lookup(pc uintptr) *frame {
	h := (uint64(pc) * 0x9E3779B97F4A7C15) >> (64 - 12)
	slot := &frameCache[h]
	if f := slot.Load(); f != nil && f.PC == pc {
		return f
	}
	f := resolve(pc)
	slot.Store(f)
	return f
}

func resolve(pc uintptr) *frame {
	fs := runtime.CallersFrames([]uintptr{pc})
	fr, _ := fs.Next()
	file := filepath.Base(fr.File)
	if fr.File == "" {
		file = "?"
	}
	f := &frame{
		PC:       pc,
		Function: escapeFunc(funcName(fr.Function)),
		File:     file,
		Line:     fr.Line,
	}
	var buf [maxField + 10]byte
	src := "[" + string(appendField(buf[:0], file, fileField, maxField)) + ":" + strconv.Itoa(f.Line) + "] "
	f.prefix = f.Function + ": " + src
	return f
}

// funcName shortens a runtime function name to its last path element
// ("simpler.dev/log/sink.(*Sink).Write" becomes "sink.(*Sink).Write"). An
// empty name, or one that ends in '/', becomes "go". The result is still
// raw text: escapeFunc escapes and bounds it.
func funcName(full string) string {
	// Generic instantiations contain '/' inside brackets; cut at the last
	// '/' before the first '['.
	cut := full
	if i := strings.IndexByte(cut, '['); i >= 0 {
		cut = cut[:i]
	}
	if i := strings.LastIndexByte(cut, '/'); i >= 0 {
		full = full[i+1:]
	}
	if full == "" {
		return "go"
	}
	return full
}
