package cli

import (
	"bytes"
	"flag"
	"io"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"simpler.dev/log/internal/testkit/logtest"
)

func TestRepeated(t *testing.T) {
	var got []string
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	fs.Var(Repeated{List: &got}, "label", "")
	require.NoError(t, fs.Parse([]string{"--label", "a", "-label=b", "--label", ""}))
	assert.Equal(t, []string{"a", "b", ""}, got)
	assert.Equal(t, "a,b,", Repeated{List: &got}.String())
	assert.Empty(t, Repeated{}.String(), "the zero value, as flag.PrintDefaults makes it")
}

func TestProgress(t *testing.T) {
	// The clock and the ticks are the test's: nothing here depends on
	// how fast the machine is.
	var mu sync.Mutex
	now := time.Unix(1000, 0)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	advance := func(d time.Duration) { mu.Lock(); now = now.Add(d); mu.Unlock() }

	t.Run("silent for the first second, then a line, wiped at the end", func(t *testing.T) {
		var out logtest.Buffer
		tick := make(chan time.Time)
		p := newProgress(&out, "reading", 200e6, clock, tick)
		_, err := io.Copy(io.Discard, p.Reader(strings.NewReader(strings.Repeat("x", 50e6))))
		require.NoError(t, err)
		advance(500 * time.Millisecond)
		tick <- time.Time{}
		tick <- time.Time{} // the first tick is handled once the second is taken
		assert.Empty(t, out.String(), "under a second: nothing")
		advance(time.Second)
		tick <- time.Time{}
		tick <- time.Time{} // the same line: not drawn again
		p.Writer(io.Discard).Write(make([]byte, 50e6))
		tick <- time.Time{}
		p.Done()
		assert.Equal(t, "\r\x1b[Kreading: 25 % (50.0 MB of 200.0 MB), 1.5 s"+
			"\r\x1b[Kreading: 50 % (100.0 MB of 200.0 MB), 1.5 s\r\x1b[K", out.String())
	})
	t.Run("an unknown total counts up", func(t *testing.T) {
		var out logtest.Buffer
		tick := make(chan time.Time)
		p := newProgress(&out, "writing t.json", 0, clock, tick)
		p.Add(3e6)
		advance(2 * time.Second)
		tick <- time.Time{}
		p.Done()
		assert.Equal(t, "\r\x1b[Kwriting t.json: 3.0 MB, 2.0 s\r\x1b[K", out.String())
	})
	t.Run("a quick step writes nothing, not even the wipe", func(t *testing.T) {
		var out logtest.Buffer
		p := newProgress(&out, "reading", 10, clock, make(chan time.Time))
		p.Add(10)
		p.Done()
		assert.Empty(t, out.String())
	})
	t.Run("not a terminal: nil, whose methods do nothing", func(t *testing.T) {
		var out bytes.Buffer
		p := StartProgress(&out, "reading", 10)
		assert.Nil(t, p)
		r := strings.NewReader("abc")
		assert.Same(t, io.Reader(r), p.Reader(r))
		assert.Equal(t, io.Writer(&out), p.Writer(&out))
		p.Add(1)
		p.Done()
		f, err := os.CreateTemp(t.TempDir(), "stderr")
		require.NoError(t, err)
		defer f.Close()
		assert.Nil(t, StartProgress(f, "reading", 10), "a file is no terminal")
	})
}
