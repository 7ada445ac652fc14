package simplerotel

import (
	"log/slog"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"simpler.dev/log/envelope"
	"simpler.dev/log/levels"
	"simpler.dev/log/otel/internal/otlptest"
	"simpler.dev/log/strace"
)

// eachLog is a log of n invocations of three nested spans, with an INFO
// record in every span and a WARN (an event) in every third: more spans
// and records than a part holds.
func eachLog(t *testing.T, n int) []strace.HostLog {
	t.Helper()
	var b strings.Builder
	b.WriteString(otlptest.AnchorRecord(41, 1, 1_700_000_000_000_000_000))
	for inv := 1; inv <= n; inv++ {
		base := int64(inv) * 10_000
		for d := range 3 {
			ts := base + int64(d)*10
			b.WriteString(otlptest.SpanRecord(41, 41, uint64(inv), "chip.run.s"+string(rune('a'+d)), ts, 1000-int64(d)*100, "", d))
			level := levels.Info
			if (inv+d)%3 == 0 {
				level = levels.Warn
			}
			r := envelope.Record{Header: envelope.Header{Mono: ts + 5, TID: 41, Level: level}, Message: "step", Attrs: []slog.Attr{slog.Int("inv", inv)}}
			var l envelope.Line
			l.Record(&r)
			b.Write(l.Finish())
		}
	}
	p := &strace.Parser{ReadOptions: strace.ReadOptions{KeepRecords: levels.Info}}
	require.NoError(t, p.Read(strings.NewReader(b.String())))
	return []strace.HostLog{{Label: "h", Parser: p}}
}

// TestConvertEach: streaming (Options.Each) hands over, in parts of at
// most partSize of one signal each, exactly the spans and records Convert
// returns, in the same order, and returns the same skipped; Each
// returning false stops it.
func TestConvertEach(t *testing.T) {
	hosts := eachLog(t, 700) // 2800 spans with the roots, 2100 records
	whole := Convert(hosts, nil)
	require.Len(t, whole.Spans, 2800)
	require.Len(t, whole.Records, 2100)
	events := 0
	for _, s := range whole.Spans {
		events += len(s.Events())
	}
	require.Equal(t, 700, events, "the WARN records are their spans' events")

	type key struct {
		name, id string
		events   int
	}
	spanKeys := func(ss []sdktrace.ReadOnlySpan) (keys []key) {
		for _, s := range ss {
			keys = append(keys, key{s.Name(), s.SpanContext().SpanID().String() + s.Parent().SpanID().String(), len(s.Events())})
		}
		return keys
	}
	recordKeys := func(rs []sdklog.Record) (keys []key) {
		for _, r := range rs {
			keys = append(keys, key{r.Body().AsString(), r.SpanID().String() + r.Timestamp().String(), r.AttributesLen()})
		}
		return keys
	}
	for _, tt := range []struct {
		name        string
		convert     func(opts *Options) Converted
		spans, recs bool
	}{
		{"Convert", func(o *Options) Converted { return Convert(hosts, o) }, true, true},
		{"NoRecords", func(o *Options) Converted { o.NoRecords = true; return Convert(hosts, o) }, true, false},
		{"NoSpans", func(o *Options) Converted { o.NoSpans = true; return Convert(hosts, o) }, false, true},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var spans []key
			var records []key
			parts := 0
			got := tt.convert(&Options{Each: func(part Converted) bool {
				parts++
				assert.True(t, (len(part.Spans) == 0) != (len(part.Records) == 0), "one signal a part, never empty")
				assert.LessOrEqual(t, len(part.Spans), partSize)
				assert.LessOrEqual(t, len(part.Records), partSize)
				assert.Empty(t, part.SkippedSpans)
				assert.Empty(t, part.SkippedRecords)
				spans = append(spans, spanKeys(part.Spans)...)
				records = append(records, recordKeys(part.Records)...)
				return true
			}})
			assert.Empty(t, got.Spans, "streamed, not returned")
			assert.Empty(t, got.Records, "streamed, not returned")
			if tt.spans {
				assert.Equal(t, spanKeys(whole.Spans), spans)
				assert.Equal(t, whole.SkippedSpans, got.SkippedSpans)
			} else {
				assert.Empty(t, spans)
			}
			if tt.recs {
				assert.Equal(t, recordKeys(whole.Records), records)
				assert.Equal(t, whole.SkippedRecords, got.SkippedRecords)
			} else {
				assert.Empty(t, records)
			}
			assert.Greater(t, parts, 2)
		})
	}
	t.Run("stopped", func(t *testing.T) {
		parts := 0
		Convert(hosts, &Options{Each: func(Converted) bool { parts++; return false }})
		assert.Equal(t, 1, parts, "nothing handed over after Each said stop")
	})
}
