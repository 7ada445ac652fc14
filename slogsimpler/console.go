package slogsimpler

import (
	"context"
	"encoding"
	"fmt"
	"github.com/petermattis/goid"
	"io"
	"log/slog"
	"os"
	"reflect"
	"strings"
	"sync"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lmittmann/tint"
	"golang.org/x/term"

	"simpler.dev/log/envelope"
	"simpler.dev/log/internal/ladder"
	"simpler.dev/log/internal/origin"
	"simpler.dev/log/internal/printable"
	"simpler.dev/log/internal/stdio"
	"simpler.dev/log/internal/wire"
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
	// Spans chooses the spans the console prints, from the span's depth
	// (0 for the outermost span of an invocation, or of a goroutine's own
	// tree) and its duration; the file keeps every span whatever it says.
	// Nil prints spans at depth 0 only, and rolls up a name that repeats:
	// past eight of it in a second, one line a second counts them, with
	// their median, p99 and max ("spans http.request ×2431 p50 3.6ms p99
	// 36ms max 120ms (last 1s)"), while a failed or slow one still prints
	// at once. A filter of the program's chooses span by span, and
	// nothing rolls up. A filter that returns true prints
	// them all, one that returns false none; "depth == 0 || took >=
	// 100*time.Millisecond" adds the slow nested ones. A filter that
	// panics prints the span.
	Spans func(depth int, took time.Duration) bool
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
//	10:00:00.125 TIMING span chip.run.bind 1.22ms inv=1 bytes=4096
//
// It differs from plain tint in four ways. TIMING and NUL print by name
// in their own colours instead of INF+2 and ERR+8, and levels between
// rungs print the rung below, as the envelope does. Every string it prints
// (message, keys, values, errors, group names) has control bytes, escape
// sequences, C1 and bidi controls, line separators and invalid UTF-8
// escaped, never cut, so no record can start a new line or reach the
// terminal's control sequences; group depth is bounded as in the file.
// Spans and op lines read for people ("span chip.run.bind 1.22ms inv=1")
// while the file keeps the machine format. And clones made from many
// goroutines at once are safe (tint's WithGroup shares a slice between
// clones).
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
	// flush waits, bounded, for the lines a stalled terminal or pipe
	// left queued, and returns what went wrong with them; nil for a
	// writer of the program's own. Either way a line is written in the
	// logging call, unless the descriptor stalls (see consoleWriter).
	flush func() error
	// out is the console's writer on a file descriptor; nil for a writer
	// of the program's own.
	out *consoleWriter
	// depth is the number of WithGroup names passed to tint, at most
	// wire.MaxGroupDepth+1 (the last the "~" standing for every
	// deeper group): tint copies its group list on every WithGroup, so
	// 10 000 nested groups would cost it quadratic memory.
	depth int
	// noColor is tint's NoColor: in that mode tint cuts a key or value
	// short at its first U+FFFD (see cleanQuoted).
	noColor bool
	// spans is ConsoleOptions.Spans, never nil.
	spans func(depth int, took time.Duration) bool
	// roll rolls up the spans that repeat (see rollup); shared by the
	// console and its clones. Nil when the program chose its own Spans
	// filter.
	roll *rollup
}

var _ slog.Handler = (*ConsoleHandler)(nil)

// NewConsoleHandler returns a console handler writing to w. Each line is
// written before the logging call returns, so a program that logs and
// returns from main has printed everything, with no Close. When w is a
// file descriptor (a terminal, a pipe, standard error) that stops reading,
// one call waits at most 100 ms for it; later lines queue, up to 1 MiB,
// and are written in order when it reads again (Logging.Close waits for
// them, at most 250 ms, then stops the console, counting and reporting
// the lines it did not write); lines that find the queue full are dropped
// and their Handle returns an error, which a [Fanout] counts and reports.
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
	noColor := o.NoColor || strings.TrimSpace(os.Getenv(envNoColor)) != "" || !isTerminal(w)
	return newConsole(w, o, noColor)
}

