package config

import (
	"net"
	"net/url"
	"os"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	yaml "go.yaml.in/yaml/v4"
)

// Store types accepted by `coordinator.store.type`.
const (
	StoreMemory = "memory"
	StoreRedis  = "redis"
	StoreJDBC   = "jdbc"
)

// Audit sinks accepted by `coordinator.audit.sink`.
const (
	AuditLog   = "log"
	AuditRedis = "redis"
)

// DefaultAdminPassword is the admin password of the default configuration,
// refused on a non-loopback listen address (see API.AllowInsecureDefaults).
const DefaultAdminPassword = "password"

// DefaultAddress is the default listen address: loopback only.
const DefaultAddress = "127.0.0.1:8080"

// FallbackID stands in for the host name in the default coordinator id
// when the host name is unavailable.
const FallbackID = "local-coordinator"

// Config is the `coordinator:` subtree of the configuration file. Field tags
// are the YAML keys; error paths are "coordinator." + the tags joined by dots.
type Config struct {
	// ID identifies this coordinator in the cluster registry, audit
	// records, metrics and mutex tokens. Never blank after Parse: an empty
	// value becomes the host name and the listen port (defaultID).
	ID           string       `yaml:"id"`
	Server       Server       `yaml:"server"`
	API          API          `yaml:"api"`
	Store        Store        `yaml:"store"`
	Audit        Audit        `yaml:"audit"`
	Redis        Redis        `yaml:"redis"`
	Coordination Coordination `yaml:"coordination"`
	Cluster      Cluster      `yaml:"cluster"`
	Streams      Streams      `yaml:"streams"`
	Defaults     Defaults     `yaml:"defaults"`
	Monitoring   Monitoring   `yaml:"monitoring"`
	Status       Status       `yaml:"status"`
	Scaling      Scaling      `yaml:"scaling"`
	Health       Health       `yaml:"health"`
	Debug        Debug        `yaml:"debug"`
}

// Server is the HTTP listener.
type Server struct {
	// Address is the net.Listen address. The default, "127.0.0.1:8080",
	// accepts local connections only; ":8080" listens on every interface.
	Address string `yaml:"address"`
	// ReadHeaderTimeout, ReadTimeout (headers and body), WriteTimeout and
	// IdleTimeout (keep-alive) bound how long a connection may hold the
	// server; 0 is no limit. MaxHeaderBytes caps a request's header block.
	ReadHeaderTimeout Duration `yaml:"read-header-timeout"`
	ReadTimeout       Duration `yaml:"read-timeout"`
	WriteTimeout      Duration `yaml:"write-timeout"`
	IdleTimeout       Duration `yaml:"idle-timeout"`
	MaxHeaderBytes    int      `yaml:"max-header-bytes"`
	// MaxConnectionsPerAddress caps the connections one client IP address
	// may hold open on the API listener; one beyond it is closed as soon
	// as it is accepted (package netlimit). 0 is no cap.
	MaxConnectionsPerAddress int `yaml:"max-connections-per-address"`
	// TLS serves the API over HTTPS when its CertFile and KeyFile are set.
	TLS ServerTLS `yaml:"tls"`
}

// TLS versions accepted by `coordinator.server.tls.min-version`.
const (
	TLSVersion12 = "1.2"
	TLSVersion13 = "1.3"
)

// Client certificate policies accepted by `coordinator.server.tls.client-auth`.
const (
	// ClientAuthNone asks clients for no certificate.
	ClientAuthNone = "none"
	// ClientAuthRequest asks for a certificate but accepts a client
	// without one; one that is presented is verified against ClientCAFile
	// when that is set.
	ClientAuthRequest = "request"
	// ClientAuthRequire refuses a client without a certificate that
	// verifies against ClientCAFile.
	ClientAuthRequire = "require"
)

// ServerTLS is HTTPS on the API listener (docs/security.md, TLS). The
// certificate and key files are read again when they change.
type ServerTLS struct {
	// CertFile (a PEM certificate chain, leaf first) and KeyFile (its PEM
	// private key) turn TLS on when both are set; one without the other
	// is invalid.
	CertFile string `yaml:"cert-file"`
	KeyFile  string `yaml:"key-file"`
	// MinVersion is the oldest TLS version accepted: TLSVersion12 or
	// TLSVersion13.
	MinVersion string `yaml:"min-version"`
	// ClientCAFile is a PEM bundle of the CAs client certificates are
	// verified against; it is read at start.
	ClientCAFile string `yaml:"client-ca-file"`
	// ClientAuth is ClientAuthNone, ClientAuthRequest or ClientAuthRequire
	// (which needs ClientCAFile).
	ClientAuth string `yaml:"client-auth"`
}

