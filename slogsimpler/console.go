package slogsimpler

import (
	"context"
	"io"
	"log/slog"
	"os"
	"strconv"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/lmittmann/tint"
	"golang.org/x/term"

	"simpler.dev/log/internal/stdio"
	"simpler.dev/log/levels"
)

// ConsoleOptions configure a console handler. The zero value and nil mean
// defaults.
type ConsoleOptions struct {
	// Level is the console's own minimum level; nil means INFO.
	Level slog.Leveler
	// NoColor turns colours off. They are also off when the NO_COLOR
	// environment variable is set to anything non-empty, and when the
	// writer is not a terminal.
	NoColor bool
	// TimeFormat is the time layout; empty means "15:04:05.000".
	TimeFormat string
	// AddSource adds the caller's file and line.
	AddSource bool
}

// ANSI 256-colour indexes of the two levels tint does not know.
const (
	colorTiming = 13 // bright magenta
	colorNul    = 8  // grey
)

// A ConsoleHandler prints records for a person, coloured, one line each,
// through github.com/lmittmann/tint:
//
//	10:00:00.123 INF serving addr=:8080
//	10:00:00.125 TIMING [STRACE] v=1 pid=4711 … name=chip.run ts=… dur=41250
//
// It differs from plain tint in three ways. TIMING and NUL print by name
// in their own colours instead of INF+2 and ERR+8, and levels between
// rungs print the rung below, as the envelope does. Control bytes, ANSI
// escape sequences and invalid UTF-8 in the message are escaped, so a
// message cannot start a new line or recolour the terminal (tint writes
// messages raw; keys and values it already quotes). And clones made from
// many goroutines at once are safe (tint's WithGroup shares a slice between
// clones; see cloneMu).
//
// Records at DEBUG, INFO, WARN and ERROR take tint's fast path, with no
// ReplaceAttr; only TIMING and NUL records pay for the one that names
// them.
type ConsoleHandler struct {
	level slog.Leveler
	plain slog.Handler // tint, no ReplaceAttr
	named slog.Handler // tint, ReplaceAttr naming TIMING and NUL
	// cloneMu is shared by every clone of one console. tint's WithGroup
	// appends to a slice whose backing array clones share, so two
	// goroutines deriving handlers from one parent at once write the same
	// element: a data race. Serialising WithGroup and WithAttrs across the
	// family removes it; Handle never takes the lock.
	cloneMu *sync.Mutex
}

var _ slog.Handler = (*ConsoleHandler)(nil)

// NewConsoleHandler returns a console handler writing to w.
func NewConsoleHandler(w io.Writer, opts *ConsoleOptions) *ConsoleHandler {
	var o ConsoleOptions
	if opts != nil {
		o = *opts
	}
	if o.Level == nil {
		o.Level = levels.Info
	}
	if o.TimeFormat == "" {
		o.TimeFormat = "15:04:05.000"
	}
	noColor := o.NoColor || os.Getenv("NO_COLOR") != "" || !isTerminal(w)
	// A closed pipe on standard error is a failed write (counted by the
	// fan-out), never SIGPIPE.
	w = stdio.Writer(w)
	// Both tint handlers admit everything: the console's level is checked
	// here, once.
	base := tint.Options{Level: slog.Level(-1 << 20), NoColor: noColor, TimeFormat: o.TimeFormat, AddSource: o.AddSource}
	named := base
	named.ReplaceAttr = nameLevel
	sw := &syncWriter{w: w}
	return &ConsoleHandler{
		level:   o.Level,
		plain:   tint.NewHandler(sw, &base),
		named:   tint.NewHandler(sw, &named),
		cloneMu: new(sync.Mutex),
	}
}

// syncWriter lets the two tint handlers share one writer without
// interleaving their lines.
type syncWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (s *syncWriter) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.w.Write(p)
}

// nameLevel is the named handler's ReplaceAttr: TIMING and NUL by name and
// colour. Every other attribute passes through.
func nameLevel(groups []string, a slog.Attr) slog.Attr {
	if len(groups) != 0 || a.Key != slog.LevelKey {
		return a
	}
	if l, ok := a.Value.Any().(slog.Level); ok && l >= levels.Nul {
		return tint.Attr(colorNul, slog.String(slog.LevelKey, "NUL"))
	}
	return tint.Attr(colorTiming, slog.String(slog.LevelKey, "TIMING"))
}

func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	return ok && term.IsTerminal(int(f.Fd()))
}

// Enabled reports whether level is at or above the console's level.
func (h *ConsoleHandler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.level.Level()
}

// Handle prints r on one line.
func (h *ConsoleHandler) Handle(ctx context.Context, r slog.Record) error {
	if !consolePlain(r.Message) {
		r = rebuild(r, escapeConsole(r.Message))
	}
	rl := levels.RoundRecord(r.Level)
	if r.Level >= levels.Nul || rl == levels.Timing {
		if r.Level >= levels.Nul {
			r.Level = levels.Nul
		} else {
			r.Level = levels.Timing
		}
		return h.named.Handle(ctx, r)
	}
	r.Level = rl
	return h.plain.Handle(ctx, r)
}

// rebuild returns r with another message.
func rebuild(r slog.Record, msg string) slog.Record {
	n := slog.NewRecord(r.Time, r.Level, msg, r.PC)
	r.Attrs(func(a slog.Attr) bool {
		n.AddAttrs(a)
		return true
	})
	return n
}

// WithAttrs returns a console whose records carry attrs.
func (h *ConsoleHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	h.cloneMu.Lock()
	defer h.cloneMu.Unlock()
	return &ConsoleHandler{level: h.level, plain: h.plain.WithAttrs(attrs), named: h.named.WithAttrs(attrs), cloneMu: h.cloneMu}
}

// WithGroup returns a console that puts later attributes under name.
func (h *ConsoleHandler) WithGroup(name string) slog.Handler {
	if name == "" {
		return h
	}
	h.cloneMu.Lock()
	defer h.cloneMu.Unlock()
	return &ConsoleHandler{level: h.level, plain: h.plain.WithGroup(name), named: h.named.WithGroup(name), cloneMu: h.cloneMu}
}

// consolePlain reports whether s can be printed as it is: no control
// bytes (ESC included), no DEL, valid UTF-8 without non-printing runes.
func consolePlain(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 || !unicode.IsPrint(r) {
			return false
		}
		i += size
	}
	return true
}

// escapeConsole writes non-printing bytes and runes as Go escapes, leaving
// everything else readable: "a\nb" becomes `a\nb`, ESC becomes `\x1b`.
func escapeConsole(s string) string {
	b := make([]byte, 0, len(s)+16)
	for i := 0; i < len(s); {
		c := s[i]
		if c >= 0x20 && c < 0x7f {
			b = append(b, c)
			i++
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b = append(b, `\x`...)
			b = append(b, hexByte(c)...)
		case c < utf8.RuneSelf || !unicode.IsPrint(r):
			q := strconv.QuoteRune(r) // 'x' with the escape inside
			b = append(b, q[1:len(q)-1]...)
		default:
			b = append(b, s[i:i+size]...)
		}
		i += size
	}
	return string(b)
}

func hexByte(c byte) []byte {
	const digits = "0123456789abcdef"
	return []byte{digits[c>>4], digits[c&0xf]}
}
