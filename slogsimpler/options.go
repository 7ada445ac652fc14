package slogsimpler

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"simpler.dev/log/sink"
)

// StateOptions configure a new State ([NewState]). The zero value and
// nil mean defaults: simpler's runtime's, TIMING and up, drops at a full
// queue, synchronous until [State.Start]. [Setup] keeps whatever a State
// was made with unless it is given that field (see [Options]).
//
// A State and a program's logging take two types, whose fields say which
// constructor takes what: the defaults differ on purpose (a bare State is
// simpler's runtime's, Setup's is a service's), and each type documents
// its own; Setup's options that make no State (the console, Handlers)
// are no field here.
type StateOptions struct {
	// Level is the threshold of the file (the state's live threshold),
	// read live on every record: a slog.LevelVar moves it whenever it is
	// set. Levels between rungs round up onto the ladder. Nil means
	// TIMING, simpler's default. SIMPLER_LOG_LEVEL does not apply here,
	// only under Setup.
	Level slog.Leveler
	// Dir is the directory for host.<pid>.log, bound at creation (see
	// State.BindDir). Empty means none: records go to standard error (or
	// Output). A Dir that cannot be bound is an error, and no State.
	Dir string
	// Output replaces standard error as the State's destination until a
	// directory is bound (tests, or a program that wants its records on a
	// pipe of its own).
	Output io.Writer
	// Destination, if not nil, replaces Output: sink.Writer(w) for a
	// writer of the process's own (a file, io.Discard: writes may batch
	// many records), sink.Pipe(w) for a pipe shared with others, or a
	// destination of the program's.
	Destination sink.Destination
	// FlushLevel is the level from which a record is exit-safe: its
	// logging call returns only once it and every record queued before it
	// are written (or counted as failed), or FlushBound has passed, so an
	// error logged right before os.Exit is in the file. Read live on every
	// record; nil means ERROR; levels.Nul+1 switches it off.
	FlushLevel slog.Leveler
	// FlushBound bounds that wait; zero means 250 ms, and a negative one
	// is an error. On timeout the record stays queued and counts like any
	// other.
	FlushBound time.Duration
	// Backpressure is what a logging call does when it finds the queue
	// full: zero or DropWhenFull drops its record (counted as queue_full,
	// reported in the log) after the yields every producer makes, never
	// sleeping, as simpler's runtime does; a positive duration waits up
	// to that long for room first (see Options.Backpressure). Counts
	// reports the waits and the drops.
	Backpressure time.Duration
	// Rotation caps the files of the bound directory: a size per file,
	// how many rotated files to keep, an age past which old files go (see
	// sink.Rotation). The zero value rotates nothing; a bad one is an
	// error (MaxFiles or Compress without MaxSize too: nothing would
	// rotate).
	Rotation sink.Rotation
	// Synchronous keeps the State synchronous under Setup too: no writer
	// goroutine runs, and every record is written in its own logging call.
	// A new State is synchronous until State.Start either way.
	Synchronous bool
}

// check refuses what cannot mean what it says, as Options.check does.
func (o *StateOptions) check() error {
	return (&Options{FlushBound: o.FlushBound, Backpressure: o.Backpressure, Rotation: o.Rotation}).check("NewState")
}