// Enabled reports whether the API is served over HTTPS.
func (t ServerTLS) Enabled() bool { return t.CertFile != "" && t.KeyFile != "" }

// API is the HTTP API path and security (docs/protocol.md §1, §9.2).
type API struct {
	BasePath      string `yaml:"base-path"`
	AdminUsername string `yaml:"admin-username"`
	AdminPassword string `yaml:"admin-password"`
	// TokenSecret signs Bearer tokens; blank means the dev-only secret
	// derived from the admin credentials (docs/protocol.md §1).
	TokenSecret string   `yaml:"token-secret"`
	TokenTTL    Duration `yaml:"token-ttl"`
	// TokenMaxLifetime is the longest exp − iat a presented token may
	// have; 0 means TokenTTL.
	TokenMaxLifetime Duration `yaml:"token-max-lifetime"`
	// TokenLeeway is the clock skew allowed on a token's exp and iat.
	TokenLeeway Duration `yaml:"token-leeway"`
	// SessionMaxLifetime bounds a session: tokens refreshed from tokens
	// expire at most this long after the password was last checked; 0
	// means 30 days. It must not be shorter than TokenTTL.
	SessionMaxLifetime Duration `yaml:"session-max-lifetime"`
	// LoginThrottle limits failed authentications.
	LoginThrottle         LoginThrottle `yaml:"login-throttle"`
	AuthenticateMemberAPI bool          `yaml:"authenticate-member-api"`
	// AllowAnonymousMembers lets a coordinator on a non-loopback address
	// serve heartbeats without authentication (AuthenticateMemberAPI
	// false); Validate refuses that otherwise.
	AllowAnonymousMembers bool      `yaml:"allow-anonymous-members"`
	Users                 []User    `yaml:"users"`
	RateLimit             RateLimit `yaml:"rate-limit"`
	// TrustedProxies are CIDR ranges (or single addresses) of reverse
	// proxies whose X-Forwarded-For names the client address that the
	// login throttle counts against.
	TrustedProxies []string `yaml:"trusted-proxies"`
	// BasicChallenge adds WWW-Authenticate: Basic to 401 answers; off,
	// browsers never cache Basic credentials for the API.
	BasicChallenge bool `yaml:"basic-challenge"`
	// AllowInsecureDefaults lets the coordinator listen on a non-loopback
	// address with the default admin password (DefaultAdminPassword, when
	// Users is empty) or a blank TokenSecret; Validate refuses those
	// otherwise.
	AllowInsecureDefaults bool `yaml:"allow-insecure-defaults"`
}

// User is one configured principal. When API.Users is empty the admin
// credentials form the only principal (docs/protocol.md §1).
type User struct {
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	// Roles are READ, WRITE, MEMBER, ADMIN or MONITOR.
	Roles []string `yaml:"roles"`
	// Disabled users can neither log in nor use their tokens.
	Disabled bool `yaml:"disabled"`
	// TokenVersion is carried by the user's tokens; raising it revokes
	// every token the user holds.
	TokenVersion int `yaml:"token-version"`
	// Grants are scoped permissions (docs/security.md, "Grants"); a user
	// needs roles, grants or both.
	Grants []Grant `yaml:"grants"`
}

// Grant allows Operations on the groups whose stream prefix matches Stream
// and whose name matches Group. Each is a literal name ("*": every name)
// or, with StreamPattern / GroupPattern "prefixed", a prefix. With the
// heartbeat operation, MemberIDPrefix (when set) binds the member ids the
// user may heartbeat as.
type Grant struct {
	Stream         string   `yaml:"stream"`
	StreamPattern  string   `yaml:"stream-pattern"`
	Group          string   `yaml:"group"`
	GroupPattern   string   `yaml:"group-pattern"`
	Operations     []string `yaml:"operations"`
	MemberIDPrefix string   `yaml:"member-id-prefix"`
}

