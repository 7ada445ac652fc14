package slogsimpler

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/levels"
)

// TestLevelHandler: the level over HTTP, as an operator turns it: GET
// shows it, PUT sets it from JSON or a form, a level it cannot read is
// 400 and changes nothing, another method 405.
func TestLevelHandler(t *testing.T) {
	st, err := NewState(&StateOptions{Level: levels.Info, Output: io.Discard})
	require.NoError(t, err)
	srv := httptest.NewServer(LevelHandler(st))
	defer srv.Close()
	do := func(method, ctype, body string) (int, map[string]string) {
		t.Helper()
		req, err := http.NewRequest(method, srv.URL, strings.NewReader(body))
		require.NoError(t, err)
		if ctype != "" {
			req.Header.Set("Content-Type", ctype)
		}
		resp, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer resp.Body.Close()
		assert.Equal(t, "application/json", resp.Header.Get("Content-Type"))
		var out map[string]string
		require.NoError(t, json.NewDecoder(resp.Body).Decode(&out))
		return resp.StatusCode, out
	}
	for _, tt := range []struct {
		name, method, ctype, body string
		code                      int
		want                      map[string]string
		level                     string // the state's level after
	}{
		{"GET", http.MethodGet, "", "", 200, map[string]string{"level": "INFO"}, "INFO"},
		{"PUT JSON", http.MethodPut, "application/json", `{"level":"debug"}`, 200, map[string]string{"level": "DEBUG"}, "DEBUG"},
		{"PUT form", http.MethodPut, "application/x-www-form-urlencoded", "level=timing", 200, map[string]string{"level": "TIMING"}, "TIMING"},
		{"PUT JSON as curl -d sends it (a form's Content-Type)", http.MethodPut, "application/x-www-form-urlencoded", `{"level":"warn"}`, 200, map[string]string{"level": "WARN"}, "WARN"},
		{"PUT JSON without a Content-Type", http.MethodPut, "", ` {"level":"info"}`, 200, map[string]string{"level": "INFO"}, "INFO"},
		{"PUT between rungs", http.MethodPut, "application/json", `{"level":"35"}`, 200, map[string]string{"level": "ERROR"}, "ERROR"},
		{"PUT a bad level", http.MethodPut, "application/json", `{"level":"loud"}`, 400, nil, "ERROR"},
		{"PUT no level", http.MethodPut, "application/json", `{}`, 400, nil, "ERROR"},
		{"PUT not JSON", http.MethodPut, "application/json", `level: warn`, 400, nil, "ERROR"},
		{"DELETE", http.MethodDelete, "", "", 405, nil, "ERROR"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			code, out := do(tt.method, tt.ctype, tt.body)
			assert.Equal(t, tt.code, code)
			if tt.want != nil {
				assert.Equal(t, tt.want, out)
			} else {
				assert.NotEmpty(t, out["error"], "the error, as JSON")
			}
			assert.Equal(t, tt.level, levels.Level(st.Level()).String(), "the state's level")
		})
	}
	assert.Contains(t, func() string {
		_, out := do(http.MethodPut, "application/json", `{"level":"loud"}`)
		return out["error"]
	}(), `unknown log level "loud"`)
}