// newConsole builds the handler with colours decided (tests force them on
// for a buffer).
func newConsole(w io.Writer, o ConsoleOptions, noColor bool) *ConsoleHandler {
	custom := o.Spans != nil
	if !custom {
		o.Spans = topSpans
	}
	// Both tint handlers admit everything: the console's level is checked
	// here, once.
	base := tint.Options{Level: slog.Level(-1 << 20), NoColor: noColor, TimeFormat: o.TimeFormat, AddSource: o.AddSource}
	named := base
	named.ReplaceAttr = nameLevel
	// A closed pipe on standard error is a failed write (counted by the
	// fan-out), never SIGPIPE. What the duplicate writes to is still a
	// descriptor, which can stop reading, even when stdio could not make
	// the duplicate yet.
	out := consoleOut(w, stdio.Writer(w))
	c := &ConsoleHandler{
		level:   o.Level,
		plain:   tint.NewTextHandler(out, &base),
		named:   tint.NewTextHandler(out, &named),
		cloneMu: new(sync.Mutex),
		noColor: noColor,
		spans:   o.Spans,
	}
	if cw, ok := out.(*consoleWriter); ok {
		c.flush, c.out = cw.Flush, cw
	}
	if !custom {
		c.roll = newRollup(c.rollupPrinter())
	}
	return c
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

// isTerminal reads the descriptor through SyscallConn rather than Fd:
// Fd puts a non-blocking file (a pipe from os.Pipe) in blocking mode for
// good, and a write stuck on a blocking descriptor cannot be interrupted
// (see consoleWriter.interrupt).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok || f == nil {
		return false
	}
	rc, err := f.SyscallConn()
	if err != nil {
		return false
	}
	tty := false
	_ = rc.Control(func(fd uintptr) { tty = term.IsTerminal(int(fd)) })
	return tty
}

// Enabled reports whether level is at or above the console's level.
func (h *ConsoleHandler) Enabled(_ context.Context, level slog.Level) bool {
	return level >= h.level.Level()
}

// Handle prints r on one line.
func (h *ConsoleHandler) Handle(ctx context.Context, r slog.Record) error {
	o := origin.Of(&r)
	failed := false
	if o != nil && o.Kind == origin.Span {
		if !h.showSpan(o.Span) {
			return nil // the file has it; the console is for people
		}
		if h.roll != nil {
			var shown bool
			if shown, failed = h.roll.show(o.Span); !shown {
				return nil // counted for the name's line a second
			}
		}
	} else if h.roll != nil && r.Level >= levels.Error {
		h.roll.failed(goid.Get(), envelope.Mono(r.Time)) // a span open on this goroutine failed
	}
	n := humanise(r, o) // a span or op line for people; the origin off others
	if failed {
		n.Message += " failed"
	}
	return h.print(ctx, n)
}

// print writes r, made safe and its level named, through tint.
func (h *ConsoleHandler) print(ctx context.Context, r slog.Record) error {
	if !consolePlain(r.Message) || !recordPlain(r, h.depth) {
		r = h.clean(r)
	}
	rl := ladder.RoundRecord(r.Level)
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

// showSpan asks the span filter; a filter that panics prints the span
// (a logging call never panics, and showing too much loses nothing).
func (h *ConsoleHandler) showSpan(s *envelope.Span) (show bool) {
	defer func() {
		if recover() != nil {
			show = true
		}
	}()
	return h.spans(s.Depth, time.Duration(s.Dur))
}

// clean returns r with its message and every attribute made safe to print.
func (h *ConsoleHandler) clean(r slog.Record) slog.Record {
	n := slog.NewRecord(r.Time, r.Level, escapeConsole(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		n.AddAttrs(cleanAttr(a, h.depth, 0, h.noColor))
		return true
	})
	return n
}

// WithAttrs returns a console whose records carry attrs.
func (h *ConsoleHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	if len(attrs) == 0 {
		return h
	}
	clean := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		clean[i] = cleanAttr(a, h.depth, 0, h.noColor)
	}
	h.cloneMu.Lock()
	defer h.cloneMu.Unlock()
	c := *h
	c.plain, c.named = h.plain.WithAttrs(clean), h.named.WithAttrs(clean)
	return &c
}

