package config

import (
	"errors"
	"fmt"
	"math"
	"net"
	"strconv"
	"strings"
)

// roles are the names accepted in api.users[].roles (docs/protocol.md §1; ADMIN and MONITOR
// are legacy aliases).
var roles = map[string]bool{"READ": true, "WRITE": true, "MEMBER": true, "ADMIN": true, "MONITOR": true}

// Validate checks the values Parse cannot: enumerations, required
// combinations, ranges and positive timings. It returns every problem found,
// joined, each a *KeyError naming the key. Rate-limit max-requests ≤ 0 is
// valid (it rejects every request, docs/protocol.md §9.2).
func (c *Config) Validate() error {
	v := validator{}
	const root = "coordinator."

	v.check(strings.TrimSpace(c.ID) != "", root+"id", "must not be blank")
	if _, _, err := net.SplitHostPort(c.Server.Address); err != nil {
		v.add(root+"server.address", "invalid listen address %q: want host:port or :port", c.Server.Address)
	}

	for key, d := range map[string]Duration{
		"read-header-timeout": c.Server.ReadHeaderTimeout, "read-timeout": c.Server.ReadTimeout,
		"write-timeout": c.Server.WriteTimeout, "idle-timeout": c.Server.IdleTimeout,
	} {
		v.nonNegative(root+"server."+key, d)
	}
	v.check(c.Server.MaxHeaderBytes >= 4096, root+"server.max-header-bytes", "must be at least 4096, got %d", c.Server.MaxHeaderBytes)
	v.check(c.Server.MaxConnectionsPerAddress >= 0, root+"server.max-connections-per-address", "must not be negative (0 is no cap), got %d", c.Server.MaxConnectionsPerAddress)
	c.Server.TLS.check(&v, root+"server.tls.")
	v.check(strings.HasPrefix(c.API.BasePath, "/"), root+"api.base-path", "must start with /, got %q", c.API.BasePath)
	v.check(strings.Trim(c.API.BasePath, "/") != "", root+"api.base-path", "must not be the root path")
	if len(c.API.Users) == 0 {
		v.check(strings.TrimSpace(c.API.AdminUsername) != "", root+"api.admin-username", "must not be blank when api.users is empty")
		v.check(strings.TrimSpace(c.API.AdminPassword) != "", root+"api.admin-password", "must not be blank when api.users is empty")
	}
	v.positive(root+"api.token-ttl", c.API.TokenTTL)
	v.nonNegative(root+"api.token-leeway", c.API.TokenLeeway)
	v.check(c.API.TokenMaxLifetime == 0 || c.API.TokenMaxLifetime >= c.API.TokenTTL, root+"api.token-max-lifetime",
		"must be 0 (token-ttl) or at least token-ttl")
	v.positive(root+"api.login-throttle.window", c.API.LoginThrottle.Window)
	usernames := make(map[string]bool, len(c.API.Users))
	for i, u := range c.API.Users {
		p := index(root+"api.users", i)
		v.check(strings.TrimSpace(u.Username) != "", p+".username", "must not be blank")
		v.check(strings.TrimSpace(u.Password) != "", p+".password", "must not be blank")
		v.check(!usernames[u.Username], p+".username", "duplicate user %q", u.Username)
		v.check(u.TokenVersion >= 0, p+".token-version", "must not be negative")
		usernames[u.Username] = true
		for j, r := range u.Roles {
			v.check(roles[r], index(p+".roles", j), "unknown role %q: want READ, WRITE, MEMBER, ADMIN or MONITOR", r)
		}
		for j, g := range u.Grants {
			if _, err := g.Parse(); err != nil {
				v.add(index(p+".grants", j), "%v", err)
			}
		}
	}
	v.check(c.API.SessionMaxLifetime == 0 || c.API.SessionMaxLifetime >= c.API.TokenTTL, root+"api.session-max-lifetime",
		"must be 0 (30 days) or at least token-ttl")
	if _, err := c.API.TrustedProxyPrefixes(); err != nil {
		v.add(root+"api.trusted-proxies", "%v", err)
	}
	v.positive(root+"api.rate-limit.window", c.API.RateLimit.Window)
	c.checkExposure(&v)

	switch c.Store.Type {
	case StoreMemory, StoreRedis:
	case StoreJDBC:
		v.check(strings.TrimSpace(c.Store.JDBC.URL) != "", root+"store.jdbc.url", "is required when store.type is jdbc")
	default:
		v.add(root+"store.type", "unknown store type %q: want memory, redis or jdbc", c.Store.Type)
	}
	v.check(c.Store.KeyPrefix != "", root+"store.key-prefix", "must not be empty")
	v.check(c.Store.Breaker.FailureThreshold >= 1 && c.Store.Breaker.FailureThreshold <= math.MaxUint32, root+"store.breaker.failure-threshold", "must be in 1..%d, got %d", uint32(math.MaxUint32), c.Store.Breaker.FailureThreshold)
	v.positive(root+"store.breaker.open-timeout", c.Store.Breaker.OpenTimeout)
	v.positive(root+"store.timeout", c.Store.Timeout)

	v.check(c.Audit.Sink == AuditLog || c.Audit.Sink == AuditRedis, root+"audit.sink", "unknown audit sink %q: want log or redis", c.Audit.Sink)

	v.check(c.Redis.Port >= 1 && c.Redis.Port <= 65535, root+"redis.port", "must be in 1..65535, got %d", c.Redis.Port)
	v.check(c.Redis.Database >= 0, root+"redis.database", "must not be negative, got %d", c.Redis.Database)
	if c.RedisRequired() && len(c.Redis.ClusterNodes) == 0 {
		v.check(strings.TrimSpace(c.Redis.Host) != "", root+"redis.host", "must not be blank when Redis is required")
	}
	for i, node := range c.Redis.ClusterNodes {
		if _, port, err := net.SplitHostPort(node); err != nil || !validPort(port) {
			v.add(index(root+"redis.cluster-nodes", i), "invalid node %q: want host:port", node)
		}
	}

	cl := root + "cluster."
	v.positive(cl+"lease-ttl", c.Cluster.LeaseTTL)
	v.positive(cl+"renew-interval", c.Cluster.RenewInterval)
	if c.Cluster.LeaseTTL > 0 && c.Cluster.RenewInterval*2 >= c.Cluster.LeaseTTL {
		v.add(cl+"renew-interval", "must be below half of lease-ttl (%s)", c.Cluster.LeaseTTL.Duration())
	}
	if u := c.Cluster.AdvertiseURL; u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
		v.add(cl+"advertise-url", "must be an http:// or https:// URL, got %q", u)
	}
	v.filePair(cl+"tls.", c.Cluster.TLS.CertFile, c.Cluster.TLS.KeyFile)

	co := root + "coordination."
	v.positive(co+"heartbeat-interval", c.Coordination.HeartbeatInterval)
	v.positive(co+"member-lease-ttl", c.Coordination.MemberLeaseTTL)
	v.positive(co+"rebalance-timeout", c.Coordination.RebalanceTimeout)
	v.nonNegative(co+"stale-member-retention", c.Coordination.StaleMemberRetention)
	v.positive(co+"event-loop.interval", c.Coordination.EventLoop.Interval)
	v.positive(co+"event-loop.sweep-interval", c.Coordination.EventLoop.SweepInterval)
	m := c.Coordination.StateMutex
	v.positive(mutexKey(co, "ttl", m.DeprecatedTTL != nil), Duration(m.TTL()))
	v.nonNegative(mutexKey(co, "acquire-timeout", m.DeprecatedAcquireTimeout != nil), Duration(m.AcquireTimeout()))
	v.positive(mutexKey(co, "retry-interval", m.DeprecatedRetryInterval != nil), Duration(m.RetryInterval()))
	v.check(c.Coordination.MaxQueuedHeartbeats >= 1, co+"max-queued-heartbeats", "must be at least 1, got %d", c.Coordination.MaxQueuedHeartbeats)
	v.check(c.Coordination.History.MaxEntries >= 0, co+"history.max-entries", "must not be negative, got %d", c.Coordination.History.MaxEntries)
	v.nonNegative(co+"history.max-age", c.Coordination.History.MaxAge)
	v.check(c.Coordination.GroupCommit.MaxBatch >= 1, co+"group-commit.max-batch", "must be at least 1, got %d", c.Coordination.GroupCommit.MaxBatch)

	d := c.Defaults
	if d.MaxShardCount < 1 {
		v.add(root+"defaults.max-shard-count", "must be at least 1, got %d", d.MaxShardCount)
	} else {
		v.check(d.InitialShardCount >= 1 && d.InitialShardCount <= d.MaxShardCount, root+"defaults.initial-shard-count",
			"must be in 1..max-shard-count (%d), got %d", d.MaxShardCount, d.InitialShardCount)
	}
	v.check(d.Assignor == "" || d.Assignor == "count" || d.Assignor == "work", root+"defaults.assignor", "must be count or work, got %q", d.Assignor)

	v.nonNegative(root+"monitoring.offset-cache-ttl", c.Monitoring.OffsetCacheTTL)
	v.check(c.Monitoring.ShardSeries >= 0 && c.Monitoring.ShardSeries <= 1024, root+"monitoring.shard-series", "must be in 0..1024, got %d", c.Monitoring.ShardSeries)
	v.check(c.Monitoring.GroupSeries >= 0 && c.Monitoring.GroupSeries <= 10000, root+"monitoring.group-series", "must be in 0..10000, got %d", c.Monitoring.GroupSeries)
	ma := c.Monitoring.MetricsAuth
	v.check(ma.Username == "" || ma.Password != "", root+"monitoring.metrics-auth.password", "is required with monitoring.metrics-auth.username")
	v.check(ma.Password == "" || ma.Username != "", root+"monitoring.metrics-auth.username", "is required with monitoring.metrics-auth.password")
	v.check(!strings.ContainsAny(ma.BearerToken, " \t\r\n"), root+"monitoring.metrics-auth.bearer-token", "must not contain whitespace")
	v.check(c.Monitoring.MemberSeries >= 0, root+"monitoring.member-series", "must not be negative, got %d", c.Monitoring.MemberSeries)
	v.check(c.Monitoring.StatusSeries >= 0 && c.Monitoring.StatusSeries <= 1024, root+"monitoring.status-series", "must be in 0..1024, got %d", c.Monitoring.StatusSeries)
	st := c.Status
	windowOK := st.Window >= 1 && st.Window <= 100
	v.check(windowOK, root+"status.window", "must be in 1..100, got %d", st.Window)
	v.check(st.MinSamples >= 1 && (!windowOK || st.MinSamples <= st.Window), root+"status.min-samples", "must be in 1..status.window (%d), got %d", st.Window, st.MinSamples)
	v.check(st.StoppedSamples >= 1 && (!windowOK || st.StoppedSamples <= st.Window), root+"status.stopped-samples", "must be in 1..status.window (%d), got %d", st.Window, st.StoppedSamples)
	v.check(st.LagThreshold >= 0, root+"status.lag-threshold", "must not be negative, got %d", st.LagThreshold)
	sc := c.Scaling
	v.positive(root+"scaling.target-drain-time", sc.TargetDrainTime)
	v.check(sc.MinMembers >= 0, root+"scaling.min-members", "must not be negative, got %d", sc.MinMembers)
	v.check(sc.MaxMembers == 0 || sc.MaxMembers >= max(sc.MinMembers, 1), root+"scaling.max-members", "must be 0 (no cap but the shard count) or at least scaling.min-members (%d), got %d", sc.MinMembers, sc.MaxMembers)
	v.nonNegative(root+"scaling.scale-down-delay", sc.ScaleDownDelay)
	v.check(sc.FallbackRatePerMember >= 1, root+"scaling.fallback-rate-per-member", "must be at least 1, got %d", sc.FallbackRatePerMember)
	v.check(c.Health.RedisTimeoutMs >= 1, root+"health.redis-timeout-ms", "must be at least 1, got %d", c.Health.RedisTimeoutMs)
	v.check(c.Health.CacheTTLMs >= 0, root+"health.cache-ttl-ms", "must not be negative, got %d", c.Health.CacheTTLMs)

	return errors.Join(v.errs...)
}

