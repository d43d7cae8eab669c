package main

import (
	"context"
	"encoding/json"
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
	"slices"
	"syscall"
	"time"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/config"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/netlimit"
	"github.com/redis-stream-coordinator/coordinator/security"
	"github.com/redis-stream-coordinator/coordinator/streams"
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
// close the store. Logs go to stdout. -h/-help/--help print the usage and
// -version/--version the version to stdout; both return nil at once.
func run(ctx context.Context, args []string, stdout io.Writer) error {
	flags := flag.NewFlagSet("coordinator", flag.ContinueOnError)
	flags.SetOutput(stdout)
	flags.Usage = func() {
		fmt.Fprint(flags.Output(), usage)
		flags.PrintDefaults()
	}
	configPath := flags.String("config", os.Getenv("COORDINATOR_CONFIG"),
		"configuration file merged over the embedded default (default $COORDINATOR_CONFIG)")
	logFormat := flags.String("log-format", "json", "log format: json or text")
	logLevel := slog.LevelInfo
	flags.TextVar(&logLevel, "log-level", logLevel, "lowest `level` logged: debug, info, warn or error")
	showVersion := flags.Bool("version", false, "print the version and exit")
	if err := flags.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return nil
		}
		return err
	}
	if flags.NArg() > 0 {
		return fmt.Errorf("unexpected argument %q (see -help)", flags.Arg(0))
	}
	if *showVersion {
		fmt.Fprintln(stdout, "coordinator", buildVersion())
		return nil
	}
	logger, err := newLogger(stdout, *logFormat, logLevel)
	if err != nil {
		return err
	}
	routeRedisLogs(logger)
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
	apiTLS, clusterTLS, err := tlsConfigs(cfg, logger)
	if err != nil {
		return err
	}
	settings := domainSettings(cfg)
	ln, err := net.Listen("tcp", cfg.Server.Address)
	if err != nil {
		return err
	}
	node, err := joinCluster(ctx, cfg, back, ln.Addr(), obs.m, logger)
	if err != nil {
		_ = ln.Close()
		return err
	}
	opts := actorOptions(cfg, back, logger)
	opts.Observer = obs.m
	opts.Ownership = node
	coord, err := actors.New(opts)
	if err != nil {
		_ = ln.Close()
		return errors.Join(err, node.Stop(context.Background()))
	}
	node.OnChange(coord.HandOver)
	go obs.m.Run(ctx, coord)
	reader, ops := dataPlane(cfg, back.redis), streamOperator(back.redis)
	var data httpapi.DataPlane
	var status httpapi.StatusSource
	if reader != nil {
		data = reader
		statuses := newStatuses(cfg)
		status = statuses
		lags := &lagRefresher{coord: coord, offsets: reader, deadLetters: streams.NewOperator(back.redis), m: obs.m, log: logger, status: statuses}
		go lags.run(ctx, max(cfg.Monitoring.OffsetCacheTTL.Duration(), time.Second))
	}
	api := httpapi.New(obs.apiOptions(httpapi.Options{
		BasePath: cfg.API.BasePath,
		Runtime:  coord,
		Settings: settings,
		MetricsCredential: httpapi.MetricsCredential{BearerToken: cfg.Monitoring.MetricsAuth.BearerToken,
			Username: cfg.Monitoring.MetricsAuth.Username, Password: cfg.Monitoring.MetricsAuth.Password},
		Health:        back.health(cfg, node.Serving),
		CoordinatorID: cfg.ID,
		Version:       buildVersion(),
		Logger:        logger,
		Security:      sec,
		DataPlane:     data,
		Status:        status,
		Streams:       ops,
		Cluster:       node,
		Forwarded:     obs.m.Forwarded,
		PeerTLS:       clusterTLS,

		BenchEndpoints: cfg.Debug.BenchEndpoints,
	}))

	srv := &http.Server{
		Handler:           withPprof(api, cfg.Debug.Pprof, sec.Users),
		ReadHeaderTimeout: cfg.Server.ReadHeaderTimeout.Duration(),
		ReadTimeout:       cfg.Server.ReadTimeout.Duration(),
		WriteTimeout:      cfg.Server.WriteTimeout.Duration(),
		IdleTimeout:       cfg.Server.IdleTimeout.Duration(),
		MaxHeaderBytes:    cfg.Server.MaxHeaderBytes,
		ErrorLog:          slog.NewLogLogger(logger.Handler(), slog.LevelWarn),
		TLSConfig:         apiTLS,
	}
	// The per-address cap wraps the raw listener, under TLS (ServeTLS
	// wraps it): a refused connection costs no handshake.
	capped := netlimit.Listen(ln, cfg.Server.MaxConnectionsPerAddress, logger)
	served := make(chan error, 1)
	go func() { served <- serve(srv, capped) }()
	logger.Info("coordinator listening", "address", ln.Addr().String(), "scheme", scheme(apiTLS != nil), "store", cfg.Store.Type,
		"coordinatorId", cfg.ID, "advertiseUrl", node.Self().URL, "basePath", cfg.API.BasePath, "version", buildVersion())
	logConsole(logger, cfg, node.Self().URL)

	var serveErr error
	select {
	case <-ctx.Done():
		logger.Info("shutting down")
	case serveErr = <-served:
		logger.Error("http server stopped", "err", serveErr)
	}

	shutdownCtx, cancel := context.WithTimeout(context.Background(), shutdownTimeout)
	defer cancel()
	leaveCluster(shutdownCtx, node, coord, logger)
	errs := []error{serveErr}
	api.Drain()
	if err := coord.Shutdown(shutdownCtx); err != nil {
		errs = append(errs, err)
	}
	if err := srv.Shutdown(shutdownCtx); err != nil {
		errs = append(errs, fmt.Errorf("http shutdown: %w", err))
	}
	logger.Info("coordinator stopped")
	return errors.Join(errs...)
}