// LoginThrottle refuses authentication (429 with Retry-After) to a user
// name or a client address that failed MaxFailuresPerUser or
// MaxFailuresPerAddress times within Window; 0 turns that limit off.
type LoginThrottle struct {
	MaxFailuresPerUser    int      `yaml:"max-failures-per-user"`
	MaxFailuresPerAddress int      `yaml:"max-failures-per-address"`
	Window                Duration `yaml:"window"`
}

// RateLimit is the fixed-window admin mutation limit (docs/protocol.md §9.2).
type RateLimit struct {
	Enabled bool     `yaml:"enabled"`
	Window  Duration `yaml:"window"`
	// MaxRequests is the permits per window; ≤ 0 rejects every request.
	MaxRequests int `yaml:"max-requests"`
	// MaxGroupCreates is the group creations per window per principal,
	// whatever the group; 0 is no such limit.
	MaxGroupCreates int `yaml:"max-group-creates"`
}

// Store selects and tunes the metadata store (docs/protocol.md §8).
type Store struct {
	// Type is StoreMemory, StoreRedis or StoreJDBC.
	Type string `yaml:"type"`
	// KeyPrefix is concatenated literally in front of every Redis key (docs/protocol.md §8.3).
	KeyPrefix string  `yaml:"key-prefix"`
	JDBC      JDBC    `yaml:"jdbc"`
	Breaker   Breaker `yaml:"breaker"`
	// Timeout bounds one store call.
	Timeout Duration `yaml:"timeout"`
}

// JDBC configures the SQL store.
type JDBC struct {
	// URL is the database URL, e.g. postgres://user@host:5432/db; it may
	// carry a password and is redacted by Config.Redacted.
	URL string `yaml:"url"`
}

// Breaker is the circuit breaker around the store.
type Breaker struct {
	// FailureThreshold consecutive failures open the breaker.
	FailureThreshold int `yaml:"failure-threshold"`
	// OpenTimeout is how long the breaker stays open before a probe.
	OpenTimeout Duration `yaml:"open-timeout"`
}

// Audit selects the audit sink (docs/protocol.md §9.1).
type Audit struct {
	// Sink is AuditLog or AuditRedis.
	Sink string `yaml:"sink"`
	// RedisMaxEntries caps the Redis audit list; values below 1 mean 1.
	RedisMaxEntries int `yaml:"redis-max-entries"`
	// MemoryMaxEntries caps the events the log sink keeps in memory for
	// the monitoring views, over every group and stream (at most the last
	// 20 each); values below 20 mean 20.
	MemoryMaxEntries int `yaml:"memory-max-entries"`
}

// Redis is the Redis connection shared by the store, the audit sink and
// stream provisioning.
type Redis struct {
	Host     string `yaml:"host"`
	Port     int    `yaml:"port"`
	Database int    `yaml:"database"`
	Username string `yaml:"username"`
	Password string `yaml:"password"`
	TLS      bool   `yaml:"tls"`
	// ClusterNodes ("host:port") select Redis Cluster instead of Host/Port.
	// A scalar value is split at commas, so one placeholder can fill it.
	ClusterNodes []string `yaml:"cluster-nodes"`
}

// Coordination holds the group protocol timings (docs/protocol.md §4, §7, §8.2).
type Coordination struct {
	HeartbeatInterval    Duration    `yaml:"heartbeat-interval"`
	MemberLeaseTTL       Duration    `yaml:"member-lease-ttl"`
	RebalanceTimeout     Duration    `yaml:"rebalance-timeout"`
	StaleMemberRetention Duration    `yaml:"stale-member-retention"`
	EventLoop            EventLoop   `yaml:"event-loop"`
	StateMutex           StateMutex  `yaml:"state-mutex"`
	GroupCommit          GroupCommit `yaml:"group-commit"`
	// MaxQueuedHeartbeats bounds the heartbeats queued for one group;
	// beyond it a heartbeat is answered RETRY at once (load shedding).
	MaxQueuedHeartbeats int `yaml:"max-queued-heartbeats"`
	// History bounds each group's assignment history.
	History History `yaml:"history"`
}

// History bounds each group's assignment history (docs/observability.md,
// "Assignment history"): at most MaxEntries entries (0 keeps none), none
// older than MaxAge (0: no age limit), dropped when a change is recorded.
type History struct {
	MaxEntries int      `yaml:"max-entries"`
	MaxAge     Duration `yaml:"max-age"`
}

