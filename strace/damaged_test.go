package strace

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
)

// damagedDir is a directory with a whole host.41.log and a rotated
// host.77.00000001.log.gz of 2 000 spans damaged by harm: the volume
// after a crash mid-write, or a bad disk.
func damagedDir(t *testing.T, harm func([]byte) []byte) string {
	t.Helper()
	dir := t.TempDir()
	whole := logtest.AnchorRecord(41, 100, 1_700_000_000_000_000_000) + logtest.SpanRecord(41, 1, 1, "whole.run", 200, 10, "", 0)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host.41.log"), []byte(whole), 0o600))
	var plain strings.Builder
	plain.WriteString(logtest.AnchorRecord(77, 100, 1_700_000_000_000_000_000))
	for i := range 2000 {
		plain.WriteString(logtest.SpanRecord(77, 2, uint64(i+1), "rotated.run", int64(200+i*100), 10, "k=v", 0))
	}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	_, err := zw.Write([]byte(plain.String()))
	require.NoError(t, err)
	require.NoError(t, zw.Close())
	require.NoError(t, os.WriteFile(filepath.Join(dir, "host.77.00000001.log.gz"), harm(gz.Bytes()), 0o600))
	return dir
}

// TestDamagedArchive: one damaged archive hides nothing else. A truncated
// or corrupt .gz is read up to the damage, the error says what was lost
// (ErrDamaged), and the other files are read whole. On 95586fe the
// reading stopped at the damage, the whole log unread.
func TestDamagedArchive(t *testing.T) {
	for _, tt := range []struct {
		name string
		harm func([]byte) []byte
		lost string
	}{
		{"truncated", func(b []byte) []byte { return b[:len(b)*6/10] }, "its end is lost"},
		{"corrupt in the middle", func(b []byte) []byte {
			b = bytes.Clone(b)
			for i := len(b) / 2; i < len(b)/2+64; i++ {
				b[i] ^= 0x5a
			}
			return b
		}, "damaged"},
		{"empty", func([]byte) []byte { return nil }, "its end is lost"},
		{"cut within its header", func(b []byte) []byte { return b[:4] }, "the last 4 of its 4 bytes are lost"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			h, err := ReadHost(nil, damagedDir(t, tt.harm), nil)
			require.ErrorIs(t, err, ErrDamaged)
			assert.Contains(t, err.Error(), "host.77.00000001.log.gz is damaged")
			assert.Contains(t, err.Error(), tt.lost)
			require.NotNil(t, h.Parser)
			var whole, rotated int
			for _, s := range h.Parser.Spans {
				switch s.Name {
				case "whole.run":
					whole++
				case "rotated.run":
					rotated++
				}
			}
			assert.Equal(t, 1, whole, "the whole log is read")
			assert.Less(t, rotated, 2000, "the damaged file in part")
			if tt.name == "truncated" {
				assert.Positive(t, rotated, "up to its damage")
			}
		})
	}
}

// FuzzRecordLineTraceIDs: the ids a record names its span by are read
// off the end of its line, whatever the line holds: never a panic, and
// ids only from a well-formed tail, which they give back.
func FuzzRecordLineTraceIDs(f *testing.F) {
	f.Add("[mono_ns=1][T0x1][INFO] f: m trace_id=4bf92f3577b34da6a3ce929d0e0e4736 span_id=00f067aa0ba902b7")
	f.Add("x trace_id=00000000000000000000000000000000 span_id=0000000000000000")
	f.Add(" trace_id=4BF92F3577B34DA6A3CE929D0E0E4736 span_id=00f067aa0ba902b7\r")
	f.Add("")
	f.Fuzz(func(t *testing.T, text string) {
		l := RecordLine{text: text}
		tr, sp, ok := l.TraceIDs()
		if !ok {
			return
		}
		tail := fmt.Sprintf(" trace_id=%x span_id=%x", tr, sp)
		require.True(t, strings.HasSuffix(strings.TrimRight(text, "\r"), tail), "%q read as %s", text, tail)
		require.NotEqual(t, [16]byte{}, tr)
		require.NotEqual(t, [8]byte{}, sp)
	})
}