// usage heads the -help output, above the flag list.
const usage = `Usage: coordinator [flags]

Runs the Redis Stream Coordinator. The configuration is the embedded default
(in-memory store on 127.0.0.1:8080), with -config FILE merged over it and
COORDINATOR_* environment variables (e.g. COORDINATOR_SERVER_ADDRESS) over
both; see README.md.

Flags:
`

// newLogger builds the process logger at level.
func newLogger(w io.Writer, format string, level slog.Level) (*slog.Logger, error) {
	o := &slog.HandlerOptions{Level: level}
	switch format {
	case "json":
		return slog.New(slog.NewJSONHandler(w, o)), nil
	case "text":
		return slog.New(slog.NewTextHandler(w, o)), nil
	}
	return nil, fmt.Errorf("-log-format %q: must be json or text", format)
}

// actorOptions configures the actor system on back: the event loop, group
// commit (coordination.group-commit: enabled=false, or max-batch 1, runs
// one critical section per request) and the store timeout.
func actorOptions(cfg *config.Config, back *backend, logger *slog.Logger) actors.Options {
	return actors.Options{
		Store:               back.store,
		Locker:              back.locker,
		Settings:            domainSettings(cfg),
		TickInterval:        cfg.Coordination.EventLoop.Interval.Duration(),
		SweepInterval:       cfg.Coordination.EventLoop.SweepInterval.Duration(),
		TickEnabled:         cfg.Coordination.EventLoop.Enabled,
		GroupCommit:         cfg.Coordination.GroupCommit.Enabled,
		MaxBatch:            cfg.Coordination.GroupCommit.MaxBatch,
		MaxQueuedHeartbeats: cfg.Coordination.MaxQueuedHeartbeats,
		StoreTimeout:        cfg.Store.Timeout.Duration(),
		MaxGroups:           cfg.Defaults.MaxGroups,
		MaxGroupsPerPrefix:  cfg.Defaults.MaxGroupsPerStream,
		Provisioner:         provisioner(cfg, back.redis),
		Drains:              drainChecker(back.redis),
		Positions:           resetPositions(back.redis),
		Logger:              logger,
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
		DefaultAssignor:      cfg.Defaults.Assignor,
		HistoryMaxEntries:    c.History.MaxEntries,
		HistoryMaxAge:        c.History.MaxAge.Duration(),
	}
}

// withPprof mounts net/http/pprof under /debug/pprof/ in front of h when
// enabled, for principals with the ADMIN role only (adminOnly).
func withPprof(h http.Handler, enabled bool, users *security.Users) http.Handler {
	if !enabled {
		return h
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	debug := adminOnly(mux, users)
	root := http.NewServeMux()
	root.Handle("/debug/pprof/", debug)
	root.Handle("/", h)
	return root
}

// adminOnly lets through the requests whose Authorization (Basic or
// Bearer, as the API takes them) authenticates a principal with the ADMIN
// role; others get 401 (no or wrong credentials) or 403 (another role)
// with the JSON error body of docs/protocol.md §0. No WWW-Authenticate
// challenge is sent: a browser that cached Basic credentials for the
// profiles would send them to the API's routes too.
func adminOnly(h http.Handler, users *security.Users) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := users.Authenticate(r.Header.Get("Authorization"))
		switch {
		case err != nil:
			writeErrorBody(w, http.StatusUnauthorized, contract.CodeUnauthorized, "Authentication required: the profiles under /debug/pprof/ need an ADMIN principal's Basic credentials or Bearer token")
		case !slices.Contains(p.Roles, security.RoleAdmin):
			writeErrorBody(w, http.StatusForbidden, contract.CodeForbidden, "Role "+string(security.RoleAdmin)+" is required")
		default:
			h.ServeHTTP(w, r)
		}
	})
}

// writeErrorBody answers status with the docs/protocol.md §0 error body.
func writeErrorBody(w http.ResponseWriter, status int, code contract.Code, message string) {
	b, _ := json.Marshal(contract.ErrorBody{Status: contract.StatusName(status), ErrorCode: code, Message: message})
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(b)
}
