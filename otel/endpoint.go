package simplerotel

import (
	"context"
	"fmt"
	"net/url"

	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploggrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlplog/otlploghttp"
	sdklog "go.opentelemetry.io/otel/sdk/log"

	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracegrpc"
	"go.opentelemetry.io/otel/exporters/otlp/otlptrace/otlptracehttp"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
)

// NewSpanExporter returns the OTLP exporter an endpoint URL asks for:
// http:// or https:// for OTLP/HTTP (a URL without a path gets
// /v1/traces, as OTEL_EXPORTER_OTLP_ENDPOINT does; a URL with a path is
// the traces URL itself), grpc:// (plain text) or grpcs:// (TLS) for
// OTLP/gRPC. Retries are off: a batch that fails is counted by whoever
// exports it, not resent for minutes while newer spans wait.
func NewSpanExporter(ctx context.Context, endpoint string) (sdktrace.SpanExporter, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q: want a URL such as http://localhost:4318 or grpc://localhost:4317", endpoint)
	}
	switch u.Scheme {
	case "http", "https":
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/traces"
		}
		return otlptracehttp.New(ctx, otlptracehttp.WithEndpointURL(u.String()), otlptracehttp.WithRetry(otlptracehttp.RetryConfig{Enabled: false}))
	case "grpc", "grpcs":
		opts := []otlptracegrpc.Option{otlptracegrpc.WithEndpoint(u.Host), otlptracegrpc.WithRetry(otlptracegrpc.RetryConfig{Enabled: false})}
		if u.Scheme == "grpc" {
			opts = append(opts, otlptracegrpc.WithInsecure())
		}
		return otlptracegrpc.New(ctx, opts...)
	}
	return nil, fmt.Errorf("endpoint %q: scheme %q is not http, https, grpc or grpcs", endpoint, u.Scheme)
}

// NewLogExporter returns the OTLP log exporter an endpoint URL asks for,
// as NewSpanExporter does for spans: a URL without a path gets /v1/logs.
func NewLogExporter(ctx context.Context, endpoint string) (sdklog.Exporter, error) {
	u, err := url.Parse(endpoint)
	if err != nil || u.Host == "" {
		return nil, fmt.Errorf("endpoint %q: want a URL such as http://localhost:4318 or grpc://localhost:4317", endpoint)
	}
	switch u.Scheme {
	case "http", "https":
		if u.Path == "" || u.Path == "/" {
			u.Path = "/v1/logs"
		}
		return otlploghttp.New(ctx, otlploghttp.WithEndpointURL(u.String()), otlploghttp.WithRetry(otlploghttp.RetryConfig{Enabled: false}))
	case "grpc", "grpcs":
		opts := []otlploggrpc.Option{otlploggrpc.WithEndpoint(u.Host), otlploggrpc.WithRetry(otlploggrpc.RetryConfig{Enabled: false})}
		if u.Scheme == "grpc" {
			opts = append(opts, otlploggrpc.WithInsecure())
		}
		return otlploggrpc.New(ctx, opts...)
	}
	return nil, fmt.Errorf("endpoint %q: scheme %q is not http, https, grpc or grpcs", endpoint, u.Scheme)
}
