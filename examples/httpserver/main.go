package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"hash/fnv"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"syscall"
	"time"

	"simpler.dev/log/levels"
	"simpler.dev/log/slogsimpler"
	"simpler.dev/log/spanattr"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:8080", "listen address")
	dir := flag.String("dir", "simpler-logs", "directory for host.<pid>.log")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	lg, err := slogsimpler.Setup(&slogsimpler.Options{Dir: *dir, Level: levels.Debug})
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpserver:", err)
		os.Exit(1)
	}
	fmt.Fprintln(os.Stderr, "httpserver: log:", lg.State.Path())
	ln, err := net.Listen("tcp", *addr)
	if err != nil {
		slog.Error("listen", "addr", *addr, "err", err)
		lg.Close()
		os.Exit(1)
	}
	err = serve(ctx, ln, slog.Default())
	// The log's last records within the container's grace period (a
	// SIGTERM, then SIGKILL after 10 s by default): Shutdown waits for
	// them at most until the context's deadline.
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if cerr := lg.Shutdown(sctx); err == nil {
		err = cerr
	}
	fmt.Fprintln(os.Stderr, "httpserver: log:", lg.State.Path())
	if err != nil {
		fmt.Fprintln(os.Stderr, "httpserver:", err)
		os.Exit(1)
	}
}

// serve runs the service on ln until ctx is done, then shuts down,
// letting requests in flight finish (for at most five seconds).
func serve(ctx context.Context, ln net.Listener, logger *slog.Logger) error {
	srv := &http.Server{
		Handler:           withSpans(logger, routes(logger)),
		ReadHeaderTimeout: 5 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), levels.Warn),
	}
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(ln) }()
	logger.Info("listening", "addr", ln.Addr().String())
	select {
	case err := <-errc:
		return err
	case <-ctx.Done():
	}
	logger.Info("shutting down", "cause", context.Cause(ctx))
	sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := srv.Shutdown(sctx); err != nil {
		return err
	}
	if err := <-errc; !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func routes(logger *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /items/{id}", func(w http.ResponseWriter, r *http.Request) {
		id, err := strconv.Atoi(r.PathValue("id"))
		if err != nil {
			logger.WarnContext(r.Context(), "bad item id", "id", r.PathValue("id"))
			http.Error(w, "bad id", http.StatusBadRequest)
			return
		}
		_, sp := spanattr.Start(r.Context(), "http.items.lookup", slog.Int("id", id))
		time.Sleep(time.Duration(id%5) * 100 * time.Microsecond) // the lookup
		sp.End()
		fmt.Fprintf(w, "item %d\n", id)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// withSpans makes every request an invocation (hid: a hash of its route
// pattern, so one route is one callable) with a root span, and logs it.
func withSpans(logger *slog.Logger, next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, pattern := next.(*http.ServeMux).Handler(r)
		h := fnv.New64a()
		h.Write([]byte(pattern))
		ctx, inv := spanattr.NewInvocation(r.Context(), h.Sum64())
		defer inv.End()
		ctx, sp := spanattr.Start(ctx, "http.request", slog.String("method", r.Method), slog.String("route", pattern))
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		start := time.Now()
		next.ServeHTTP(rec, r.WithContext(ctx))
		sp.End(slog.Int("status", rec.status))
		logger.InfoContext(ctx, "request",
			slog.Group("req", slog.String("method", r.Method), slog.String("path", r.URL.Path), slog.String("remote", r.RemoteAddr)),
			slog.Int("status", rec.status), slog.Duration("took", time.Since(start)), slog.Uint64("inv", inv.ID()))
	})
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (s *statusRecorder) WriteHeader(code int) {
	s.status = code
	s.ResponseWriter.WriteHeader(code)
}
