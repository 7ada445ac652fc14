package simplerotel

import (
	"context"
	"fmt"
	"net/url"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// endpoint is an OTLP endpoint URL read: for OTLP/HTTP the whole URL, for
// OTLP/gRPC the host and whether it is plain text.
type endpoint struct {
	http      bool
	url, host string
	insecure  bool
}

// parseEndpoint reads an endpoint URL; an HTTP URL without a path gets
// path, as OTEL_EXPORTER_OTLP_ENDPOINT does.
func parseEndpoint(raw, path string) (endpoint, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return endpoint{}, fmt.Errorf("endpoint %q: want a URL such as http://localhost:4318 or grpc://localhost:4317", raw)
	}
	switch u.Scheme {
	case "http", "https":
		if u.Path == "" || u.Path == "/" {
			u.Path = path
		}
		return endpoint{http: true, url: u.String()}, nil
	case "grpc", "grpcs":
		return endpoint{host: u.Host, insecure: u.Scheme == "grpc"}, nil
	}
	return endpoint{}, fmt.Errorf("endpoint %q: scheme %q is not http, https, grpc or grpcs", raw, u.Scheme)
}

// NewSpanExporter returns the OTLP exporter an endpoint URL asks for:
// http:// or https:// for OTLP/HTTP (a URL without a path gets
// /v1/traces, as OTEL_EXPORTER_OTLP_ENDPOINT does; a URL with a path is
// the traces URL itself), grpc:// (plain text) or grpcs:// (TLS) for
// OTLP/gRPC. Retries are off: a batch that fails is counted by whoever
// exports it, not resent for minutes while newer spans wait.
func NewSpanExporter(ctx context.Context, raw string) (sdktrace.SpanExporter, error) {
	e, err := parseEndpoint(raw, "/v1/traces")
	switch {
	case err != nil:
		return nil, err
	case e.http:
		return otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(e.url), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	}
	opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(e.host), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false})}
	if e.insecure {
		opts = append(opts, otlptracegrpc.WithInsecure())
	}
	return otlptracegrpc.New(ctx, opts...)
}

// NewLogExporter returns the OTLP log exporter an endpoint URL asks for,
// as NewSpanExporter does for spans: a URL without a path gets /v1/logs.
func NewLogExporter(ctx context.Context, raw string) (sdklog.Exporter, error) {
	e, err := parseEndpoint(raw, "/v1/logs")
	switch {
	case err != nil:
		return nil, err
	case e.http:
		return otlploghttp.New(ctx, otlploghttp.WithEndpointURL(e.url), otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}))
	}
	opts := []otlploggrpc.Option{otlploggrpc.WithEndpoint(e.host), otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false})}
	if e.insecure {
		opts = append(opts, otlploggrpc.WithInsecure())
	}
	return otlploggrpc.New(ctx, opts...)
}
