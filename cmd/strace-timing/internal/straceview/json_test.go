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

// TestJSONFloatsAsPython: numbers are written as Python's json module
// writes a float (its repr), the text simpler's reader puts in the same
// trace, and always read back as the same float.
func TestJSONFloatsAsPython(t *testing.T) {
	for _, tt := range []struct {
		f    float64
		want string
	}{
		{2, "2.0"},
		{0, "0.0"},
		{math.Copysign(0, -1), "-0.0"},
		{1.5, "1.5"},
		{-1234.5, "-1234.5"},
		{123456.789, "123456.789"},
		{0.0001, "0.0001"},
		{0.00001, "1e-05"},
		{1.2345e-7, "1.2345e-07"},
		{9999999999999998, "9999999999999998.0"},
		{1e16, "1e+16"},
		{1.5e22, "1.5e+22"},
		{1796125826017070.768, "1796125826017070.8"},
		{math.NaN(), "null"},
		{math.Inf(1), "null"},
	} {
		t.Run(tt.want, func(t *testing.T) {
			got := string(appendJSONFloat(nil, tt.f))
			assert.Equal(t, tt.want, got)
			if tt.want != "null" {
				var back float64
				require.NoError(t, json.Unmarshal([]byte(got), &back))
				assert.Equal(t, tt.f, back)
			}
		})
	}
}
