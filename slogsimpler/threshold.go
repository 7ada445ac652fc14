package slogsimpler

import (
	"log/slog"
	"sync/atomic"

	"simpler.dev/log/internal/ladder"
	"simpler.dev/log/levels"
)

// threshold is a State's live threshold: a level stored once, or a
// Leveler followed live, rounded onto the ladder; and whether MAX-style
// op lines are on. Every handler reads it on every record.
type threshold struct {
	// level is the stored threshold, always on the ladder. Written by
	// store, read by current unless follow is set.
	level atomic.Int64
	// follow, when set, is a Leveler the threshold follows live (read and
	// rounded on every record). Written by set and store; loaded by every
	// record (one atomic load when nil).
	follow atomic.Pointer[leveler]
	// chosen says the threshold is one the program chose (a non-nil
	// Options.Level, or SetLevel), not the bare default: Setup keeps a
	// chosen one. Written by NewState and SetLevel, read by Setup.
	chosen atomic.Bool
	// ops says the stored threshold was levels.Trace: MAX-style [OP]
	// lines on. Written with level by store; read by opsOn.
	ops atomic.Bool
	// c is told every change, for C modules (nil-safe: a cLink with none
	// attached publishes nothing). Set once by NewState.
	c *cLink
}

// leveler boxes a Leveler for an atomic pointer.
type leveler struct{ slog.Leveler }

// set makes l the threshold: nil means TIMING; a plain level is stored;
// any other Leveler (a *State other than self, a LevelVar) is followed.
func (t *threshold) set(l slog.Leveler, self *State) {
	switch v := l.(type) {
	case nil:
		t.store(ladder.DefaultThreshold)
	case *State:
		if v != self { // following itself: keep the threshold as it is
			t.follow.Store(&leveler{l})
		}
	case slog.Level:
		t.store(v)
	case levels.Level:
		t.store(slog.Level(v))
	default:
		t.follow.Store(&leveler{l})
	}
}

func (t *threshold) store(l slog.Level) {
	t.follow.Store(nil)
	t.ops.Store(l == levels.Trace)
	r := ladder.RoundThreshold(l)
	t.level.Store(int64(r))
	t.c.publish(r)
}

// current returns the threshold in force now: the followed Leveler's,
// rounded, or the stored one.
func (t *threshold) current() slog.Level {
	if f := t.follow.Load(); f != nil {
		r := ladder.RoundThreshold(f.Level())
		t.c.publishFollowed(r) // C modules follow the Leveler from Go's records
		return r
	}
	return slog.Level(t.level.Load())
}

// opsOn reports whether op lines are on: the threshold was set to
// levels.Trace, or the followed Leveler says levels.Trace now.
func (t *threshold) opsOn() bool {
	if f := t.follow.Load(); f != nil {
		return f.Level() == levels.Trace
	}
	return t.ops.Load()
}
