package slogsimpler

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"

	"net/http"
	"net/url"

	"simpler.dev/log/levels"
)

// LevelHandler returns an HTTP handler that shows and sets s's level, to
// mount beside /debug/pprof as zap's AtomicLevel is mounted:
//
//	http.Handle("/debug/log/level", slogsimpler.LevelHandler(slogsimpler.Default()))
//
// GET answers the level the state admits from, as JSON:
// {"level":"INFO"}. PUT sets it, from a JSON body {"level":"DEBUG"} or a
// form level=DEBUG (any name levels.Level reads: "timing", "30",
// "INFO+2"), and answers the level now in force (a level between rungs
// rounds up onto the ladder, as SetLevel says). A level it cannot read is
// answered 400 with {"error":"..."} and changes nothing; any other method
// is answered 405. The level set this way is fixed: a Leveler the state
// followed (a shared slog.LevelVar) is followed no more. The handler
// checks no credentials: mount it where only operators reach it.
func LevelHandler(s *State) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.Method {
		case http.MethodGet, http.MethodHead:
		case http.MethodPut:
			l, err := levelFrom(r)
			if err != nil {
				answer(w, http.StatusBadRequest, map[string]string{"error": err.Error()})
				return
			}
			s.SetLevel(l)
		default:
			w.Header().Set("Allow", "GET, HEAD, PUT")
			answer(w, http.StatusMethodNotAllowed, map[string]string{"error": "method " + r.Method + " not allowed: GET shows the level, PUT sets it"})
			return
		}
		answer(w, http.StatusOK, map[string]string{"level": levels.Level(s.Level()).String()})
	})
}

// maxLevelBody bounds what a PUT may send: a level is a few bytes.
const maxLevelBody = 4 << 10

// levelFrom reads the level a PUT asks for: the query's level=, else a
// JSON body {"level": "..."}, else a form's level=. A body that begins
// with "{" is JSON whatever its Content-Type says: curl -d sends JSON as
// a form, and read as one it asked for no level.
func levelFrom(r *http.Request) (levels.Level, error) {
	var l levels.Level
	if q := r.URL.Query(); q.Has("level") {
		return l, l.UnmarshalText([]byte(q.Get("level")))
	}
	body, err := io.ReadAll(http.MaxBytesReader(nil, r.Body, maxLevelBody))
	if err != nil {
		return l, err
	}
	if t := bytes.TrimSpace(body); len(t) > 0 && t[0] == '{' {
		var v struct {
			Level *levels.Level `json:"level"`
		}
		if err := json.Unmarshal(t, &v); err != nil {
			return l, err
		}
		if v.Level == nil {
			return l, errNoLevel
		}
		return *v.Level, nil
	}
	form, err := url.ParseQuery(string(body))
	if err != nil || !form.Has("level") {
		return l, errNoLevel
	}
	return l, l.UnmarshalText([]byte(form.Get("level")))
}

var errNoLevel = errors.New(`no level: send {"level":"INFO"} as JSON, or level=INFO as a form`)

// answer writes v as JSON with status code.
func answer(w http.ResponseWriter, code int, v map[string]string) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(code)
	b, _ := json.Marshal(v)
	_, _ = w.Write(append(b, '\n'))
}