// Cluster is the coordinator cluster (docs/cluster.md): every coordinator
// on one store registers, and each group is owned by one of them.
type Cluster struct {
	// AdvertiseURL is where the other coordinators reach this one
	// (scheme://host:port); blank means the listen address, with the host
	// name when it listens on every interface, after https:// when
	// Server.TLS is enabled and http:// otherwise.
	AdvertiseURL string `yaml:"advertise-url"`
	// LeaseTTL is the registry lease: a coordinator that stops renewing
	// it (a crash, a cut from the store) loses its groups after it.
	LeaseTTL Duration `yaml:"lease-ttl"`
	// RenewInterval is the pause between renewals, which also refresh the
	// live coordinators; below half of LeaseTTL.
	RenewInterval Duration `yaml:"renew-interval"`
	// TLS is how this coordinator connects to the others whose advertise
	// URL is https.
	TLS ClusterTLS `yaml:"tls"`
}

// ClusterTLS secures the connections to the other coordinators whose
// advertised URL is https:// (docs/security.md, TLS).
type ClusterTLS struct {
	// CAFile is a PEM bundle of the CAs a peer's certificate must verify
	// against, read at start; empty means the system roots.
	CAFile string `yaml:"ca-file"`
	// CertFile and KeyFile, both or neither, are the client certificate
	// presented to peers that ask for one (mutual TLS between
	// coordinators); they are read again when they change.
	CertFile string `yaml:"cert-file"`
	KeyFile  string `yaml:"key-file"`
	// ServerName, when set, is the name every peer's certificate must be
	// valid for, instead of the host of the peer's advertised URL (a pod
	// IP, say): coordinators that share one certificate naming a Service
	// verify each other by that name. It is also the TLS server name
	// indication sent.
	ServerName string `yaml:"server-name"`
}

// EventLoop is the time-driven work (docs/protocol.md §7): each group ticks itself when its
// next event is due, polling every Interval while a migration waits on
// Redis; a sweep ticks every stored group every SweepInterval.
type EventLoop struct {
	Enabled       bool     `yaml:"enabled"`
	Interval      Duration `yaml:"interval"`
	SweepInterval Duration `yaml:"sweep-interval"`
}

// StateMutex is the Redis state mutex (docs/protocol.md §8.2). Read the effective values
// through TTL, AcquireTimeout and RetryInterval: a deprecated Duration key,
// when present, overrides its -ms sibling.
type StateMutex struct {
	Enabled          bool `yaml:"enabled"`
	TTLMs            int  `yaml:"ttl-ms"`
	AcquireTimeoutMs int  `yaml:"acquire-timeout-ms"`
	RetryIntervalMs  int  `yaml:"retry-interval-ms"`
	// Deprecated: use TTLMs. Overrides it when set (key `ttl`).
	DeprecatedTTL *Duration `yaml:"ttl,omitempty"`
	// Deprecated: use AcquireTimeoutMs. Overrides it when set (key `acquire-timeout`).
	DeprecatedAcquireTimeout *Duration `yaml:"acquire-timeout,omitempty"`
	// Deprecated: use RetryIntervalMs. Overrides it when set (key `retry-interval`).
	DeprecatedRetryInterval *Duration `yaml:"retry-interval,omitempty"`
}

// GroupCommit controls per-group write batching.
type GroupCommit struct {
	// Enabled batches queued requests into one commit; false runs one
	// critical section per request (the benchmark baseline).
	Enabled bool `yaml:"enabled"`
	// MaxBatch caps the requests in one commit.
	MaxBatch int `yaml:"max-batch"`
}

// Streams controls data-plane provisioning (docs/protocol.md §6.6).
type Streams struct {
	ProvisioningEnabled bool `yaml:"provisioning-enabled"`
}

// Defaults are used when Admin API requests omit a value.
type Defaults struct {
	InitialShardCount int `yaml:"initial-shard-count"`
	MaxShardCount     int `yaml:"max-shard-count"`
	// MaxGroups and MaxGroupsPerStream cap the groups a create may make,
	// in all and per stream prefix; 0 is no cap.
	MaxGroups          int `yaml:"max-groups"`
	MaxGroupsPerStream int `yaml:"max-groups-per-stream"`
	// Assignor is the assignor of a group created without one: count or
	// work (docs/assignment.md).
	Assignor string `yaml:"assignor"`
}