// Options configure a program's logging ([Setup]). The zero value and nil
// mean defaults: a service's, INFO and up, a bounded wait at a full queue.
// The first group is also a State's ([StateOptions]): Setup applies the
// ones it is given to the State it uses, field by field, a field given
// (not zero or nil) replacing the State's and one not given keeping it
// (see State). The second group is Setup's alone. NewState takes
// StateOptions: see there why two types.
type Options struct {
	// Level is the threshold of the file (the state's live threshold),
	// read live on every record: a slog.LevelVar moves it whenever it is
	// set, and one given to ConsoleLevel too moves both. Levels between
	// rungs round up onto the ladder. The first of these that is set
	// wins: SIMPLER_LOG_LEVEL, then LOGGING_LEVEL=trace (levels.Trace),
	// then Level, then the State's own level when the program chose it
	// (StateOptions.Level, or State.SetLevel), then INFO (slog's).
	Level slog.Leveler
	// Dir is the directory for host.<pid>.log (see State.BindDir). Empty
	// keeps the State's directory, and with none records go to the State's
	// destination (standard error) and Setup makes no separate console;
	// Setup makes the console whenever the State ends up bound. Setup's
	// Dir binds a State not yet bound, and one other than the State's is
	// an error wrapping sink.ErrAlreadyBound.
	Dir string
	// FlushLevel is the level from which a record is exit-safe: its
	// logging call returns only once it and every record queued before it
	// are written (or counted as failed), or FlushBound has passed, so an
	// error logged right before os.Exit is in the file. Read live on every
	// record; the first that is set wins: SIMPLER_LOG_FLUSH_LEVEL, then
	// FlushLevel, then the State's own (ERROR unless its maker chose).
	// levels.Nul+1 switches it off.
	// Records from the standard log package routed by Setup are always
	// written before their call returns.
	FlushLevel slog.Leveler
	// FlushBound bounds that wait; zero means the State's own (250 ms
	// unless its maker chose), and a negative one is an error. On timeout the record
	// stays queued and counts like any other.
	FlushBound time.Duration
	// Backpressure is what a logging call does when it finds the queue
	// full (the writer behind: a burst, a slow disk, a writer that lost
	// its processor to busy neighbours). A positive duration makes it
	// wait up to that long for room, then drop its record (counted as
	// queue_full, reported in the log); it waits no longer than the
	// writer needs to free a slot. DropWhenFull makes it drop, after the
	// yields every producer makes (see package sink), never sleeping:
	// simpler's own contract, for a program whose logging calls must never
	// wait on the writer. Zero keeps the State's own choice when its maker
	// made one (a non-zero StateOptions.Backpressure), and otherwise means
	// a service's default: wait up to DefaultBackpressure, as zap's and
	// phuslu's asynchronous writers make their callers wait. Counts
	// reports the waits (Waited, WaitedFor) and the drops. It takes effect
	// at once, for every handler bound to the State.
	Backpressure time.Duration
	// Rotation caps the files of the bound directory: a size per file,
	// how many rotated files to keep, an age past which old files go (see
	// sink.Rotation), for example sink.Rotation{MaxSize: 64 << 20,
	// MaxFiles: 10, MaxAge: 7 * 24 * time.Hour}. The zero value keeps the
	// State's rotation (none unless its maker chose one); any other replaces it
	// whole (a field of it left zero is zero, not the State's), from the
	// State's next write and before Setup binds Dir, so the bind's
	// retention pass follows it. A bad one is an error (MaxFiles or
	// Compress without MaxSize too: nothing would rotate).
	Rotation sink.Rotation
	// Synchronous is the writer's mode: with it, no writer goroutine runs
	// and every record is written in its own logging call, under a lock,
	// so none is dropped for want of room and each call costs a write.
	// Without it Setup starts the writer: a logging call queues its
	// record and returns (at a full queue it waits for room, or drops the
	// record, counted: see Backpressure). A State the program started
	// keeps its writer, and one made with StateOptions.Synchronous stays
	// synchronous under Setup (the program may start it, with
	// State.Start).
	Synchronous bool

	// Setup's own.

	// State is the state Setup uses; nil means Default(). Every option
	// the State carries survives Setup unless Setup is given it:
	//   - Level: SIMPLER_LOG_LEVEL, then LOGGING_LEVEL=trace, then Level,
	//     then the State's own when the program chose it, then INFO.
	//   - FlushLevel: SIMPLER_LOG_FLUSH_LEVEL, then FlushLevel, then the
	//     State's.
	//   - FlushBound, Backpressure, Rotation: Setup's when not zero,
	//     replacing the State's from then on; else the State's.
	//   - Dir: the State's binding stays; Setup's binds a State not yet
	//     bound, is a no-op for the same directory, and for another is an
	//     error wrapping sink.ErrAlreadyBound. Setup makes its console
	//     (unless NoConsole) whenever the State ends up bound, by Setup's
	//     Dir or by its own.
	//   - Synchronous: Setup starts the writer unless it is given
	//     Synchronous or the State was made Synchronous; it never stops a
	//     writer the program started.
	State *State
	// Console is where Setup's coloured console goes; nil means standard
	// error. It is only used with a directory bound (Setup's Dir or the
	// State's own).
	Console io.Writer
	// ConsoleLevel is the console's level; nil means INFO.
	// SIMPLER_LOG_CONSOLE_LEVEL overrides it.
	ConsoleLevel slog.Leveler
	// ConsoleSpans chooses the spans the console prints (see
	// ConsoleOptions.Spans); nil means the outermost ones (depth 0),
	// rolled up into one line a second for a name that repeats. The file
	// keeps every span.
	ConsoleSpans func(depth int, took time.Duration) bool
	// ConsoleAddSource adds the caller's file and line to console lines.
	ConsoleAddSource bool
	// ConsoleNoColor turns the console's colours off (see
	// ConsoleOptions.NoColor); NO_COLOR and a console that is no terminal
	// do too.
	ConsoleNoColor bool
	// ConsoleTimeFormat is the console's time layout (see
	// ConsoleOptions.TimeFormat); empty means its default.
	ConsoleTimeFormat string
	// NoConsole leaves the console out: the file only.
	NoConsole bool
	// Sampling, when set, samples records before any destination sees
	// them (see Sampling): off by default.
	Sampling *Sampling
	// Handlers are more destinations for the fan-out (a trace recorder,
	// say), each with its own level.
	Handlers []slog.Handler
	// ReplaceAttr rewrites or drops attributes before any destination sees
	// them (see WithReplaceAttr): a value it redacts reaches neither the
	// file, nor the console, nor a recorder in Handlers. Nil costs nothing.
	ReplaceAttr func(groups []string, a slog.Attr) slog.Attr
	// CModuleHandlers sends the records of C modules (package hostabi)
	// through the console and Handlers too, on the module's own thread,
	// which then runs their code. By default a C module's record passes
	// ReplaceAttr to the file alone, and its thread never waits for
	// anything of the program's.
	CModuleHandlers bool
}

