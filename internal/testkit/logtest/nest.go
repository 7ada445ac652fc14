package logtest

import "strings"

// Nest sets m[a][b]…[z] = v for the dotted key "a.b.….z", making the
// inner maps as needed: how the slogtest result functions of handlers that
// flatten groups into dotted keys rebuild them.
func Nest(m map[string]any, key string, v any) {
	parts := strings.Split(key, ".")
	for _, p := range parts[:len(parts)-1] {
		sub, ok := m[p].(map[string]any)
		if !ok {
			sub = map[string]any{}
			m[p] = sub
		}
		m = sub
	}
	m[parts[len(parts)-1]] = v
}
