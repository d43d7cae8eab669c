package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/config"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
)

// shutdownTimeout bounds the whole ordered shutdown.
const shutdownTimeout = 30 * time.Second

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	go func() {
		// After the first signal, a second one kills the process at once.
		<-ctx.Done()
		stop()
	}()
	if err := run(ctx, os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "coordinator:", err)
		os.Exit(1)
	}
}

// run starts the coordinator, serves until ctx ends or the server fails,
// then shuts down in order: refuse new mutations (api.Drain), let the group
// actors answer what they hold (coordinator.Shutdown), stop the HTTP server,
// close the store. Logs go to stdout.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("coordinator", flag.ContinueOnError)
	flags.SetOutput(stdout)
	configPath := flags.String("config", os.Getenv("COORDINATOR_CONFIG"),
		"configuration file (default $COORDINATOR_CONFIG, else the embedded default)")
	logFormat := flags.String("log-format", "json", "log format: json or text")
	if err := flags.Parse(args); err != nil {
		return err
	}
	logger, err := newLogger(stdout, *logFormat)
	if err != nil {
		return err
	}
	cfg, err := config.Load(*configPath)
	if err != nil {
		return err
	}
	back, err := openBackend(ctx, cfg, logger)
	if err != nil {
		return err
	}
	defer func() {
		if err := back.Close(); err != nil {
			logger.Warn("closing store", "err", err)
		}
	}()
	obs := newObservability(cfg, back)

	sec, err := newSecurity(cfg, back.redis, logger)
	if err != nil {
		return err
	}
	settings := domainSettings(cfg)
	opts := actorOptions(cfg, back, logger)
	opts.Observer = obs.m
	coord, err := actors.New(opts)
	if err != nil {
		return err
	}
	go obs.m.Run(ctx, coord)
	api := httpapi.New(obs.apiOptions(httpapi.Options{
		BasePath:      cfg.API.BasePath,
		Coordinator:   coord,
		Settings:      settings,
		Health:        back.health(cfg),
		CoordinatorID: cfg.ID,
		Logger:        logger,
		Security:      sec,
		DataPlane:     dataPlane(cfg, back.redis),

		BenchEndpoints: cfg.Debug.BenchEndpoints,
	}))

	ln, err := net.Listen("tcp", cfg.Server.Address)
	if err != nil {
		_ = coord.Shutdown(context.Background())
		return err
	}
	srv := &http.Server{
		Handler:           withPprof(api, cfg.Debug.Pprof),
		ReadHeaderTimeout: 10 * time.Second,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
	}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	logger.Info("coordinator listening", "address", ln.Addr().String(), "store", cfg.Store.Type,
		"coordinatorId", cfg.ID, "basePath", cfg.API.BasePath)

	var serveErr error
	select {
	case <-ctx.Done():
		logger.Info("shutting down")
	case serveErr = <-served:
		logger.Error("http server stopped", "err", serveErr)
	}

	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	api.Drain()
	errs := []error{serveErr}
	if err := coord.Shutdown(shutdownCtx); err != nil {
		errs = append(errs, err)
	}
	if err := srv.Shutdown(shutdownCtx); err != nil {
		errs = append(errs, fmt.Errorf("http shutdown: %w", err))
	}
	logger.Info("coordinator stopped")
	return errors.Join(errs...)
}

// newLogger builds the process logger.
func newLogger(w io.Writer, format string) (*slog.Logger, error) {
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, nil)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, nil)), nil
	}
	return nil, fmt.Errorf("-log-format %q: must be json or text", format)
}

// actorOptions configures the actor system on back: the event loop, group
// commit (coordination.group-commit: enabled=false, or max-batch 1, runs
// one critical section per request) and the store timeout.
func actorOptions(cfg *config.Config, back *backend, logger *slog.Logger) actors.Options {
	return actors.Options{
		Store:        back.store,
		Locker:       back.locker,
		Settings:     domainSettings(cfg),
		TickInterval: cfg.Coordination.EventLoop.Interval.Duration(),
		TickEnabled:  cfg.Coordination.EventLoop.Enabled,
		GroupCommit:  cfg.Coordination.GroupCommit.Enabled,
		MaxBatch:     cfg.Coordination.GroupCommit.MaxBatch,
		StoreTimeout: cfg.Store.Timeout.Duration(),
		Provisioner:  provisioner(cfg, back.redis),
		Drains:       drainChecker(back.redis),
		Logger:       logger,
	}
}

// domainSettings extracts the domain's settings from the configuration.
func domainSettings(cfg *config.Config) group.Settings {
	c := cfg.Coordination
	return group.Settings{
		HeartbeatInterval:    c.HeartbeatInterval.Duration(),
		MemberLeaseTTL:       c.MemberLeaseTTL.Duration(),
		RebalanceTimeout:     c.RebalanceTimeout.Duration(),
		StaleMemberRetention: c.StaleMemberRetention.Duration(),
		DefaultShardCount:    cfg.Defaults.InitialShardCount,
		MaxShardCount:        cfg.Defaults.MaxShardCount,
		DrainCheck:           cfg.RedisRequired(),
	}
}

// withPprof mounts net/http/pprof under /debug/pprof/ in front of h when enabled.
func withPprof(h http.Handler, enabled bool) http.Handler {
	if !enabled {
		return h
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	mux.Handle("/", h)
	return mux
}
