package strace

import (
	"bytes"
	"os"
	"reflect"
	"strings"
	"testing"
	"testing/iotest"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
)

// readSet reads every file of dir as readInput does, with that many
// workers, each file's size known as ReadFile knows it.
func readSet(t *testing.T, p *Parser, dir string, workers int) {
	t.Helper()
	paths, err := Inputs(dir)
	require.NoError(t, err)
	for _, path := range paths {
		b, err := os.ReadFile(path)
		require.NoError(t, err)
		p.size = int64(len(b))
		require.NoError(t, p.readFileWith(path, iotest.HalfReader(bytes.NewReader(b)), workers))
	}
}

// TestKeepUnparsed: a record kept unparsed reads back as the record kept
// parsed, with the same pid and the same place on the wall clock,
// whatever its line's shape, and the same records are kept, serially
// and in blocks.
func TestKeepUnparsed(t *testing.T) {
	const wall = 1_800_000_000_000_000_000
	lines := strings.Join([]string{
		"[mono_ns=150][T0x1a][INFO] main.serve: [server.go:88] slow request path=/v1/items ms=412 ok=true ratio=0.25 d=1.5s",
		"[mono_ns=151][T0x1a][WARN] go: plain",
		`[mono_ns=152][T0x1b][ERROR] main.f: [f.go:1] quoted "k 1"="a b" q="SELECT * FR"~ n=007 v=1.10`,
		"[mono_ns=153][T0x1b][WARNING] old.name: the older name of WARN",
		"[mono_ns=0154][T0xAB][TIMING] lead.zero: mono written with a leading zero, tid in upper case",
		"[mono_ns=155][T0x1][DEBUG] below: not kept at INFO",
		"[mono_ns=156][T0x1][INFO] crlf: a line ending in CR LF k=v\r",
		"[mono_ns=157][T0x1][INFO] marker: a %5B[STRACE] written by a user",
		"[mono_ns=158][T0x1][INFO] main.f: [f.go:3] ",
		"[WARN] sim.f: the simulator's generation, no clock k=v",
		"[ERROR] sim.g: another",
		"not a record at all",
		"[mono_ns=159][T0x1][TRACE] f: off the ladder",
		"[mono_ns=160][T0x1][INFO] f: [not a position] message",
	}, "\n") + "\n"
	for _, tt := range []struct {
		name  string
		files map[string]string
	}{
		{"one anchored file", map[string]string{
			"host.7.log": logtest.AnchorRecord(7, 100, wall+100) + lines + logtest.HostSpanRecord(7, 1, "s", "", 0, 150, 10) + "\n",
		}},
		{"records before the anchor, in a rotated set", map[string]string{
			"host.7.00000001.log": lines + logtest.AnchorRecord(7, 200, wall+200) + lines,
			"host.7.log":          lines + logtest.AnchorRecord(7, 300, wall+5_000_000_300) + lines,
		}},
		{"a process without an anchor", map[string]string{
			"host.8.log": lines + logtest.HostSpanRecord(8, 1, "s", "", 0, 150, 10) + "\n",
		}},
		{"the pid from the spans, or none", map[string]string{
			"host.x.log": logtest.AnchorRecord(9, 100, wall) + logtest.HostSpanRecord(9, 1, "s", "", 0, 150, 10) + "\n" + lines,
			"host.y.log": lines + logtest.HostSpanRecord(9, 1, "s", "", 0, 150, 10) + "\n" + logtest.HostSpanRecord(10, 1, "s", "", 0, 150, 10) + "\n",
		}},
		{"many blocks", map[string]string{ // about 28 blocks of smallBlocks' size
			"host.7.log": logtest.AnchorRecord(7, 100, wall+100) + strings.Repeat(lines+logtest.HostSpanRecord(7, 1, "s", "", 0, 150, 10)+"\n", 1500),
		}},
	} {
		for _, workers := range []int{1, 2} {
			t.Run(tt.name+"/"+itoa(int64(workers)), func(t *testing.T) {
				smallBlocks(t)
				dir := t.TempDir()
				writeSet(t, dir, tt.files)
				parsed := &Parser{ReadOptions: ReadOptions{KeepRecords: levels.Info}}
				readSet(t, parsed, dir, workers)
				unparsed := &Parser{ReadOptions: ReadOptions{KeepRecords: levels.Info, KeepUnparsed: true}}
				readSet(t, unparsed, dir, workers)
				require.NotEmpty(t, parsed.Records)
				assert.Empty(t, parsed.RecordLines, "kept parsed without KeepUnparsed")
				assert.Empty(t, unparsed.Records, "kept unparsed with it")
				require.Len(t, unparsed.RecordLines, len(parsed.Records))
				for i := range unparsed.RecordLines {
					l, want := &unparsed.RecordLines[i], parsed.Records[i]
					// Compared with == first: testify's Equal on every one of
					// 60 000 records took most of the package's time under -race.
					if h, wh := [4]any{l.Mono, l.TID, l.Level, l.PID}, [4]any{want.Mono, want.TID, want.Level, want.PID}; h != wh {
						assert.Equal(t, wh, h, "record %d's header", i)
					}
					got := l.Record()
					if !reflect.DeepEqual(want, got) {
						require.Equal(t, want, got, "record %d", i) // shows the difference
					}
					w1, ok1 := want.WallAt(want.Mono)
					w2, ok2 := l.WallAt(l.Mono)
					if w1 != w2 || ok1 != ok2 {
						assert.Equal(t, [2]any{w1, ok1}, [2]any{w2, ok2}, "record %d placed alike", i)
					}
				}
				assert.True(t, reflect.DeepEqual(parsed.Spans, unparsed.Spans), "the same spans")
				if workers == 1 {
					return
				}
				serial := &Parser{ReadOptions: ReadOptions{KeepRecords: levels.Info, KeepUnparsed: true}}
				readSet(t, serial, dir, 1)
				serial.intern, unparsed.intern = interner{}, interner{}
				serial.attrs, unparsed.attrs = arena{}, arena{}
				assert.True(t, reflect.DeepEqual(serial.Spans, unparsed.Spans), "the same spans in blocks as serially")
				assert.True(t, reflect.DeepEqual(serial.RecordLines, unparsed.RecordLines), "the same record lines in blocks as serially")
			})
		}
	}
}

