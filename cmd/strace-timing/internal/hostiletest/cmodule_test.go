//go:build cgo && (linux || darwin || freebsd)

package hostiletest

import (
	"fmt"
	"os"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/envelope"
	"simpler.dev/log/hostabi"
	"simpler.dev/log/internal/testkit/ctest"
	"simpler.dev/log/strace"
)

func TestMain(m *testing.M) {
	code := m.Run()
	ctest.Cleanup()
	os.Exit(code)
}

// TestHostileCModule: corpus strings handed over by a C module through
// simpler's C ABI, as its messages (formatted by the module, with a
// header), as whole records of its own making (with a header in every
// position a record has, and without one), and as machine records of
// other pids: every record in the file is one envelope line of valid,
// escaped UTF-8, and the only machine records are the state's anchor and
// whole records of this process that the module may write.
func TestHostileCModule(t *testing.T) {
	st, buf := newState(t)
	h, err := hostabi.BindPath(st, ctest.Consumer(t))
	require.NoError(t, err)
	mod := ctest.Module{H: h}
	pid := os.Getpid()
	tried := 0
	for _, s := range corpus() {
		if len(s) > 4<<10 {
			s = s[:4<<10]
		}
		recs := []string{
			"[mono_ns=5][T0x7][INFO] fn: [f.c:1] " + s + "\n",
			"[mono_ns=5][T0x7][WARN] " + s + ": [" + s + ":1] " + s + "\n",
			s + "\n",
			fmt.Sprintf("[mono_ns=5][T0x7][ERROR] host_log_drops: [HOSTLOG_DROPS] v=1 pid=%d new=1 total=1 queue_full=1 claim_exhausted=0 output_failed=0 not_admitted=0 %s\n", pid, s),
			fmt.Sprintf("[mono_ns=5][T0x7][TIMING] emit_host_span: [STRACE] v=1 pid=%d tid=1 inv=1 hid=0 depth=0 name=x ts=1 dur=1 %s\n", pid+1, s),
		}
		for _, r := range recs {
			if len(r) <= envelope.MaxRecord {
				mod.Raw(r)
				tried++
			}
		}
		if !strings.ContainsRune(s, 0) {
			mod.Log(20, s) // the module formats it; C strings end at a NUL
			tried++
		}
	}
	require.NoError(t, st.Close())
	own := func(p envelope.Parsed) bool { // the state's anchor, the module's spans and op lines
		marker, mpid, err := envelope.ParseMachine(p)
		return isAnchor(p) || err == nil && marker != envelope.MarkerDrops && (mpid == 0 || mpid == pid)
	}
	recs := checkRecords(t, buf.Bytes(), own)
	assert.Greater(t, len(recs), tried/2, "the records reached the file")
	rd := &strace.Parser{}
	require.NoError(t, rd.Read(strings.NewReader(buf.String())))
	for _, s := range rd.Spans {
		assert.EqualValues(t, pid, s.PID, "a span in another's name")
	}
	assert.Empty(t, rd.Drops, "a drop report from a module")
	assert.Positive(t, hostabi.Altered(st), "the rewritten records are counted")
	t.Logf("%d C records tried, %d altered", tried, hostabi.Altered(st))
}
