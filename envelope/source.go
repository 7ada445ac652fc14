package envelope

import (
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
)

// A Frame is a resolved program counter: what the envelope prints between
// the level and the message.
type Frame struct {
	PC       uintptr
	Function string // last path element of the runtime name, e.g. "sink.(*Queue).Push"
	File     string // base name of the source file
	Line     int

	prefix string // "Function: [File:Line] ", rendered once
	source int    // offset of "[File:Line] " in prefix
}

// Prefix returns the rendered "func: [file:line] " text.
func (f *Frame) Prefix() string { return f.prefix }

// Resolving a PC through runtime.CallersFrames costs about 170 ns and a few
// hundred bytes; a logging call site resolves the same PC every time. The
// cache is direct-mapped: frameCacheSize slots indexed by a hash of the PC,
// each an atomic pointer to an immutable Frame. A hit is one atomic load and
// a compare. Two PCs that collide evict each other, which costs a re-resolve
// and is never wrong: a slot is only used when its Frame's PC matches.
// Readers and writers are any goroutine; the atomic pointer publishes a
// fully built Frame.
const frameCacheSize = 4096

var frameCache [frameCacheSize]atomic.Pointer[Frame]

// Lookup returns the frame for pc, which must be non-zero (a PC as
// slog.Record carries it: a return address).
func Lookup(pc uintptr) *Frame {
	h := (uint64(pc) * 0x9E3779B97F4A7C15) >> (64 - 12)
	slot := &frameCache[h]
	if f := slot.Load(); f != nil && f.PC == pc {
		return f
	}
	f := resolve(pc)
	slot.Store(f)
	return f
}

func resolve(pc uintptr) *Frame {
	fs := runtime.CallersFrames([]uintptr{pc})
	fr, _ := fs.Next()
	f := &Frame{
		PC:       pc,
		Function: FuncName(fr.Function),
		File:     filepath.Base(fr.File),
		Line:     fr.Line,
	}
	if fr.File == "" {
		f.File = "?"
	}
	f.prefix = f.Function + ": [" + f.File + ":" + strconv.Itoa(f.Line) + "] "
	f.source = len(f.Function) + 2
	return f
}

// FuncName shortens a runtime function name to its last path element
// ("simpler.dev/log/sink.(*Queue).Push" becomes "sink.(*Queue).Push") and
// replaces anything that would break the envelope's "func: " field (colons,
// white space, control bytes) with '_'. An empty name becomes "go".
func FuncName(full string) string {
	if full == "" {
		return "go"
	}
	// Generic instantiations contain '/' inside brackets; cut at the last
	// '/' before the first '['.
	cut := full
	if i := strings.IndexByte(cut, '['); i >= 0 {
		cut = cut[:i]
	}
	if i := strings.LastIndexByte(cut, '/'); i >= 0 {
		full = full[i+1:]
	}
	if strings.IndexFunc(full, badFuncRune) < 0 {
		return full
	}
	return strings.Map(func(r rune) rune {
		if badFuncRune(r) {
			return '_'
		}
		return r
	}, full)
}

func badFuncRune(r rune) bool {
	return r == ':' || r <= ' ' || r == 0x7f || r == '\u0085' || r == '\u2028' || r == '\u2029' || r == 0xA0
}
