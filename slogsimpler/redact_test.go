package slogsimpler_test

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"simpler.dev/log/devicebridge"
	"simpler.dev/log/internal/testkit/logtest"
	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// redactSecret is a ReplaceAttr that hides the password attribute and
// scrubs the secret from any other text, the message included.
func redactSecret(_ []string, a slog.Attr) slog.Attr {
	switch {
	case a.Key == "password":
		return slog.String("password", "REDACTED")
	case a.Value.Kind() == slog.KindString:
		return slog.String(a.Key, strings.ReplaceAll(a.Value.String(), "hunter2", "REDACTED"))
	}
	return a
}

// TestRedactionEverySource: with Options.ReplaceAttr redacting a
// secret, no source — a slog call, a span, an op line, State.Emit, a
// simulated device, a forwarded simulator line — gets it to the file, the
// console or any other handler of the fan-out, and every handler receives
// each record with its real source: a PC, or the producer's function in
// the record's "simpler" group. (The C module's record is tested the same
// way in package hostabi.)
func TestRedactionEverySource(t *testing.T) {
	defer slog.SetDefault(slog.Default())
	dir := t.TempDir()
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Debug})
	require.NoError(t, err)
	var console bytes.Buffer
	rec := &logtest.Keeper{}
	lg, err := slogsimpler.Setup(&slogsimpler.Options{
		Dir: dir, State: st, Level: levels.Trace, Console: &console, ConsoleLevel: levels.Debug,
		Handlers: []slog.Handler{rec}, ReplaceAttr: redactSecret,
	})
	require.NoError(t, err)

	sources := []struct {
		name, fn string // fn: the function the file names, "" for the caller's
		log      func()
	}{
		{"slog", "", func() { slog.Warn("plain", "password", "hunter2") }},
		{"span", "emit_host_span", func() {
			_, sp := spanattr.Start(context.Background(), "login", slog.String("password", "hunter2"))
			sp.End()
		}},
		{"op", "", func() {
			_, op := spanattr.StartOp(context.Background(), "auth", &spanattr.OpOptions{Detail: "password=hunter2"})
			op.End()
		}},
		{"Emit", "device_fn", func() {
			st.Emit(levels.Warn, slogsimpler.Source{Function: "device_fn", File: "dev.c", Line: 3}, 0, 0, "emitted", slog.String("password", "hunter2"))
		}},
		{"Sim", "sim_fn", func() {
			sim, err := devicebridge.NewSim(st)
			require.NoError(t, err)
			sim.Logf(levels.Warn, "sim_fn", "password=%s", "hunter2")
		}},
		{"Forward", "fwd_fn", func() {
			f, err := devicebridge.NewForwarder(st, nil)
			require.NoError(t, err)
			_, err = f.Forward(strings.NewReader("[WARN] fwd_fn: password=hunter2\n"))
			require.NoError(t, err)
		}},
	}
	for _, src := range sources {
		src.log()
	}
	require.NoError(t, lg.Close())

	file, err := os.ReadFile(filepath.Join(dir, filepath.Base(st.Path())))
	require.NoError(t, err)
	for name, out := range map[string]string{"file": string(file), "console": console.String()} {
		assert.NotContains(t, out, "hunter2", "the secret reached the %s:\n%s", name, out)
		assert.Contains(t, out, "REDACTED", "%s", name)
	}
	for _, src := range sources {
		if src.fn != "" {
			assert.Contains(t, string(file), "] "+src.fn+": ", "%s: the file names its producer", src.name)
		}
	}

	var fromSources int
	for _, r := range rec.Records() {
		var b strings.Builder
		b.WriteString(r.Message)
		var fn string
		r.Attrs(func(a slog.Attr) bool {
			b.WriteString(" " + a.String())
			if a.Key == "simpler" {
				for _, m := range a.Value.Resolve().Group() {
					if m.Key == "func" {
						fn = m.Value.String()
					}
				}
			}
			return true
		})
		assert.NotContains(t, b.String(), "hunter2", "the recorder got the secret: %s", b.String())
		if strings.Contains(b.String(), "REDACTED") {
			fromSources++
			assert.True(t, r.PC != 0 || fn != "", "no source for %q", b.String())
		}
	}
	assert.GreaterOrEqual(t, fromSources, len(sources), "every source reached the recorder")
}
