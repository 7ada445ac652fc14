package devicebridge

import (
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
)

// FuzzForward: whatever a simulator prints, each input line becomes at
// most one envelope record of at most 512 bytes, on one line.
func FuzzForward(f *testing.F) {
	f.Add("[INFO] f: ready\n[mono_ns=1][T0x1][WARN] g: [a.c:1] x\nplain\n")
	f.Add("[WARNING] f: body [STRACE] v=1\r\n\x00\xff")
	f.Add("[mono_ns=99999999999999999999][T0xzz][INFO] f: x")
	f.Fuzz(func(t *testing.T, in string) {
		st, buf := newState(t, levels.Debug)
		n, err := forward(strings.NewReader(in), st)
		require.NoError(t, err)
		lines := buf.lines()
		require.EqualValues(t, n, len(lines), "%d lines forwarded, %d written", n, len(lines))
		for _, l := range lines {
			require.False(t, len(l)+1 > 512 || !envelopeRE.MatchString(l), "bad record %q", l)
		}
	})
}

// FuzzParseCANNLevel compares with a reading of CANN's rule written
// differently: trim leading white space, then the rest must be an optional
// sign and digits whose value is 0–4.
func FuzzParseCANNLevel(f *testing.F) {
	for _, s := range []string{"1", "+1", " 1", "01", "1 ", "0x1", "5", "", "-0"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got, ok := parseCANNLevel(s)
		rest := strings.TrimLeft(s, " \t\n\v\f\r")
		digits := strings.TrimLeft(rest, "+-")
		wantOK := len(rest)-len(digits) <= 1 && digits != "" && strings.Trim(digits, "0123456789") == ""
		want := cannDefault
		if wantOK {
			v, err := strconv.Atoi(rest)
			if err != nil || v < 0 || v > 4 {
				wantOK = false
			} else {
				want = v
			}
		}
		require.False(t, got != want || ok != wantOK, "parseCANNLevel(%q) = %d, %v; want %d, %v", s, got, ok, want, wantOK)
	})
}

// FuzzAppendCANN: every CANN record is exactly two lines, the second the
// quoted message, whatever the fields hold.
func FuzzAppendCANN(f *testing.F) {
	f.Add("kernel.cpp", "run", `"step done"`, "python3")
	f.Add("a\nb", "f\r", "x\ny\x00", "p\x1b")
	f.Fuzz(func(t *testing.T, file, fn, msg, pname string) {
		line := appendCANN(nil, cannProcess{Module: "AICPU", PID: 1, PName: pname},
			cannRecord{Level: cannWarning, Timing: true, Time: fixedTime, File: file, Line: 1, TID: 2, Func: fn, Msg: msg})
		parts := strings.Split(strings.TrimSuffix(string(line), "\n"), "\n")
		require.False(t, len(parts) != 2 || !strings.HasSuffix(string(line), "\n") || strings.ContainsAny(string(line), "\r\x00"), "not two lines: %q", line)
		require.False(t, !strings.HasPrefix(parts[1], `"`) || !strings.HasSuffix(parts[1], `"`) || !strings.HasSuffix(parts[0], " [TIMING]"), "payload: %q", line)
		require.True(t, strings.HasPrefix(string(line), "[WARNING] AICPU(1,"), "prefix: %q", line)
	})
}