// checkExposure refuses, on a listen address other machines can reach,
// anonymous members (authenticate-member-api false) unless
// api.allow-anonymous-members is set, and the well-known credentials
// unless api.allow-insecure-defaults is set: the default admin password
// (when it is a principal, i.e. api.users is empty) and a blank token
// secret (derived from the admin credentials, so anyone who knows them can
// forge tokens). Each error names the key to set.
func (c *Config) checkExposure(v *validator) {
	host, _, err := net.SplitHostPort(c.Server.Address)
	if err != nil || loopback(host) {
		return // an invalid address is reported on its own
	}
	if !c.API.AuthenticateMemberAPI && !c.API.AllowAnonymousMembers {
		v.add("coordinator.api.authenticate-member-api", "is false (anyone who reaches the port can join, evict and impersonate members) while server.address %q is not loopback: "+
			"set it to true and give members credentials with the heartbeat operation (docs/security.md), listen on a loopback server.address, "+
			"or set coordinator.api.allow-anonymous-members: true", c.Server.Address)
	}
	if c.API.AllowInsecureDefaults {
		return
	}
	const fix = "set it, listen on a loopback server.address, or set coordinator.api.allow-insecure-defaults: true"
	if len(c.API.Users) == 0 && c.API.AdminPassword == DefaultAdminPassword {
		v.add("coordinator.api.admin-password", "is the default %q while server.address %q is not loopback: %s (e.g. $COORDINATOR_ADMIN_PASSWORD)",
			DefaultAdminPassword, c.Server.Address, fix)
	}
	if strings.TrimSpace(c.API.TokenSecret) == "" {
		v.add("coordinator.api.token-secret", "is empty (derived from the admin credentials) while server.address %q is not loopback: %s (e.g. $COORDINATOR_TOKEN_SECRET)",
			c.Server.Address, fix)
	}
}

