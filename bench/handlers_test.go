package bench

import (
	"context"
	"io"
	"log/slog"
	"os"
	"testing"

	"github.com/lmittmann/tint"
	plog "github.com/phuslu/log"
	"github.com/rs/zerolog"
	"go.uber.org/zap"
	"go.uber.org/zap/exp/zapslog"
	"go.uber.org/zap/zapcore"

	"simpler.dev/log/levels"
	"simpler.dev/log/sink"
	"simpler.dev/log/slogsimpler"
)

type nopHandler struct{}

func (nopHandler) Enabled(context.Context, slog.Level) bool  { return true }
func (nopHandler) Handle(context.Context, slog.Record) error { return nil }
func (h nopHandler) WithAttrs([]slog.Attr) slog.Handler      { return h }
func (h nopHandler) WithGroup(string) slog.Handler           { return h }

type namedHandler struct {
	name string
	h    slog.Handler
}

// handlers builds every handler of the comparison, each at INFO.
func handlers(b *testing.B) []namedHandler {
	b.Helper()
	devnull, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		b.Fatal(err)
	}
	async, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Destination: sink.Writer(devnull)})
	if err != nil {
		b.Fatal(err)
	}
	if err := async.Start(); err != nil {
		b.Fatal(err)
	}
	sync, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Output: io.Discard})
	if err != nil {
		b.Fatal(err)
	}
	// The synchronous handler with the write the asynchronous one takes
	// off the caller: a system call per record, to /dev/null.
	syncWrite, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Info, Destination: sink.Writer(devnull)})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { async.Close(); devnull.Close() })
	zcore := zapcore.NewCore(zapcore.NewJSONEncoder(zap.NewProductionEncoderConfig()), zapcore.AddSync(io.Discard), zapcore.InfoLevel)
	source := &slog.HandlerOptions{Level: levels.Info, AddSource: true}
	return []namedHandler{
		{"nop", nopHandler{}},
		{"discard", slog.DiscardHandler},
		{"slogsimpler", async.Handler()},
		{"slogsimpler-sync", sync.Handler()},
		{"slogsimpler-sync-devnull", syncWrite.Handler()},
		{"text", slog.NewTextHandler(io.Discard, source)},
		{"json", slog.NewJSONHandler(io.Discard, source)},
		{"tint", tint.NewHandler(io.Discard, &tint.Options{Level: levels.Info, AddSource: true, NoColor: true})},
		{"zapslog", zapslog.NewHandler(zcore, zapslog.WithCaller(true))},
		{"zerolog", zerolog.NewSlogHandler(zerolog.New(io.Discard).Level(zerolog.InfoLevel))},
		{"phuslu", plog.SlogNewJSONHandler(io.Discard, source)},
	}
}

// peers are the handlers the "fastest peer" ratio is taken over.
var peers = map[string]bool{"text": true, "json": true, "tint": true, "zapslog": true, "zerolog": true, "phuslu": true}