// TestReadSized: a file of known size read in blocks holds what a serial
// read does, its lists sized for the whole file within a few per cent
// rather than grown by append's steps.
func TestReadSized(t *testing.T) {
	var b strings.Builder
	b.WriteString(logtest.AnchorRecord(7, 1, 1e18))
	for i := range 60000 {
		b.WriteString(logtest.HostSpanRecord(7, 1, "s", "k=v", 0, int64(i), 10) + "\n")
		if i%2 == 0 {
			b.WriteString("[mono_ns=" + itoa(int64(i)) + "][T0x1][INFO] main.f: [f.go:1] step i=" + itoa(int64(i)) + "\n")
		}
	}
	in := []byte(b.String())
	for _, tt := range []struct {
		name     string
		unparsed bool
	}{{"parsed", false}, {"unparsed", true}} {
		t.Run(tt.name, func(t *testing.T) {
			serial := &Parser{ReadOptions: ReadOptions{KeepRecords: levels.Info, KeepUnparsed: tt.unparsed}}
			require.NoError(t, serial.readFileWith("", bytes.NewReader(in), 1))
			par := &Parser{ReadOptions: ReadOptions{KeepRecords: levels.Info, KeepUnparsed: tt.unparsed}, size: int64(len(in))}
			require.NoError(t, par.readFileWith("", iotest.HalfReader(bytes.NewReader(in)), 2))
			serial.intern, par.intern = interner{}, interner{}
			serial.attrs, par.attrs = arena{}, arena{}
			assert.True(t, reflect.DeepEqual(serial, par), "results differ: %d/%d spans, %d/%d records, %d/%d lines",
				len(serial.Spans), len(par.Spans), len(serial.Records), len(par.Records), len(serial.RecordLines), len(par.RecordLines))
			require.Len(t, par.Spans, 60000)
			assert.LessOrEqual(t, cap(par.Spans), len(par.Spans)*11/10, "spans sized for the file")
			kept := max(len(par.Records), len(par.RecordLines))
			require.Equal(t, 30000, kept)
			assert.LessOrEqual(t, max(cap(par.Records), cap(par.RecordLines)), kept*11/10, "records sized for the file")
		})
	}
}