// Monitoring tunes the monitoring read path.
type Monitoring struct {
	// OffsetCacheTTL is how long computed stream offsets are reused; 0
	// disables the cache.
	OffsetCacheTTL Duration `yaml:"offset-cache-ttl"`
	// MemberSeries is how many members per group get per-member metric
	// series (member_* and consumer_shard_*), the first by member id; 0
	// turns them off.
	MemberSeries int `yaml:"member-series"`
	// ShardSeries is how many shards per group (the first by index) get
	// per-shard metric series (shard_*); 0, the default, turns them off.
	// At most metrics.MaxShardSeries (1024).
	ShardSeries int `yaml:"shard-series"`
	// GroupSeries is how many groups (the first by stream prefix, then
	// consumer group) get series of their own; the others are added up
	// into series labelled stream and group "{other}". 0 gives none; at
	// most metrics.MaxGroupSeries (10000); 1000 by default.
	GroupSeries int `yaml:"group-series"`
	// StatusSeries is how many shards per group whose consumption status
	// is not OK get a shard_status series (the lowest indexes first); 64
	// by default, at most metrics.MaxShardSeries (1024), 0 gives none.
	StatusSeries int `yaml:"status-series"`
	// MetricsAuth, when set, protects /metrics and /actuator/prometheus.
	MetricsAuth MetricsAuth `yaml:"metrics-auth"`
}

// Status holds the consumption status rules' window and thresholds
// (docs/observability.md, "Consumption status"; health.Config). A sample
// is one round of the lag refresher (every monitoring.offset-cache-ttl).
type Status struct {
	// Window is the samples kept per shard (1..100).
	Window int `yaml:"window"`
	// MinSamples is the consecutive samples a trend needs: LAGGING and
	// STALLED (1..window).
	MinSamples int `yaml:"min-samples"`
	// StoppedSamples is the consecutive samples without a holder after
	// which a shard with waiting entries is STOPPED (1..window).
	StoppedSamples int `yaml:"stopped-samples"`
	// LagThreshold: a lag at or below it is no LAGGING trend.
	LagThreshold int `yaml:"lag-threshold"`
}

// Scaling tunes the scaling signal desiredMembers
// (docs/observability.md, "Scaling signal"; health.ScalingConfig).
type Scaling struct {
	// TargetDrainTime is the time in which the backlog should drain.
	TargetDrainTime Duration `yaml:"target-drain-time"`
	// MinMembers and MaxMembers bound the signal (MaxMembers 0: only the
	// shard count does, which also wins over MinMembers).
	MinMembers int `yaml:"min-members"`
	MaxMembers int `yaml:"max-members"`
	// ScaleDownDelay is how long a lower recommendation must hold before
	// the signal falls; a rise is at once.
	ScaleDownDelay Duration `yaml:"scale-down-delay"`
	// FallbackRatePerMember is the entries per second one member is
	// assumed to consume before any was measured.
	FallbackRatePerMember int `yaml:"fallback-rate-per-member"`
}

// MetricsAuth is the optional credential of /metrics and
// /actuator/prometheus; with neither a bearer token nor a user name they
// stay open (Prometheus's default scrape configuration sends none).
type MetricsAuth struct {
	// BearerToken is accepted as "Authorization: Bearer <token>".
	BearerToken string `yaml:"bearer-token"`
	// Username and Password are accepted as HTTP Basic credentials.
	Username string `yaml:"username"`
	Password string `yaml:"password"`
}

// Health tunes the non-blocking Redis health probe (docs/protocol.md §10.2).
type Health struct {
	RedisTimeoutMs int `yaml:"redis-timeout-ms"`
	CacheTTLMs     int `yaml:"cache-ttl-ms"`
}

// Debug holds developer switches.
type Debug struct {
	// Pprof mounts net/http/pprof on the API server.
	Pprof bool `yaml:"pprof"`
	// BenchEndpoints adds the load harness's no-op heartbeat route
	// (<base-path>/bench/noop/…, cmd/coord-bench's ceiling scenario).
	BenchEndpoints bool `yaml:"bench-endpoints"`
}