// check reports the problems of the server.tls keys, under prefix.
func (t ServerTLS) check(v *validator, prefix string) {
	v.filePair(prefix, t.CertFile, t.KeyFile)
	v.check(t.MinVersion == TLSVersion12 || t.MinVersion == TLSVersion13, prefix+"min-version",
		"unknown TLS version %q: want \"1.2\" or \"1.3\"", t.MinVersion)
	switch t.ClientAuth {
	case ClientAuthNone:
		v.check(t.ClientCAFile == "", prefix+"client-ca-file",
			"is set while client-auth is none, so no client certificate would be asked for: set client-auth to request or require, or leave client-ca-file empty")
	case ClientAuthRequest:
	case ClientAuthRequire:
		v.check(t.ClientCAFile != "", prefix+"client-ca-file", "is required when client-auth is require (the CAs client certificates are verified against)")
	default:
		v.add(prefix+"client-auth", "unknown client-auth %q: want none, request or require", t.ClientAuth)
	}
	if !t.Enabled() && t.ClientAuth != ClientAuthNone {
		v.add(prefix+"client-auth", "is %q but TLS is off: set cert-file and key-file too", t.ClientAuth)
	}
}

// filePair reports a certificate file without its key file, or a key
// file without its certificate file, under prefix.
func (v *validator) filePair(prefix, certFile, keyFile string) {
	v.check(certFile == "" || keyFile != "", prefix+"key-file", "is required with %scert-file (the certificate's private key)", prefix)
	v.check(keyFile == "" || certFile != "", prefix+"cert-file", "is required with %skey-file (the key's certificate)", prefix)
}

// loopback reports whether a listen address's host accepts local
// connections only: "localhost" or a loopback IP. An empty host (":8080")
// means every interface.
func loopback(host string) bool {
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// mutexKey names the state-mutex key that supplied a value: the deprecated
// Duration key when it was set, else its -ms sibling.
func mutexKey(coordination, name string, deprecated bool) string {
	if deprecated {
		return coordination + "state-mutex." + name
	}
	return coordination + "state-mutex." + name + "-ms"
}

func validPort(s string) bool {
	p, err := strconv.Atoi(s)
	return err == nil && p >= 1 && p <= 65535
}

// validator collects KeyErrors.
type validator struct {
	errs []error
}

func (v *validator) add(key, format string, args ...any) {
	v.errs = append(v.errs, &KeyError{Key: key, Err: fmt.Errorf(format, args...)})
}

func (v *validator) check(ok bool, key, format string, args ...any) {
	if !ok {
		v.add(key, format, args...)
	}
}

func (v *validator) positive(key string, d Duration) {
	v.check(d > 0, key, "must be positive, got %s", d)
}

func (v *validator) nonNegative(key string, d Duration) {
	v.check(d >= 0, key, "must not be negative, got %s", d)
}
