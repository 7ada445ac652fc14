package logname

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
)

func TestParse(t *testing.T) {
	for _, tt := range []struct {
		name string
		pid  string
		seq  int
		ok   bool
	}{
		{"host.7.log", "7", 0, true},
		{"host.7.00000001.log", "7", 1, true},
		{"host.12.00000042.log", "12", 42, true},
		{"host.log", "", 0, false},
		{"host..log", "", 0, false},
		{"host.x.log", "", 0, false},
		{"host.1.2.log", "", 0, false},
		{"host.12.0000001.log", "", 0, false},
		{"host.12.000000001.log", "", 0, false},
		{"host.12.00000000.log", "", 0, false},
		{"host.12.log.bak", "", 0, false},
		{"other.12.log", "", 0, false},
		{"host.12.00000042.log.gz", "12", 42, true},
		{"host.12.log.gz", "", 0, false},
		{"host.12.00000042.gz", "", 0, false},
		{"host.12.00000042.log.gz.gz", "", 0, false},
		{"host.12.00000042.log.gz.tmp", "", 0, false},
		{"host.1-6f1c2d4e.log", "1-6f1c2d4e", 0, true},
		{"host.1-6f1c2d4e.00000003.log", "1-6f1c2d4e", 3, true},
		{"host.1-6f1c2d4e0a1b4c2d8e3f001122334455.00000003.log.gz", "1-6f1c2d4e0a1b4c2d8e3f001122334455", 3, true},
		{"host.1-6f1c2d4.log", "", 0, false},
		{"host.1-6F1C2D4E.log", "", 0, false},
		{"host.1-6f1c2d4e0a1b4c2d8e3f0011223344556.log", "", 0, false},
		{"host.-6f1c2d4e.log", "", 0, false},
		{"host.1-6f1c2d4e.log.gz", "", 0, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			pid, seq, ok := Parse(tt.name)
			assert.Equal(t, tt.ok, ok)
			assert.Equal(t, tt.pid, pid)
			assert.Equal(t, tt.seq, seq)
		})
	}
}

func FuzzParse(f *testing.F) {
	f.Add("host.7.00000001.log")
	f.Add("host.7.log")
	f.Add("host.7.00000001.log.gz")
	f.Add("host.1-6f1c2d4e.00000001.log")
	f.Fuzz(func(t *testing.T, name string) {
		pid, seq, ok := Parse(name)
		if !ok {
			return
		}
		want := Current(pid)
		assert.Equal(t, strings.Split(pid, "-")[0], PID(pid))
		if seq > 0 {
			want = Rotated("host."+pid+".", seq)
			if strings.HasSuffix(name, Gz) {
				want += Gz
			}
		}
		assert.Equal(t, name, want, "a name read is the name written")
	})
}
