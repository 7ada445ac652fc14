package sink

import (
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// gatedWriter blocks every write until open is closed, and keeps what
// was written.
type gatedWriter struct {
	open    chan struct{}
	mu      sync.Mutex
	b       strings.Builder
	entered chan struct{} // closed at the first write
	once    sync.Once
}

func (g *gatedWriter) Write(p []byte) (int, error) {
	g.once.Do(func() { close(g.entered) })
	<-g.open
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.b.Write(p)
}

// TestWarnerStalled: with standard error stalled, a thousand warnings (a
// thousand SIGHUPs refused, a thousand failed writes) hold one goroutine
// and at most warnQueue of them; when standard error moves again, what
// was held is written and what was not is counted in one line. On
// 8292346 each warning started a goroutine of its own, blocked for as
// long as standard error was.
func TestWarnerStalled(t *testing.T) {
	g := &gatedWriter{open: make(chan struct{}), entered: make(chan struct{})}
	wr := newWarner(func() io.Writer { return g })
	const n = 1000
	wr.say("warning 0\n")
	<-g.entered // the goroutine is in its first write, stalled
	for i := 1; i < n; i++ {
		wr.say(fmt.Sprintf("warning %d\n", i))
	}
	wr.mu.Lock()
	started, queued := wr.started, len(wr.queue)
	wr.mu.Unlock()
	assert.Equal(t, 1, started, "one goroutine, however many warnings")
	assert.LessOrEqual(t, queued, warnQueue)

	close(g.open)
	wr.wait(time.Hour) // returns when written: the bound is a guard only
	out := g.b.String()
	written := strings.Count(out, "warning ")
	m := regexp.MustCompile(`sink: (\d+) more warning\(s\) were not written`).FindStringSubmatch(out)
	require.NotNil(t, m, out)
	notWritten, _ := strconv.Atoi(m[1])
	assert.Equal(t, n, written+notWritten, "every warning written or counted")
	assert.Equal(t, 1+warnQueue, written, "the one being written and the queue")
	assert.True(t, strings.HasPrefix(out, "warning 0\nwarning 1\n"), "in order")

	wr.say("later\n")
	wr.wait(time.Hour)
	assert.True(t, strings.HasSuffix(g.b.String(), "later\n"))
	wr.mu.Lock()
	assert.Equal(t, 2, wr.started, "a new goroutine once the first ended")
	wr.mu.Unlock()
}
