package atrace

// What recording costs the logging call, against slog's floor:
//
//	go test -run NONE -bench . -benchmem ./atrace

import (
	"context"
	"log/slog"
	"testing"
)

func BenchmarkRecord(b *testing.B) {
	r, err := New(&Options{LookupEnv: env{"HOME": b.TempDir()}.lookup})
	if err != nil {
		b.Fatal(err)
	}
	log := slog.New(r)
	ctx := context.Background()
	b.Run("serial", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			log.LogAttrs(ctx, slog.LevelDebug, "request served", slog.Int("status", 200), slog.String("path", "/v1/items"))
		}
	})
	b.Run("parallel", func(b *testing.B) {
		b.ReportAllocs()
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				log.LogAttrs(ctx, slog.LevelDebug, "request served", slog.Int("status", 200), slog.String("path", "/v1/items"))
			}
		})
	})
}
