package straceview

import (
	"bytes"
	"encoding/json"
	"math"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// FuzzWriteJSON: what WriteJSON writes parses to exactly what
// encoding/json writes for the same document, whatever the strings hold.
func FuzzWriteJSON(f *testing.F) {
	for _, s := range []string{"plain", "q\"uo\\te", "ctl\x00\x01\n\t", "bad \xff\xfe", "sep\u2028\u2029", "<html>&", "日本"} {
		f.Add(s, int64(42), 1.5)
	}
	f.Add("", int64(-1), math.MaxFloat64)
	f.Fuzz(func(t *testing.T, s string, n int64, x float64) {
		if math.IsNaN(x) || math.IsInf(x, 0) {
			x = 0
		}
		unaligned := []map[string]any{{"name": s, "attrs": map[string]any{"raw": s, s: n}}}
		doc := Document{
			DisplayTimeUnit: "ms",
			TraceEvents: []Event{
				{Name: s, Ph: "X", TS: &x, Dur: &x, PID: n, TID: -n, Args: map[string]any{"attrs": s, "inv": uint64(n), "depth": int(n % 100), s: x, "b": true}},
				{Name: "flow", Ph: "s", Cat: s, ID: int(n % 1000), PID: 1, TID: 2, Args: map[string]any{"dispatch_key": s}},
			},
			ClockAnchors: []AnchorJSON{{PID: n, MonoNS: s, WallNS: "1"}},
			Unaligned:    &unaligned,
		}
		var ours bytes.Buffer
		require.NoError(t, WriteJSON(&ours, doc))
		want, err := json.Marshal(doc)
		require.NoError(t, err)
		var a, b any
		require.NoError(t, json.Unmarshal(ours.Bytes(), &a), "%s", ours.Bytes())
		require.NoError(t, json.Unmarshal(want, &b))
		assert.Equal(t, b, a)
	})
}
