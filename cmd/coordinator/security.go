package main

import (
	"cmp"
	"fmt"
	"log/slog"

	goredis "github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/audit"
	"github.com/redis-stream-coordinator/coordinator/config"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/ratelimit"
	"github.com/redis-stream-coordinator/coordinator/security"
)

// newSecurity builds the API's access control, audit and rate limit from
// coordinator.api and coordinator.audit:
//
//   - users from api.users (or the admin pair), tokens signed with
//     api.token-secret for api.token-ttl; a warning is logged when the
//     secret is derived from the admin credentials, and for each configured
//     user that was left out. Passwords and secrets are never logged.
//   - audit.sink redis: a RedisSink on the shared client under
//     store.key-prefix, capped at audit.redis-max-entries per list, which is
//     also the recent-mutations history; log: the audit log lines on logger
//     plus a MemorySink of the last httpapi.RecentMutationsLimit events per
//     group, audit.memory-max-entries in all, as the history.
//   - api.rate-limit.enabled: a limiter of max-requests per window;
//   - api.login-throttle: limiters of failed authentications per user and
//     per client address (a limit of 0 is off; the window is validated).
//
// client is nil unless Redis is required, which audit.sink redis implies
// (config.RedisRequired).
func newSecurity(cfg *config.Config, client goredis.UniversalClient, logger *slog.Logger) (*httpapi.Security, error) {
	api := cfg.API
	users := make([]security.User, len(api.Users))
	for i, u := range api.Users {
		users[i] = security.User{
			Username: u.Username, Password: u.Password, Roles: u.Roles,
			Disabled: u.Disabled, TokenVersion: int64(u.TokenVersion),
		}
		for j, g := range u.Grants {
			grant, err := g.Parse()
			if err != nil {
				return nil, fmt.Errorf("coordinator.api.users[%d].grants[%d]: %w", i, j, err)
			}
			users[i].Grants = append(users[i].Grants, grant)
		}
	}
	proxies, err := api.TrustedProxyPrefixes()
	if err != nil {
		return nil, fmt.Errorf("coordinator.api.trusted-proxies: %w", err)
	}
	accounts, err := security.NewUsers(security.Options{
		AdminUsername: api.AdminUsername,
		AdminPassword: api.AdminPassword,
		Users:         users,
		TokenSecret:   api.TokenSecret,
		TokenTTL:      api.TokenTTL.Duration(),
		// A zero leeway in the file means none (the default is 30s).
		TokenLeeway:        cmp.Or(api.TokenLeeway.Duration(), -1),
		TokenMaxLifetime:   api.TokenMaxLifetime.Duration(),
		SessionMaxLifetime: api.SessionMaxLifetime.Duration(),
	})
	if err != nil {
		return nil, fmt.Errorf("coordinator.api: %w", err)
	}
	if accounts.DevSecret() {
		logger.Warn("token secret derived from admin credentials: for local development only; set coordinator.api.token-secret")
	}
	for _, u := range accounts.Ignored() {
		logger.Warn("configured API user ignored", "username", u.Username, "reason", u.Reason)
	}

	sec := &httpapi.Security{Users: accounts, AuthenticateMemberAPI: api.AuthenticateMemberAPI,
		TrustedProxies: proxies, BasicChallenge: api.BasicChallenge}
	switch cfg.Audit.Sink {
	case config.AuditRedis:
		sink := audit.NewRedisSink(client, cfg.Store.KeyPrefix, cfg.Audit.RedisMaxEntries)
		sec.Audit, sec.History = sink, sink
	case config.AuditLog:
		recent := audit.NewMemorySink(httpapi.RecentMutationsLimit, cfg.Audit.MemoryMaxEntries)
		sec.Audit, sec.History = audit.Tee(audit.NewLogSink(logger), recent), recent
	default:
		return nil, fmt.Errorf("coordinator.audit.sink %q: unknown audit sink", cfg.Audit.Sink)
	}
	lt := api.LoginThrottle
	for _, l := range []struct {
		max     int
		limiter **ratelimit.Limiter
	}{{lt.MaxFailuresPerUser, &sec.FailedAuthPerUser}, {lt.MaxFailuresPerAddress, &sec.FailedAuthPerAddress}} {
		if l.max > 0 {
			if *l.limiter, err = ratelimit.New(l.max, lt.Window.Duration()); err != nil {
				return nil, fmt.Errorf("coordinator.api.login-throttle: %w", err)
			}
		}
	}
	if rl := api.RateLimit; rl.Enabled {
		if sec.Limiter, err = ratelimit.New(rl.MaxRequests, rl.Window.Duration()); err != nil {
			return nil, fmt.Errorf("coordinator.api.rate-limit: %w", err)
		}
		if rl.MaxGroupCreates > 0 {
			if sec.CreateLimiter, err = ratelimit.New(rl.MaxGroupCreates, rl.Window.Duration()); err != nil {
				return nil, fmt.Errorf("coordinator.api.rate-limit: %w", err)
			}
		}
	}
	return sec, nil
}
