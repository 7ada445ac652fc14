package otlptest

import (
	"context"
	"net"
	"testing"

	"github.com/stretchr/testify/require"
	"go.opentelemetry.io/collector/component/componenttest"
	"go.opentelemetry.io/collector/consumer/consumertest"
	"go.opentelemetry.io/collector/pdata/pcommon"
	"go.opentelemetry.io/collector/pdata/ptrace"
	"go.opentelemetry.io/collector/receiver"
	"go.opentelemetry.io/collector/receiver/otlpreceiver"
	"go.opentelemetry.io/collector/receiver/receivertest"
)

// FreeAddr returns a loopback address nothing listens on yet.
func FreeAddr(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	require.NoError(t, l.Close())
	return addr
}

// Receiver starts the Collector's OTLP receiver on loopback ports, with a
// sink that keeps the traces that arrive (logs are accepted and kept
// apart: see Both), and stops it when the test ends.
func Receiver(t testing.TB) (httpURL, grpcURL string, sink *consumertest.TracesSink) {
	t.Helper()
	httpURL, grpcURL, sink, _ = Both(t)
	return httpURL, grpcURL, sink
}

// Metrics starts the Collector's OTLP receiver for metrics on loopback
// ports, with a sink, and stops it when the test ends.
func Metrics(t testing.TB) (httpURL, grpcURL string, metrics *consumertest.MetricsSink) {
	t.Helper()
	f, cfg, httpURL, grpcURL := receiverConfig(t)
	metrics = new(consumertest.MetricsSink)
	mr, err := f.CreateMetrics(context.Background(), receivertest.NewNopSettings(f.Type()), cfg, metrics)
	require.NoError(t, err)
	require.NoError(t, mr.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { _ = mr.Shutdown(context.Background()) })
	return httpURL, grpcURL, metrics
}

// receiverConfig is the Collector's OTLP receiver factory and a config of
// it on two free loopback ports, and their URLs.
func receiverConfig(t testing.TB) (f receiver.Factory, cfg *otlpreceiver.Config, httpURL, grpcURL string) {
	f = otlpreceiver.NewFactory()
	cfg = f.CreateDefaultConfig().(*otlpreceiver.Config)
	httpAddr, grpcAddr := FreeAddr(t), FreeAddr(t)
	cfg.Protocols.HTTP.GetOrInsertDefault().ServerConfig.NetAddr.Endpoint = httpAddr
	cfg.Protocols.GRPC.GetOrInsertDefault().NetAddr.Endpoint = grpcAddr
	return f, cfg, "http://" + httpAddr, "grpc://" + grpcAddr
}

// Both starts the Collector's OTLP receiver for traces and logs on the same
// loopback ports, with a sink for each, and stops it when the test ends.
func Both(t testing.TB) (httpURL, grpcURL string, traces *consumertest.TracesSink, logs *consumertest.LogsSink) {
	t.Helper()
	f, cfg, httpURL, grpcURL := receiverConfig(t)
	traces, logs = new(consumertest.TracesSink), new(consumertest.LogsSink)
	set := receivertest.NewNopSettings(f.Type())
	tr, err := f.CreateTraces(context.Background(), set, cfg, traces)
	require.NoError(t, err)
	lr, err := f.CreateLogs(context.Background(), set, cfg, logs) // the same receiver, sharing its ports
	require.NoError(t, err)
	require.NoError(t, tr.Start(context.Background(), componenttest.NewNopHost()))
	require.NoError(t, lr.Start(context.Background(), componenttest.NewNopHost()))
	t.Cleanup(func() { _ = tr.Shutdown(context.Background()); _ = lr.Shutdown(context.Background()) })
	return httpURL, grpcURL, traces, logs
}

// A Span is one received span, flattened for assertions.
type Span struct {
	Name          string
	Start, End    int64 // Unix ns
	TraceID       pcommon.TraceID
	ID, Parent    pcommon.SpanID
	Attrs         map[string]any
	Host, Service string
	PID           int64
	Instance      string // service.instance.id
	Events        []Event
	Error         bool
	StatusMessage string
	DroppedEvents uint32
}

// An Event is one span event.
type Event struct {
	Name  string
	Time  int64
	Attrs map[string]any
}

// Spans returns every span the sink holds, in arrival order.
func Spans(sink *consumertest.TracesSink) []Span {
	var out []Span
	for _, td := range sink.AllTraces() {
		for i := 0; i < td.ResourceSpans().Len(); i++ {
			rs := td.ResourceSpans().At(i)
			res := rs.Resource().Attributes()
			host, _ := res.Get("host.name")
			svc, _ := res.Get("service.name")
			pid, _ := res.Get("process.pid")
			inst, _ := res.Get("service.instance.id")
			for j := 0; j < rs.ScopeSpans().Len(); j++ {
				ss := rs.ScopeSpans().At(j).Spans()
				for k := 0; k < ss.Len(); k++ {
					s := ss.At(k)
					got := Span{
						Name: s.Name(), Start: int64(s.StartTimestamp()), End: int64(s.EndTimestamp()),
						TraceID: s.TraceID(), ID: s.SpanID(), Parent: s.ParentSpanID(),
						Attrs: s.Attributes().AsRaw(), Host: host.Str(), Service: svc.Str(), PID: pid.Int(), Instance: inst.Str(),
						Error: s.Status().Code() == ptrace.StatusCodeError, StatusMessage: s.Status().Message(),
						DroppedEvents: s.DroppedEventsCount(),
					}
					for e := 0; e < s.Events().Len(); e++ {
						ev := s.Events().At(e)
						got.Events = append(got.Events, Event{Name: ev.Name(), Time: int64(ev.Timestamp()), Attrs: ev.Attributes().AsRaw()})
					}
					out = append(out, got)
				}
			}
		}
	}
	return out
}

// LogsReceiver is Both for a test that reads the logs.
func LogsReceiver(t testing.TB) (httpURL, grpcURL string, sink *consumertest.LogsSink) {
	t.Helper()
	httpURL, grpcURL, _, sink = Both(t)
	return httpURL, grpcURL, sink
}

// A Log is one received log record, flattened for assertions.
type Log struct {
	Body         string
	Severity     int32
	SeverityText string
	Time         int64 // Unix ns
	TraceID      pcommon.TraceID
	SpanID       pcommon.SpanID
	Attrs        map[string]any
	Host         string
	Service      string
	PID          int64
	Instance     string // service.instance.id
}

// Logs returns every log record the sink holds, in arrival order.
func Logs(sink *consumertest.LogsSink) []Log {
	var out []Log
	for _, ld := range sink.AllLogs() {
		for i := 0; i < ld.ResourceLogs().Len(); i++ {
			rl := ld.ResourceLogs().At(i)
			res := rl.Resource().Attributes()
			host, _ := res.Get("host.name")
			svc, _ := res.Get("service.name")
			pid, _ := res.Get("process.pid")
			inst, _ := res.Get("service.instance.id")
			for j := 0; j < rl.ScopeLogs().Len(); j++ {
				lrs := rl.ScopeLogs().At(j).LogRecords()
				for k := 0; k < lrs.Len(); k++ {
					r := lrs.At(k)
					out = append(out, Log{Body: r.Body().AsString(), Severity: int32(r.SeverityNumber()), SeverityText: r.SeverityText(),
						Time: int64(r.Timestamp()), TraceID: r.TraceID(), SpanID: r.SpanID(), Attrs: r.Attributes().AsRaw(),
						Host: host.Str(), Service: svc.Str(), PID: pid.Int(), Instance: inst.Str()})
				}
			}
		}
	}
	return out
}