// DropWhenFull, as Options.Backpressure, makes a logging call that finds
// the queue full drop its record (counted queue_full and reported in the
// log) instead of waiting for room: it yields the processor to the writer
// a few times first (see package sink), and never sleeps.
const DropWhenFull time.Duration = -1

// DefaultBackpressure is how long, under Setup, a logging call that finds
// the queue full waits for room before it drops its record (when neither
// Setup nor its State was given a Backpressure). The writer frees room
// within microseconds when it runs; this bounds the wait when it cannot
// (a destination stalled), so that a service slows down rather than
// stops.
const DefaultBackpressure = 250 * time.Millisecond

// check refuses the options that cannot mean what they say, naming the
// field and the fix: a negative duration, and retention without rotation
// (MaxFiles counts rotated files, Compress compresses them, MaxAge ages
// them out, and nothing rotates without MaxSize).
func (o *Options) check(who string) error {
	var problem string
	switch {
	case o.Backpressure < 0 && o.Backpressure != DropWhenFull:
		problem = fmt.Sprintf("Backpressure %v is negative, and not DropWhenFull (-1ns, the one negative value: drop at a full queue); a positive duration waits at most that long, 0 is the default", o.Backpressure)
	case o.FlushBound < 0:
		problem = fmt.Sprintf("FlushBound %v is negative: 0 means the default (250ms under a new State)", o.FlushBound)
	case o.Rotation.MaxSize > 0 && o.Rotation.MaxSize < 64<<10:
		problem = fmt.Sprintf("Rotation.MaxSize %d is below the minimum, 65536 bytes (64 KiB): one batch of the writer's must fit in a file", o.Rotation.MaxSize)
	case o.Rotation.MaxFiles > 0 && o.Rotation.MaxSize == 0:
		problem = fmt.Sprintf("Rotation.MaxFiles %d without MaxSize: nothing rotates, so there are no files to keep; set MaxSize (64 KiB at least)", o.Rotation.MaxFiles)
	case o.Sampling != nil && (o.Sampling.First < 0 || o.Sampling.Thereafter < 0 || o.Sampling.Tick < 0):
		problem = fmt.Sprintf("Sampling %+v: First, Thereafter and Tick are counts and a period, never negative", *o.Sampling)
	case o.Rotation.Compress && o.Rotation.MaxSize == 0:
		problem = "Rotation.Compress without MaxSize: nothing rotates, so there are no files to compress; set MaxSize (64 KiB at least)"
	case o.Rotation.MaxAge > 0 && o.Rotation.MaxSize == 0:
		problem = fmt.Sprintf("Rotation.MaxAge %v without MaxSize: the file being written never ages out, only old runs' files would; set MaxSize (64 KiB at least)", o.Rotation.MaxAge)
	default:
		return nil
	}
	return errors.New("slogsimpler: " + who + ": " + problem)
}