// Default returns the docs/protocol.md §11 defaults (what an empty file yields) with ID set to
// the host name and the default port (defaultID), independent of the environment.
func Default() *Config {
	c := defaults()
	c.ID = defaultID(os.Hostname, c.Server.Address)
	return c
}

// defaults is the docs/protocol.md §11 tree with the seed's values and an empty ID. It is the
// base every file is decoded onto.
func defaults() *Config {
	return &Config{
		Server: Server{
			Address:           DefaultAddress,
			ReadHeaderTimeout: Duration(5 * time.Second), ReadTimeout: Duration(30 * time.Second),
			WriteTimeout: Duration(60 * time.Second), IdleTimeout: Duration(120 * time.Second), MaxHeaderBytes: 64 << 10,
			MaxConnectionsPerAddress: 1024,
			TLS:                      ServerTLS{MinVersion: TLSVersion12, ClientAuth: ClientAuthNone},
		},
		API: API{
			BasePath:           contract.BasePath,
			AdminUsername:      "admin",
			AdminPassword:      DefaultAdminPassword,
			TokenTTL:           Duration(7 * 24 * time.Hour),
			TokenLeeway:        Duration(30 * time.Second),
			SessionMaxLifetime: Duration(30 * 24 * time.Hour),
			LoginThrottle:      LoginThrottle{MaxFailuresPerUser: 5, MaxFailuresPerAddress: 20, Window: Duration(time.Minute)},
			RateLimit:          RateLimit{Enabled: true, Window: Duration(time.Minute), MaxRequests: 60, MaxGroupCreates: 60},
		},
		Store: Store{
			Type:      StoreMemory,
			KeyPrefix: "redis-stream:coord",
			Breaker:   Breaker{FailureThreshold: 5, OpenTimeout: Duration(5 * time.Second)},
			Timeout:   Duration(2 * time.Second),
		},
		Audit: Audit{Sink: AuditLog, RedisMaxEntries: 1000, MemoryMaxEntries: 10000},
		Redis: Redis{Host: "127.0.0.1", Port: 6379},
		Coordination: Coordination{
			HeartbeatInterval:    Duration(time.Second),
			MemberLeaseTTL:       Duration(10 * time.Second),
			RebalanceTimeout:     Duration(60 * time.Second),
			StaleMemberRetention: Duration(10 * time.Minute),
			EventLoop:            EventLoop{Enabled: true, Interval: Duration(time.Second), SweepInterval: Duration(time.Minute)},
			StateMutex:           StateMutex{Enabled: true, TTLMs: 30000, AcquireTimeoutMs: 5000, RetryIntervalMs: 100},
			GroupCommit:          GroupCommit{Enabled: true, MaxBatch: 1024},
			MaxQueuedHeartbeats:  1024,
			History:              History{MaxEntries: 128, MaxAge: Duration(24 * time.Hour)},
		},
		Cluster:    Cluster{LeaseTTL: Duration(5 * time.Second), RenewInterval: Duration(time.Second)},
		Defaults:   Defaults{InitialShardCount: 4, MaxShardCount: 4096, Assignor: "count"},
		Monitoring: Monitoring{OffsetCacheTTL: Duration(15 * time.Second), GroupSeries: 1000, StatusSeries: 64},
		Status:     Status{Window: 10, MinSamples: 5, StoppedSamples: 2},
		Scaling:    Scaling{TargetDrainTime: Duration(time.Minute), MinMembers: 1, ScaleDownDelay: Duration(5 * time.Minute), FallbackRatePerMember: 100},
		Health:     Health{RedisTimeoutMs: 300, CacheTTLMs: 1000},
	}
}

// defaultID is the id of a coordinator that sets none: the host name
// (FallbackID when unavailable), "-" and the port of its listen address,
// e.g. "myhost-8080". Coordinators on one host listen on different ports,
// so their ids differ, and a coordinator restarted on its port keeps its
// id. A port chosen at start (0), which is not known yet, gives the
// process id instead: unique on the host, but not kept across restarts.
func defaultID(hostname func() (string, error), address string) string {
	host := FallbackID
	if h, err := hostname(); err == nil && strings.TrimSpace(h) != "" {
		host = strings.TrimSpace(h)
	}
	port := 0
	if _, p, err := net.SplitHostPort(address); err == nil {
		port, _ = net.LookupPort("tcp", p)
	}
	if port == 0 {
		port = os.Getpid()
	}
	return host + "-" + strconv.Itoa(port)
}

