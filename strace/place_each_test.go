package strace

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
)

// TestEachSpanPlaced: a span given to EachSpan is placed on the wall
// clock as the Parser places one it keeps: by its file's anchor, and,
// for a span before any anchor of its process in its file (here the
// first two of each file), by NearestAnchor once
// every file is read; a device span never. Serially and in blocks read
// in parallel (whose spans the blocks' own anchors place). Before
// NearestAnchor, EachSpan's spans were placed only under a window, in
// blocks only: strace-timing's streamed trace could not write wall_time.
func TestEachSpanPlaced(t *testing.T) {
	dir := t.TempDir()
	var paths []string
	for f := range 3 {
		var b strings.Builder
		mono := int64(f+1) * 1e12
		for i := range 3000 {
			if i == 2 {
				b.WriteString(logtest.AnchorRecord(7, mono, 1.7e18+mono+int64(f)*1e6) + "\n") // a step between files
			}
			pid, attrs := 7, ""
			switch i % 50 {
			case 7:
				pid = 8 // no anchor of its own in any file
			case 9:
				attrs = "clk=dev"
			}
			b.WriteString(logtest.HostSpanRecord(pid, 1, fmt.Sprintf("op%d", i%5), attrs, 0, mono+int64(i)*1000, 10) + "\n")
		}
		path := filepath.Join(dir, fmt.Sprintf("host.7.%08d.log", f+1))
		require.NoError(t, os.WriteFile(path, []byte(b.String()), 0o644))
		paths = append(paths, path)
	}
	type placed struct {
		name   string
		wall   int64
		placed bool
	}
	read := func(t *testing.T, each bool) []placed {
		var out []placed
		p := &Parser{}
		var unplaced []Span
		if each {
			p.EachSpan = func(s *Span) {
				if _, ok := s.WallAt(0); !ok && !s.IsDevice() {
					unplaced = append(unplaced, *s)
				}
				w, ok := s.WallAt(s.TS)
				out = append(out, placed{s.Name, w, ok})
			}
		}
		for _, path := range paths {
			require.NoError(t, ReadFile(p, path, nil, nil))
		}
		if !each {
			for _, s := range p.Spans {
				w, ok := s.WallAt(s.TS)
				out = append(out, placed{s.Name, w, ok})
			}
			return out
		}
		at := 0
		for i := range out {
			if !out[i].placed && at < len(unplaced) && out[i].name == unplaced[at].Name {
				s := unplaced[at]
				if a, ok := p.NearestAnchor(s.Run, s.TS); ok {
					s.Place(a)
					out[i].wall, out[i].placed = s.WallAt(s.TS)
				}
				at++
			}
		}
		return out
	}
	for _, tc := range []struct {
		name   string
		blocks bool
	}{{"serial", false}, {"parallel blocks", true}} {
		t.Run(tc.name, func(t *testing.T) {
			if tc.blocks {
				if runtime.GOMAXPROCS(0) < 2 {
					t.Skip("one CPU: the blocks are read serially")
				}
				smallBlocks(t)
				blockSize = 4 << 10
			} else {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
			}
			kept := read(t, false)
			require.Len(t, kept, 9000)
			unplacedKept := 0
			for _, k := range kept {
				if !k.placed {
					unplacedKept++
				}
			}
			require.Equal(t, 3*60+3*60, unplacedKept, "the device spans and pid 8's (no anchor of its own)")
			assert.Equal(t, kept, read(t, true))
		})
	}
}
