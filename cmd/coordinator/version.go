package main

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/debug"
	"sync"
	"sync/atomic"

	goredis "github.com/redis/go-redis/v9"
)

// version is the release version, stamped at build time with
// -ldflags "-X main.version=…" (make build uses `git describe --always
// --dirty`). Empty means unstamped: buildVersion then reads the build info.
var version string

// buildVersion returns the stamped version; unstamped, the main module's
// version from the build info followed by the VCS revision when the
// toolchain recorded one ("-dirty" when the tree had local changes), e.g.
// "(devel) 38cdfa2…-dirty"; "unknown" when there is no build info.
func buildVersion() string {
	if version != "" {
		return version
	}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return "unknown"
	}
	v := info.Main.Version
	settings := map[string]string{}
	for _, s := range info.Settings {
		settings[s.Key] = s.Value
	}
	if rev := settings["vcs.revision"]; rev != "" {
		if settings["vcs.modified"] == "true" {
			rev += "-dirty"
		}
		v = fmt.Sprintf("%s %s", v, rev)
	}
	if v == "" {
		return "unknown"
	}
	return v
}

// redisLogger adapts a slog.Logger to go-redis's logging interface, so the
// client's own messages (dial failures, pool and PubSub notices) are
// structured records at level Warn with component=go-redis instead of
// unstructured lines on stderr.
type redisLogger struct{ log *slog.Logger }

// Printf logs one go-redis message.
func (l redisLogger) Printf(ctx context.Context, format string, v ...any) {
	l.log.WarnContext(ctx, fmt.Sprintf(format, v...), "component", "go-redis")
}

// redisLogs is the logger go-redis's messages go to (routeRedisLogs).
// go-redis has one process-wide logger, set without synchronisation; it is
// set once, to a forwarder that reads this pointer, so that runs started
// at once (the tests') may route the messages without a data race.
var (
	redisLogs      atomic.Pointer[slog.Logger]
	redisLogsSetUp sync.Once
)

// routeRedisLogs sends go-redis's messages to logger; the last call wins.
func routeRedisLogs(logger *slog.Logger) {
	redisLogs.Store(logger)
	redisLogsSetUp.Do(func() { goredis.SetLogger(redisForwarder{}) })
}

// redisForwarder logs go-redis's messages to the logger of the last
// routeRedisLogs.
type redisForwarder struct{}

// Printf logs one go-redis message.
func (redisForwarder) Printf(ctx context.Context, format string, v ...any) {
	redisLogger{redisLogs.Load()}.Printf(ctx, format, v...)
}