// RedisRequired reports whether Redis is a required dependency (docs/protocol.md §10.2):
// Redis store, Redis audit sink or stream provisioning.
func (c *Config) RedisRequired() bool {
	return c.Store.Type == StoreRedis || c.Audit.Sink == AuditRedis || c.Streams.ProvisioningEnabled
}

// RedisAddr is "host:port" for the single-node Redis client (IPv6 hosts are
// bracketed).
func (c *Config) RedisAddr() string {
	return net.JoinHostPort(c.Redis.Host, strconv.Itoa(c.Redis.Port))
}

// TTL is the mutex lease: `ttl` when set, else `ttl-ms`.
func (m StateMutex) TTL() time.Duration {
	return overrideMs(m.DeprecatedTTL, m.TTLMs)
}

// AcquireTimeout bounds one acquire: `acquire-timeout` when set, else
// `acquire-timeout-ms`.
func (m StateMutex) AcquireTimeout() time.Duration {
	return overrideMs(m.DeprecatedAcquireTimeout, m.AcquireTimeoutMs)
}

// RetryInterval is the pause between acquire attempts: `retry-interval` when
// set, else `retry-interval-ms`.
func (m StateMutex) RetryInterval() time.Duration {
	return overrideMs(m.DeprecatedRetryInterval, m.RetryIntervalMs)
}

func overrideMs(d *Duration, ms int) time.Duration {
	if d != nil {
		return d.Duration()
	}
	return time.Duration(ms) * time.Millisecond
}

// RedisTimeout bounds one health PING.
func (h Health) RedisTimeout() time.Duration {
	return time.Duration(h.RedisTimeoutMs) * time.Millisecond
}

// CacheTTL is how long a health PING result is reused.
func (h Health) CacheTTL() time.Duration {
	return time.Duration(h.CacheTTLMs) * time.Millisecond
}

// redactedMark replaces every non-empty secret in Redacted output.
const redactedMark = "******"

// Redacted returns a deep copy whose passwords, token secret, metrics
// bearer token and JDBC URL password are replaced by "******" (empty values stay empty, so an unset
// secret remains visible as such).
func (c *Config) Redacted() *Config {
	r := *c
	r.API.AdminPassword = redact(c.API.AdminPassword)
	r.API.TokenSecret = redact(c.API.TokenSecret)
	r.Redis.Password = redact(c.Redis.Password)
	r.Monitoring.MetricsAuth.BearerToken = redact(c.Monitoring.MetricsAuth.BearerToken)
	r.Monitoring.MetricsAuth.Password = redact(c.Monitoring.MetricsAuth.Password)
	r.Redis.ClusterNodes = append([]string(nil), c.Redis.ClusterNodes...)
	r.API.Users = nil
	for _, u := range c.API.Users {
		u.Password = redact(u.Password)
		u.Roles, u.Grants = slices.Clone(u.Roles), slices.Clone(u.Grants)
		r.API.Users = append(r.API.Users, u)
	}
	r.Store.JDBC.URL = redactURL(c.Store.JDBC.URL)
	return &r
}

// redactURL masks the user-info password and any query parameter whose name
// mentions a password or secret. URLs it cannot inspect (unparsable, or
// opaque like "jdbc:postgresql://…") are masked whole.
func redactURL(s string) string {
	u, err := url.Parse(s)
	if err != nil || u.Opaque != "" {
		return redact(s)
	}
	if u.RawQuery != "" {
		q := u.Query()
		for k := range q {
			if lk := strings.ToLower(k); strings.Contains(lk, "pass") || strings.Contains(lk, "secret") {
				q.Set(k, redactedMark)
			}
		}
		u.RawQuery = q.Encode()
	}
	return u.Redacted()
}

func redact(s string) string {
	if s == "" {
		return ""
	}
	return redactedMark
}

// String renders the redacted configuration as a YAML file (with the
// `coordinator:` root) that Parse accepts; it never contains secrets.
func (c *Config) String() string {
	out, err := yaml.Marshal(map[string]*Config{"coordinator": c.Redacted()})
	if err != nil {
		return "config: " + err.Error()
	}
	return string(out)
}
