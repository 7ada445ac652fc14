package simplerotel

import (
	"context"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetricgrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlpmetric/otlpmetrichttp"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// NewMetricExporter returns the OTLP metric exporter an endpoint URL asks
// for, as NewSpanExporter does for spans: a URL without a path gets
// /v1/metrics.
func NewMetricExporter(ctx context.Context, raw string) (sdkmetric.Exporter, error) {
	e, err := parseEndpoint(raw, "/v1/metrics")
	switch {
	case err != nil:
		return nil, err
	case e.http:
		return otlpmetrichttp.New(ctx, otlpmetrichttp.WithEndpointURL(e.url), otlpmetrichttp.WithRetry(otlpmetrichttp.RetryConfig{Enabled: false}))
	}
	opts := []otlpmetricgrpc.Option{otlpmetricgrpc.WithEndpoint(e.host), otlpmetricgrpc.WithRetry(otlpmetricgrpc.RetryConfig{Enabled: false})}
	if e.insecure {
		opts = append(opts, otlpmetricgrpc.WithInsecure())
	}
	return otlpmetricgrpc.New(ctx, opts...)
}

// The logger's health as OpenTelemetry metrics (LiveOptions.Metrics): the
// state's counts and the live export's own, read when the reader collects
// (every MetricInterval, and at Shutdown), so an SRE alerts on dropped or
// waited records as on anything else. Every name is under simpler.log.:
//
//	simpler.log.records.written       counter  {record}  written to the file
//	simpler.log.records.dropped       counter  {record}  lost, by reason (queue_full, claim_exhausted, output_failed, not_admitted)
//	simpler.log.records.sampled       counter  {record}  sampled out (slogsimpler.Options.Sampling)
//	simpler.log.records.waited        counter  {record}  that waited for room at a full queue
//	simpler.log.wait.duration         counter  s         the time they waited, in all
//	simpler.log.records.pending       gauge    {record}  in the queue, not yet written
//	simpler.log.export.spans          counter  {span}    exported live, by outcome (exported, dropped)
//	simpler.log.export.log_records    counter  {record}  sent as log records, by outcome
const metricPrefix = "simpler.log."

// startMetrics makes l's meter provider on exp and registers the
// instruments, read in one callback.
func (l *Live) startMetrics(exp sdkmetric.Exporter) error {
	interval := l.o.MetricInterval
	if interval <= 0 {
		interval = 10 * time.Second
	}
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithResource(l.res),
		sdkmetric.WithReader(sdkmetric.NewPeriodicReader(exp, sdkmetric.WithInterval(interval))))
	m := mp.Meter(scopeName)
	written, err1 := m.Int64ObservableCounter(metricPrefix+"records.written", metric.WithUnit("{record}"), metric.WithDescription("Records written to the log file."))
	dropped, err2 := m.Int64ObservableCounter(metricPrefix+"records.dropped", metric.WithUnit("{record}"), metric.WithDescription("Records lost, by reason."))
	sampled, err3 := m.Int64ObservableCounter(metricPrefix+"records.sampled", metric.WithUnit("{record}"), metric.WithDescription("Records sampled out."))
	waited, err4 := m.Int64ObservableCounter(metricPrefix+"records.waited", metric.WithUnit("{record}"), metric.WithDescription("Records that waited for room at a full queue."))
	waitDur, err5 := m.Float64ObservableCounter(metricPrefix+"wait.duration", metric.WithUnit("s"), metric.WithDescription("Time records waited for room, in all."))
	pending, err6 := m.Int64ObservableGauge(metricPrefix+"records.pending", metric.WithUnit("{record}"), metric.WithDescription("Records in the queue, not yet written."))
	spans, err7 := m.Int64ObservableCounter(metricPrefix+"export.spans", metric.WithUnit("{span}"), metric.WithDescription("Spans exported live, by outcome."))
	recs, err8 := m.Int64ObservableCounter(metricPrefix+"export.log_records", metric.WithUnit("{record}"), metric.WithDescription("Records sent as OpenTelemetry log records, by outcome."))
	for _, err := range []error{err1, err2, err3, err4, err5, err6, err7, err8} {
		if err != nil {
			_ = mp.Shutdown(context.Background())
			return err
		}
	}
	reason := func(r string) metric.ObserveOption { return metric.WithAttributes(attribute.String("reason", r)) }
	outcome := func(o string) metric.ObserveOption { return metric.WithAttributes(attribute.String("outcome", o)) }
	_, err := m.RegisterCallback(func(_ context.Context, o metric.Observer) error {
		c, lc := l.state.Counts(), l.Counts()
		o.ObserveInt64(written, clampInt(c.Written))
		o.ObserveInt64(dropped, clampInt(c.QueueFull), reason("queue_full"))
		o.ObserveInt64(dropped, clampInt(c.ClaimExhausted), reason("claim_exhausted"))
		o.ObserveInt64(dropped, clampInt(c.OutputFailed), reason("output_failed"))
		o.ObserveInt64(dropped, clampInt(c.NotAdmitted), reason("not_admitted"))
		o.ObserveInt64(sampled, clampInt(c.Sampled))
		o.ObserveInt64(waited, clampInt(c.Waited))
		o.ObserveFloat64(waitDur, c.WaitedFor.Seconds())
		o.ObserveInt64(pending, clampInt(c.Pending))
		o.ObserveInt64(spans, clampInt(lc.Exported), outcome("exported"))
		o.ObserveInt64(spans, clampInt(lc.Dropped), outcome("dropped"))
		o.ObserveInt64(recs, clampInt(lc.LogsExported), outcome("exported"))
		o.ObserveInt64(recs, clampInt(lc.LogsDropped), outcome("dropped"))
		return nil
	}, written, dropped, sampled, waited, waitDur, pending, spans, recs)
	if err != nil {
		_ = mp.Shutdown(context.Background())
		return err
	}
	l.meters = mp
	return nil
}

func clampInt(u uint64) int64 {
	if u > 1<<63-1 {
		return 1<<63 - 1
	}
	return int64(u)
}
