package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
)

func main() {
	dir := flag.String("dir", "simpler-logs", "directory for host.<pid>.log")
	flag.Parse()
	if err := run(*dir, os.Stderr, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "fanout:", err)
		os.Exit(1)
	}
}

// brokenSink stands for a destination that fails: a remote collector that
// panics on a bad record, say.
type brokenSink struct{ slog.Handler }

func (brokenSink) Enabled(context.Context, slog.Level) bool  { return true }
func (brokenSink) Handle(context.Context, slog.Record) error { panic("collector unreachable") }
func (b brokenSink) WithAttrs([]slog.Attr) slog.Handler      { return b }
func (b brokenSink) WithGroup(string) slog.Handler           { return b }

func run(dir string, console, out io.Writer) error {
	st, err := slogsimpler.NewState(&slogsimpler.StateOptions{Level: levels.Debug, Dir: dir})
	if err != nil {
		return err
	}
	if err := st.Start(); err != nil {
		return err
	}
	fan := slogsimpler.NewFanout(st,
		st.Handler(), // the file: the state's live threshold, DEBUG here
		slogsimpler.NewConsoleHandler(console, &slogsimpler.ConsoleOptions{Level: levels.Warn}),
		brokenSink{},
	)
	logger := slog.New(fan).With("importer", "catalog")

	rows := []struct {
		sku   string
		price int
	}{{"A-100", 1200}, {"A-101", 0}, {"B-200", 880}}
	imported := 0
	for i, r := range rows {
		row := logger.WithGroup("row").With("n", i, "sku", r.sku)
		row.Debug("parsed", "price", r.price)
		if r.price == 0 {
			row.Warn("skipped: no price")
			continue
		}
		imported++
	}
	logger.Info("import finished", "imported", imported, "skipped", len(rows)-imported)

	if err := st.Close(); err != nil {
		return err
	}
	c := st.Counts()
	fmt.Fprintf(out, "log: %s\nrecords written: %d, dropped: %d, handler failures: %d\n", st.Path(), c.Written, c.Dropped, fan.Failures())
	return nil
}
