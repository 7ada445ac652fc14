package simplerotel

import (
	"context"
	"io"
	"log/slog"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/pdata/pmetric"

	"simpler.dev/log/levels"
	"simpler.dev/log/otel/internal/otlptest"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

// TestLiveMetrics: the logger's health as OpenTelemetry metrics, into the
// Collector's own receiver over OTLP/HTTP and gRPC: at Shutdown the last
// collection carries the state's counts and the live export's, under
// simpler.log., with their units.
func TestLiveMetrics(t *testing.T) {
	httpURL, grpcURL, sink := otlptest.Metrics(t)
	for _, endpoint := range []string{httpURL, grpcURL} {
		t.Run(endpoint[:4], func(t *testing.T) {
			sink.Reset()
			exp, err := NewMetricExporter(context.Background(), endpoint)
			require.NoError(t, err)
			st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Output: io.Discard})
			require.NoError(t, err)
			live, err := NewLive(kept{newInMemory()}, &LiveOptions{State: st, Metrics: exp})
			require.NoError(t, err)
			logger := slog.New(slogsimpler.NewFanout(st, st.Handler(), live.Handler()))
			ctx := spanattr.WithLogger(context.Background(), logger)
			for i := range 25 {
				_, sp := spanattr.Start(ctx, "step")
				logger.Info("record", "i", i)
				sp.End()
			}
			require.NoError(t, st.Flush(t.Context()))
			require.NoError(t, live.Shutdown(context.Background()))
			c, lc := st.Counts(), live.Counts()
			require.GreaterOrEqual(t, c.Written, uint64(50), "the spans and records, and the anchor: %+v", c)

			got := map[string]int64{}
			units := map[string]string{}
			for _, md := range sink.AllMetrics() {
				rms := md.ResourceMetrics()
				for i := 0; i < rms.Len(); i++ {
					sms := rms.At(i).ScopeMetrics()
					for j := 0; j < sms.Len(); j++ {
						ms := sms.At(j).Metrics()
						for k := 0; k < ms.Len(); k++ {
							m := ms.At(k)
							units[m.Name()] = m.Unit()
							var dps pmetric.NumberDataPointSlice
							switch m.Type() {
							case pmetric.MetricTypeSum:
								dps = m.Sum().DataPoints()
							case pmetric.MetricTypeGauge:
								dps = m.Gauge().DataPoints()
							}
							for d := 0; d < dps.Len(); d++ {
								key := m.Name()
								for _, a := range []string{"reason", "outcome"} {
									if v, ok := dps.At(d).Attributes().Get(a); ok {
										key += "/" + v.Str()
									}
								}
								got[key] = dps.At(d).IntValue() // the last collection wins: Shutdown's
							}
						}
					}
				}
			}
			assert.EqualValues(t, c.Written, got["simpler.log.records.written"])
			assert.EqualValues(t, c.QueueFull, got["simpler.log.records.dropped/queue_full"])
			assert.EqualValues(t, c.OutputFailed, got["simpler.log.records.dropped/output_failed"])
			assert.EqualValues(t, c.Sampled, got["simpler.log.records.sampled"])
			assert.EqualValues(t, c.Pending, got["simpler.log.records.pending"])
			assert.EqualValues(t, lc.Exported, got["simpler.log.export.spans/exported"])
			assert.EqualValues(t, 25, got["simpler.log.export.spans/exported"])
			assert.Equal(t, "{record}", units["simpler.log.records.written"])
			assert.Equal(t, "s", units["simpler.log.wait.duration"])
		})
	}
}
