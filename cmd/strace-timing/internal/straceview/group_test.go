package straceview

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/strace"
)

func TestParseAttrs(t *testing.T) {
	m := ParseAttrs("rank=0 run_id=-7 note=two%20words flag big=99999999999999999999 e=")
	assert.False(t, m["rank"] != int64(0) || m["run_id"] != int64(-7) || m["note"] != "two words" || m["big"] != "99999999999999999999" || m["e"] != "", "%#v", m)
	_, ok := m["flag"]
	assert.False(t, ok, "token without '=' kept")
}

func TestGrouping(t *testing.T) {
	f, err := os.Open("../../../../strace/testdata/mixed.log")
	require.NoError(t, err)
	defer f.Close()
	var p strace.Parser
	require.NoError(t, p.Read(f))
	invs := Group(p.Spans, InInvocation)
	for _, iv := range invs {
		for _, s := range iv.Spans {
			f := Family(s.Name)
			assert.False(t, f == "node" || f == "external", "%s kept in invocation views", s.Name)
		}
	}
	require.False(t, len(invs) != 2 || invs[0].PID != 100 || invs[1].PID != 200 || len(invs[0].Spans) != 5, "invocations %+v", invs)
	r := invs[0].Root()
	assert.False(t, r == nil || r.Name != "chip.run", "root %+v", r)
	t.Run("by name keeps the earliest span, not the first read", func(t *testing.T) {
		iv := &Invocation{Spans: []*strace.Span{{Name: "a", TS: 20}, {Name: "a", TS: 10}}}
		a := byName(iv)["a"]
		require.NotNil(t, a)
		assert.Equal(t, int64(10), a.TS)
	})
}

// TestReferenceFamilies: a case of simpler's
// tests/ut/py/test_strace_timing.py, ported (from strace's
// reference_cases_test.go, with the families).
func TestReferenceFamilies(t *testing.T) {
	for _, tt := range []struct{ name, family, producer string }{
		{"chip.run", "chip", ""}, {"core.exec", "core", ""},
		{"node.dispatch", "node", ""}, {"network1.submit", "node", ""}, {"network2.x", "node", ""}, {"network3.x", "node", ""},
		{"ext.pypto.decode_layer", "external", "pypto"}, {"ext.foo", "external", ""}, {"ext..foo", "external", ""}, {"ext.pypto.", "external", ""},
		{"host.foo", "unknown", ""}, {"chipper.x", "unknown", ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.family, Family(tt.name))
			assert.Equal(t, tt.producer, strace.ExternalProducer(tt.name))
		})
	}
	t.Run("ext and node spans stay out of the invocation views", func(t *testing.T) {
		assert.False(t, InInvocation(&strace.Span{Name: "ext.pypto.x"}))
		assert.False(t, InInvocation(&strace.Span{Name: "node.dispatch"}))
		assert.True(t, InInvocation(&strace.Span{Name: "chip.prewarm.build"}), "an unfamiliar chip name stays")
		assert.True(t, InInvocation(&strace.Span{Name: "host.foo"}), "an unknown family stays")
	})
}

// TestAnchorSpread: the anchors of a rotated set, one per file, agree
// and say nothing; a stepped wall clock is measured (the cases of
// strace's TestLogSet).
func TestAnchorSpread(t *testing.T) {
	const wall = 1_800_000_000_000_000_000
	span := func(name string, ts int64) string { return logtest.HostSpanRecord(7, 1, name, "", 0, ts, 10) + "\n" }
	for _, tt := range []struct {
		name   string
		files  map[string]string
		spread int64 // of pid 7, 0 for none
	}{
		{
			name: "every file anchored, anchors agree",
			files: map[string]string{
				"host.7.00000001.log": logtest.AnchorRecord(7, 100, wall+100) + span("a", 150),
				"host.7.00000002.log": logtest.AnchorRecord(7, 200, wall+200) + span("b", 250),
				"host.7.log":          logtest.AnchorRecord(7, 300, wall+300) + span("c", 350),
			},
		},
		{
			name: "a stepped wall clock",
			files: map[string]string{
				"host.7.00000001.log": logtest.AnchorRecord(7, 100, wall+100) + span("a", 150),
				"host.7.log":          logtest.AnchorRecord(7, 300, wall+5_000_000_300) + span("c", 350) + span("early", 120),
			},
			spread: 5_000_000_000,
		},
		{
			name: "a file whose anchor is missing",
			files: map[string]string{
				"host.7.00000001.log": logtest.AnchorRecord(7, 100, wall+100) + span("a", 150),
				"host.7.00000002.log": span("b", 250) + span("z", 390),
				"host.7.log":          logtest.AnchorRecord(7, 400, wall+2_000_000_400) + span("c", 450),
			},
			spread: 2_000_000_000,
		},
		{
			name:  "under a millisecond is no step",
			files: map[string]string{"host.7.log": logtest.AnchorRecord(7, 100, wall+100) + logtest.AnchorRecord(7, 200, wall+200+999_999)},
		},
	} {
		t.Run(tt.name, func(t *testing.T) {
			dir := t.TempDir()
			for name, body := range tt.files {
				require.NoError(t, os.WriteFile(filepath.Join(dir, name), []byte(body), 0o600))
			}
			h, err := strace.ReadHost(nil, dir, nil)
			require.NoError(t, err)
			got := AnchorSpread(h.Parser)
			if tt.spread == 0 {
				assert.Empty(t, got)
			} else {
				require.Len(t, got, 1)
				for r, d := range got {
					assert.Equal(t, int64(7), r.PID)
					assert.Equal(t, tt.spread, d)
				}
			}
		})
	}
}