// WithGroup returns a console that puts later attributes under name. Past
// 32 groups (SPEC §11), later groups are flattened into one named "~", as
// in the file.
func (h *ConsoleHandler) WithGroup(name string) slog.Handler {
	switch {
	case name == "" || h.depth > wire.MaxGroupDepth:
		return h
	case h.depth == wire.MaxGroupDepth:
		name = wire.DeepGroup
	default:
		name = cleanQuoted(name, h.noColor)
	}
	h.cloneMu.Lock()
	defer h.cloneMu.Unlock()
	c := *h
	c.plain, c.named = h.plain.WithGroup(name), h.named.WithGroup(name)
	c.depth++
	return &c
}

// maxConsoleDescent bounds how many nested group values the console
// follows (a self-returning LogValuer would otherwise never end); deeper
// values print as !DEPTH.
const maxConsoleDescent = 256

// recordPlain reports whether every attribute of r can go to tint as it is.
func recordPlain(r slog.Record, depth int) bool {
	plain := true
	r.Attrs(func(a slog.Attr) bool {
		plain = attrPlain(a, depth)
		return plain
	})
	return plain
}

// attrPlain reports whether tint can print a unchanged: plain key, a
// value of a kind tint prints without text from the user or a plain
// string, and groups within the depth bound. It allocates nothing.
func attrPlain(a slog.Attr, depth int) bool {
	if !consoleSafe(a.Key) {
		return false
	}
	switch v := a.Value; v.Kind() {
	case slog.KindString:
		return consoleSafe(v.String())
	case slog.KindGroup:
		if a.Key != "" {
			depth++
		}
		if depth > wire.MaxGroupDepth {
			return false
		}
		for _, ga := range v.Group() {
			if !attrPlain(ga, depth) {
				return false
			}
		}
		return true
	case slog.KindAny, slog.KindLogValuer:
		return false
	}
	return true
}

// cleanAttr returns a with its key, string values, errors, other values'
// text and group names escaped for a terminal, LogValuers resolved, and
// groups past the depth bound flattened: the group at the bound is named
// "~" and deeper ones are inlined.
func cleanAttr(a slog.Attr, depth, descent int, noColor bool) slog.Attr {
	if a.Equal(slog.Attr{}) {
		return a // the empty Attr, which every handler ignores
	}
	key := cleanQuoted(a.Key, noColor)
	v := a.Value.Resolve() // recovers a panicking LogValue
	switch v.Kind() {
	case slog.KindString:
		return slog.String(key, cleanQuoted(v.String(), noColor))
	case slog.KindGroup:
		if descent >= maxConsoleDescent {
			return slog.String(key, "!DEPTH")
		}
		if key != "" {
			switch {
			case depth == wire.MaxGroupDepth:
				key = wire.DeepGroup
			case depth > wire.MaxGroupDepth:
				key = "" // inlined into the "~" group above
			}
			depth++
		}
		g := v.Group()
		attrs := make([]slog.Attr, len(g))
		for i, ga := range g {
			attrs[i] = cleanAttr(ga, depth, descent+1, noColor)
		}
		return slog.Attr{Key: key, Value: slog.GroupValue(attrs...)}
	case slog.KindAny:
		switch x := v.Any().(type) {
		case error:
			return slog.Any(key, consoleError(cleanQuoted(fmt.Sprint(x), noColor)))
		case encoding.TextMarshaler:
			return slog.String(key, cleanQuoted(marshalText(x), noColor))
		case []byte:
			return slog.String(key, cleanQuoted(string(x), noColor))
		default:
			return slog.String(key, cleanQuoted(fmt.Sprintf("%+v", x), noColor))
		}
	}
	return slog.Attr{Key: key, Value: v}
}

// consoleError is an error whose text is already escaped, so tint still
// prints it as an error.
type consoleError string

func (e consoleError) Error() string { return string(e) }

// marshalText calls MarshalText, turning a panic or an error into text as
// slog does.
func marshalText(m encoding.TextMarshaler) (s string) {
	defer func() {
		if r := recover(); r != nil {
			if rv := reflect.ValueOf(m); rv.Kind() == reflect.Pointer && rv.IsNil() {
				s = "<nil>"
				return
			}
			s = fmt.Sprintf("!PANIC: %v", r)
		}
	}()
	b, err := m.MarshalText()
	if err != nil {
		return "!ERROR:" + err.Error()
	}
	return string(b)
}

// consoleSafe reports whether s can reach tint unchanged: printable, free
// of the text `\x1b`, which tint's colour mode turns back into a raw ESC
// after quoting a string (it quotes, then replaces every `\x1b` in the
// quoted text with ESC, so its own colour codes survive), and of U+FFFD,
// at which its plain mode stops (cleanQuoted).
func consoleSafe(s string) bool {
	return consolePlain(s) && !strings.Contains(s, `\x1b`) && !strings.Contains(s, "\uFFFD")
}

// cleanString is escapeConsole for strings tint may quote: ESC and any
// literal `\x1b` are written `\u001b`, which tint leaves alone.
func cleanString(s string) string {
	if consoleSafe(s) {
		return s
	}
	return strings.ReplaceAll(escapeConsole(s), `\x1b`, `\u001b`)
}

// cleanQuoted is cleanString for the text tint quotes (strconv.Quote)
// when it holds a control byte or a non-printing rune: an attribute's key
// and value, and a group name (tint quotes the group path and key as one).
// Such text is left to that quoting, so a newline shows as \n once, not
// as the \\n of an escape quoted again. Only what tint's quoting gets
// wrong is escaped here first, as cleanString does: ESC and the text
// `\x1b` (tint's colour mode turns every `\x1b` of quoted text back into
// ESC), invalid UTF-8, and, with noColor, U+FFFD, written `\ufffd` (tint's
// plain mode reads text up to the first rune it decodes as an error, so
// it printed "a b" of "a b\uFFFDc d" and nothing after).
func cleanQuoted(s string, noColor bool) string {
	if !consoleSafe(s) && (!utf8.ValidString(s) || strings.IndexByte(s, 0x1b) >= 0 || strings.Contains(s, `\x1b`) || !tintQuotes(s)) {
		s = cleanString(s)
	}
	if noColor && strings.Contains(s, "\uFFFD") {
		s = strings.ReplaceAll(s, "\uFFFD", `\ufffd`)
	}
	return s
}

// tintQuotes reports whether tint is sure to quote s, a valid UTF-8
// string that is not consoleSafe: it holds a control byte below space or a
// non-printing rune, which tint's test (slog's) always quotes. DEL alone
// it does not quote, so a value whose only unprintable byte is DEL is
// escaped by cleanString.
func tintQuotes(s string) bool { return !printableText(s, false) }

// consolePlain reports whether s can be printed as it is: no control
// bytes (ESC included), no DEL, valid UTF-8 without non-printing runes.
func consolePlain(s string) bool { return printableText(s, true) }

// printableText reports whether s is valid UTF-8 with no control byte below
// space and no non-printing rune, and, when del is set, no DEL.
func printableText(s string, del bool) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if c < 0x20 || del && c == 0x7f {
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
// everything else readable: "a\nb" becomes `a\nb`, ESC becomes `\x1b`
// (printable.Escape, the rule the reader's terminal output follows too).
func escapeConsole(s string) string { return printable.Escape(s) }
