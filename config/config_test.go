package config

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"strconv"
	"strings"
	"testing"
	"time"
)

// env is an Option resolving placeholders from vars only.
func env(vars map[string]string) Option {
	return WithLookupEnv(func(name string) (string, bool) {
		v, ok := vars[name]
		return v, ok
	})
}

// host pins the host name used for an empty coordinator.id.
func host(name string, err error) Option {
	return func(o *options) { o.hostname = func() (string, error) { return name, err } }
}

func mustParse(t *testing.T, doc string, opts ...Option) *Config {
	t.Helper()
	c, err := Parse([]byte(doc), append([]Option{env(nil), host("test-host", nil)}, opts...)...)
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, doc)
	}
	return c
}

func parseErr(t *testing.T, doc string, opts ...Option) error {
	t.Helper()
	_, err := Parse([]byte(doc), append([]Option{env(nil), host("test-host", nil)}, opts...)...)
	if err == nil {
		t.Fatalf("Parse succeeded, want an error\n%s", doc)
	}
	return err
}

func d(s string) Duration {
	v, err := time.ParseDuration(s)
	if err != nil {
		panic(err)
	}
	return Duration(v)
}

// seedDefaults is the docs/protocol.md §11 tree with the seed's values, written out by hand,
// except that the server listens on loopback only (docs/protocol.md §11 has ":8080").
func seedDefaults() *Config {
	return &Config{
		ID: "test-host-8080",
		Server: Server{
			Address: "127.0.0.1:8080", ReadHeaderTimeout: d("5s"), ReadTimeout: d("30s"), WriteTimeout: d("60s"),
			IdleTimeout: d("120s"), MaxHeaderBytes: 65536, MaxConnectionsPerAddress: 1024,
			TLS: ServerTLS{MinVersion: "1.2", ClientAuth: "none"},
		},
		API: API{
			BasePath: "/coord/v1", AdminUsername: "admin", AdminPassword: "password",
			TokenTTL:           d("168h"),
			TokenLeeway:        d("30s"),
			SessionMaxLifetime: d("720h"),
			LoginThrottle:      LoginThrottle{MaxFailuresPerUser: 5, MaxFailuresPerAddress: 20, Window: d("1m")},
			RateLimit:          RateLimit{Enabled: true, Window: d("1m"), MaxRequests: 60, MaxGroupCreates: 60},
		},
		Store: Store{
			Type: "memory", KeyPrefix: "redis-stream:coord",
			Breaker: Breaker{FailureThreshold: 5, OpenTimeout: d("5s")},
			Timeout: d("2s"),
		},
		Audit: Audit{Sink: "log", RedisMaxEntries: 1000, MemoryMaxEntries: 10000},
		Redis: Redis{Host: "127.0.0.1", Port: 6379},
		Coordination: Coordination{
			HeartbeatInterval: d("1s"), MemberLeaseTTL: d("10s"), RebalanceTimeout: d("60s"),
			StaleMemberRetention: d("10m"),
			EventLoop:            EventLoop{Enabled: true, Interval: d("1s"), SweepInterval: d("1m")},
			StateMutex:           StateMutex{Enabled: true, TTLMs: 30000, AcquireTimeoutMs: 5000, RetryIntervalMs: 100},
			GroupCommit:          GroupCommit{Enabled: true, MaxBatch: 1024},
			MaxQueuedHeartbeats:  1024,
			History:              History{MaxEntries: 128, MaxAge: d("24h")},
		},
		Cluster:    Cluster{LeaseTTL: d("5s"), RenewInterval: d("1s")},
		Defaults:   Defaults{InitialShardCount: 4, MaxShardCount: 4096, Assignor: "count"},
		Monitoring: Monitoring{OffsetCacheTTL: d("15s"), GroupSeries: 1000, StatusSeries: 64},
		Status:     Status{Window: 10, MinSamples: 5, StoppedSamples: 2},
		Scaling:    Scaling{TargetDrainTime: d("60s"), MinMembers: 1, ScaleDownDelay: d("5m"), FallbackRatePerMember: 100},
		Health:     Health{RedisTimeoutMs: 300, CacheTTLMs: 1000},
	}
}

func TestDefaultsEqualSeedTree(t *testing.T) {
	want := seedDefaults()
	for _, doc := range []string{"", "# only a comment\n", "coordinator:\n", "coordinator: {}\n", "coordinator:\n  api:\n  store: ~\n"} {
		if got := mustParse(t, doc); !reflect.DeepEqual(got, want) {
			t.Errorf("Parse(%q) =\n%s\nwant\n%s", doc, got, want)
		}
	}
	embedded, err := Load("", env(nil), host("test-host", nil))
	if err != nil {
		t.Fatalf("Load(\"\"): %v", err)
	}
	if !reflect.DeepEqual(embedded, want) {
		t.Errorf("embedded default.yaml =\n%s\nwant\n%s", embedded, want)
	}
	def := Default()
	def.ID = "test-host-8080"
	if !reflect.DeepEqual(def, want) {
		t.Errorf("Default() =\n%s\nwant\n%s", def, want)
	}
	if err := want.Validate(); err != nil {
		t.Errorf("defaults do not validate: %v", err)
	}
	if c := want; c.RedisRequired() || c.RedisAddr() != "127.0.0.1:6379" ||
		c.Coordination.StateMutex.TTL() != 30*time.Second ||
		c.Coordination.StateMutex.AcquireTimeout() != 5*time.Second ||
		c.Coordination.StateMutex.RetryInterval() != 100*time.Millisecond ||
		c.Health.RedisTimeout() != 300*time.Millisecond || c.Health.CacheTTL() != time.Second {
		t.Errorf("helpers on defaults disagree with docs/protocol.md §11: %+v", c)
	}
}

func TestEmbeddedDefaultReadsEnvironment(t *testing.T) {
	c, err := Load("", env(map[string]string{
		"COORDINATOR_ID": "coord-7", "REDIS_HOST": "redis.internal", "REDIS_PORT": "7000",
		"REDIS_TLS": "true", "COORDINATOR_TOKEN_SECRET": "s3cret",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if c.ID != "coord-7" || c.RedisAddr() != "redis.internal:7000" || !c.Redis.TLS || c.API.TokenSecret != "s3cret" {
		t.Errorf("env not applied: id=%q addr=%q tls=%v secret=%q", c.ID, c.RedisAddr(), c.Redis.TLS, c.API.TokenSecret)
	}
}

func TestSeedExample(t *testing.T) {
	data, err := os.ReadFile("testdata/seed-example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	c := mustParse(t, string(data))
	if c.Store.Type != StoreRedis || c.Audit.Sink != AuditRedis || !c.RedisRequired() {
		t.Errorf("store=%q sink=%q required=%v", c.Store.Type, c.Audit.Sink, c.RedisRequired())
	}
	wantUsers := []User{{Username: "admin", Roles: []string{"WRITE"}}, {Username: "grafana", Roles: []string{"READ"}}}
	if !reflect.DeepEqual(c.API.Users, wantUsers) {
		t.Errorf("users = %+v, want %+v", c.API.Users, wantUsers)
	}
	// Every key the seed example shares with the default tree has its default.
	want := seedDefaults()
	want.Store.Type, want.Audit.Sink, want.API.Users = StoreRedis, AuditRedis, wantUsers
	if !reflect.DeepEqual(c, want) {
		t.Errorf("seed example =\n%s\nwant\n%s", c, want)
	}

	err = c.Validate()
	for _, key := range []string{"coordinator.api.users[0].password", "coordinator.api.users[1].password"} {
		if err == nil || !strings.Contains(err.Error(), key+": must not be blank") {
			t.Errorf("Validate() = %v, want it to name %s", err, key)
		}
	}
	path := filepath.Join("testdata", "seed-example.yaml")
	withPasswords := env(map[string]string{"COORDINATOR_WRITE_PASSWORD": "w", "COORDINATOR_READ_PASSWORD": "r"})
	c, err = Load(path, withPasswords)
	if err != nil {
		t.Fatalf("Load(seed example) with passwords: %v", err)
	}
	if c.API.Users[0].Password != "w" || c.API.Users[1].Password != "r" {
		t.Errorf("passwords = %q, %q", c.API.Users[0].Password, c.API.Users[1].Password)
	}
}

func TestExpand(t *testing.T) {
	vars := map[string]string{"SET": "value", "EMPTY": "", "PORT": "7000", "WITH_BRACES": "${SET}"}
	lookup := func(n string) (string, bool) { v, ok := vars[n]; return v, ok }
	for _, tc := range []struct{ in, want string }{
		{"plain", "plain"},
		{"${SET}", "value"},
		{"${SET:default}", "value"},
		{"${EMPTY:default}", ""},
		{"${UNSET:default}", "default"},
		{"${UNSET:}", ""},
		{"${UNSET}", ""},
		{"${UNSET:a:b}", "a:b"},
		{"${UNSET:redis://h:6379/0}", "redis://h:6379/0"},
		{"${UNSET:${PORT:1}}", "7000"},
		{"${UNSET:${ALSO_UNSET:inner}}", "inner"},
		{"host-${SET}-${UNSET:x}.local", "host-value-x.local"},
		{"${WITH_BRACES}", "${SET}"},
		{"$100 and {braces}", "$100 and {braces}"},
	} {
		got, err := expand(tc.in, lookup)
		if err != nil || got != tc.want {
			t.Errorf("expand(%q) = %q, %v; want %q", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"${UNSET", "${UNSET:${X}", "${}", "${:x}", "${A B}"} {
		if got, err := expand(in, lookup); err == nil {
			t.Errorf("expand(%q) = %q, want an error", in, got)
		}
	}
}

func TestPlaceholdersAreTypedAfterExpansion(t *testing.T) {
	doc := `coordinator:
  redis:
    host: ${REDIS_HOST:127.0.0.1}
    port: ${REDIS_PORT:6379}
    database: ${REDIS_DATABASE:0}
    username: ${REDIS_USERNAME:}
    tls: ${REDIS_TLS:false}
    cluster-nodes: ${REDIS_NODES:}
  api:
    admin-password: "${PW:007}"
    token-secret: ${SECRET:12345}
`
	c := mustParse(t, doc)
	if c.Redis.Port != 6379 || c.Redis.Database != 0 || c.Redis.Username != "" || c.Redis.TLS ||
		c.Redis.ClusterNodes != nil || c.API.AdminPassword != "007" || c.API.TokenSecret != "12345" {
		t.Errorf("defaults: %+v %+v", c.Redis, c.API)
	}
	c = mustParse(t, doc, env(map[string]string{
		"REDIS_PORT": "7001", "REDIS_DATABASE": "3", "REDIS_USERNAME": "u", "REDIS_TLS": "true",
		"REDIS_NODES": "a:1, b:2,,c:3",
	}))
	if c.Redis.Port != 7001 || c.Redis.Database != 3 || c.Redis.Username != "u" || !c.Redis.TLS ||
		!reflect.DeepEqual(c.Redis.ClusterNodes, []string{"a:1", "b:2", "c:3"}) {
		t.Errorf("from env: %+v", c.Redis)
	}
	err := parseErr(t, doc, env(map[string]string{"REDIS_PORT": "abc"}))
	if got, want := err.Error(), `coordinator.redis.port: expected an integer, got "abc"`; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
	err = parseErr(t, doc, env(map[string]string{"REDIS_TLS": "maybe"}))
	if got, want := err.Error(), `coordinator.redis.tls: expected true or false, got "maybe"`; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
	err = parseErr(t, "coordinator:\n  redis:\n    host: ${BROKEN\n")
	if !strings.HasPrefix(err.Error(), "coordinator.redis.host: unterminated placeholder") {
		t.Errorf("error = %q", err)
	}
}

func TestParseDuration(t *testing.T) {
	for _, tc := range []struct {
		in   string
		want time.Duration
	}{
		{"500ms", 500 * time.Millisecond},
		{"3s", 3 * time.Second},
		{"10m", 10 * time.Minute},
		{"1h30m", 90 * time.Minute},
		{"0", 0},
		{" 2s ", 2 * time.Second},
		{"7d", 7 * 24 * time.Hour},
		{"1d", 24 * time.Hour},
		{"1d12h", 36 * time.Hour},
		{"PT3S", 3 * time.Second},
		{"PT1M", time.Minute},
		{"P7D", 7 * 24 * time.Hour},
		{"PT0.5S", 500 * time.Millisecond},
		{"PT0,25S", 250 * time.Millisecond},
		{"P1DT2H3M4.000000005S", 26*time.Hour + 3*time.Minute + 4*time.Second + 5},
		{"pt15s", 15 * time.Second},
		{"-PT1S", -time.Second},
		{"PT-0.5S", -500 * time.Millisecond},
	} {
		got, err := ParseDuration(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseDuration(%q) = %v, %v; want %v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"", "abc", "60", "1.5", "P", "PT", "P1Y", "P1W", "PT1.5M", "1.5d", "d", "7days", "P1DT", "P106752D", "106752d"} {
		if got, err := ParseDuration(in); err == nil {
			t.Errorf("ParseDuration(%q) = %v, want an error", in, got)
		}
	}
	if _, err := ParseDuration("60"); err == nil || !strings.Contains(err.Error(), "missing unit") {
		t.Errorf("bare number error = %v, want a missing-unit hint", err)
	}
}

func TestDurationKeysAcceptEveryForm(t *testing.T) {
	c := mustParse(t, `coordinator:
  api: {token-ttl: P7D, rate-limit: {window: PT1M}}
  coordination: {heartbeat-interval: 500ms, member-lease-ttl: PT0.5S, stale-member-retention: 2d, event-loop: {interval: PT3S}}
`)
	if c.API.TokenTTL != d("168h") || c.API.RateLimit.Window != d("1m") || c.Coordination.HeartbeatInterval != d("500ms") ||
		c.Coordination.MemberLeaseTTL != d("500ms") || c.Coordination.StaleMemberRetention != d("48h") ||
		c.Coordination.EventLoop.Interval != d("3s") {
		t.Errorf("durations: %+v %+v", c.API, c.Coordination)
	}
	err := parseErr(t, "coordinator:\n  api:\n    rate-limit:\n      window: abc\n")
	if got, want := err.Error(), `coordinator.api.rate-limit.window: invalid duration "abc"`; got != want {
		t.Errorf("error = %q, want %q", got, want)
	}
	err = parseErr(t, "coordinator:\n  store:\n    timeout: [1s]\n")
	if !strings.HasPrefix(err.Error(), "coordinator.store.timeout: expected a duration") {
		t.Errorf("error = %q", err)
	}
}

func TestUnknownKeysNameTheirPath(t *testing.T) {
	for _, tc := range []struct{ doc, key string }{
		{"spring: {}\n", "spring"},
		{"coordinator:\n  colour: red\n", "coordinator.colour"},
		{"coordinator:\n  api:\n    rate-limit:\n      burst: 3\n", "coordinator.api.rate-limit.burst"},
		{"coordinator:\n  api:\n    users:\n      - {username: a, password: b}\n      - {username: c, email: d}\n", "coordinator.api.users[1].email"},
		{"coordinator:\n  coordination:\n    state-mutex:\n      ttlMs: 5\n", "coordinator.coordination.state-mutex.ttlMs"},
	} {
		err := parseErr(t, tc.doc)
		var ke *KeyError
		if !errors.Is(err, ErrUnknownKey) || !errors.As(err, &ke) || ke.Key != tc.key || err.Error() != tc.key+": unknown key" {
			t.Errorf("Parse(%q) error = %v, want unknown key %s", tc.doc, err, tc.key)
		}
	}
}

func TestAdminAPIOnlyKeysRejectedAnywhere(t *testing.T) {
	for _, tc := range []struct{ doc, key string }{
		{"streamPrefix: orders\n", "streamPrefix"},
		{"coordinator:\n  stream-prefix: orders\n", "coordinator.stream-prefix"},
		{"coordinator:\n  store:\n    consumerGroup: g\n", "coordinator.store.consumerGroup"},
		{"coordinator:\n  defaults:\n    shard-count: 8\n", "coordinator.defaults.shard-count"},
		{"coordinator:\n  groups:\n    orders:\n      shardCount: 8\n", "coordinator.groups.orders.shardCount"},
		{"coordinator:\n  api:\n    users:\n      - {username: a, consumer_group: g}\n", "coordinator.api.users[0].consumer_group"},
		{"app:\n  - consumer-group: g\n", "app[0].consumer-group"},
	} {
		err := parseErr(t, tc.doc)
		var ke *KeyError
		if !errors.Is(err, ErrAdminAPIOnly) || !errors.As(err, &ke) || ke.Key != tc.key ||
			!strings.Contains(err.Error(), "Admin API") {
			t.Errorf("Parse(%q) error = %v, want Admin-API-only at %s", tc.doc, err, tc.key)
		}
	}
	c := mustParse(t, "coordinator:\n  defaults:\n    initial-shard-count: 8\n    max-shard-count: 64\n")
	if c.Defaults != (Defaults{InitialShardCount: 8, MaxShardCount: 64, Assignor: "count"}) {
		t.Errorf("defaults = %+v", c.Defaults)
	}
}

func TestParseStructuralErrors(t *testing.T) {
	for _, tc := range []struct{ doc, want string }{
		{"coordinator: [1]\n", "coordinator: expected a mapping, got a list"},
		{"- a\n", "expected a mapping, got a list"},
		{"coordinator:\n  redis:\n    port: [1]\n", "coordinator.redis.port: expected an integer, got a list"},
		{"coordinator:\n  redis:\n    port: 1.5\n", `coordinator.redis.port: expected an integer, got "1.5"`},
		{"coordinator:\n  server:\n    address: {a: b}\n", "coordinator.server.address: expected a string, got a mapping"},
		{"coordinator:\n  api:\n    users: admin\n", `coordinator.api.users: expected a list, got "admin"`},
		{"coordinator:\n  api:\n    users: [{username: a, roles: {x: y}}]\n", "coordinator.api.users[0].roles: expected a list, got a mapping"},
		{"coordinator:\n  store:\n    type: redis\n    type: memory\n", "coordinator.store.type: duplicate key"},
		{"coordinator: {a: 1\n", "invalid YAML"},
		{"coordinator:\n  server:\n    address: x\n   store:\n    type: redis\n", "invalid YAML: yaml: line 4: "},
		{"coordinator: {}\n---\ncoordinator: {}\n", "invalid YAML: more than one document"},
	} {
		if err := parseErr(t, tc.doc); !strings.HasPrefix(err.Error(), tc.want) {
			t.Errorf("Parse(%q) error = %q, want prefix %q", tc.doc, err, tc.want)
		}
	}
}

func TestAnchorsAndAliases(t *testing.T) {
	c := mustParse(t, "coordinator:\n  coordination:\n    heartbeat-interval: &hb 2s\n    event-loop: {interval: *hb}\n")
	if c.Coordination.EventLoop.Interval != d("2s") {
		t.Errorf("interval = %v", c.Coordination.EventLoop.Interval)
	}
}

func TestDeprecatedMutexDurationsOverride(t *testing.T) {
	c := mustParse(t, "coordinator:\n  coordination:\n    state-mutex: {ttl-ms: 1000, ttl: 10s, acquire-timeout: PT2S, retry-interval: 50ms}\n")
	m := c.Coordination.StateMutex
	if m.TTL() != 10*time.Second || m.AcquireTimeout() != 2*time.Second || m.RetryInterval() != 50*time.Millisecond {
		t.Errorf("mutex = %v %v %v", m.TTL(), m.AcquireTimeout(), m.RetryInterval())
	}
	c = mustParse(t, "coordinator:\n  coordination:\n    state-mutex: {ttl-ms: 1000, ttl: ~}\n")
	if c.Coordination.StateMutex.TTL() != time.Second {
		t.Errorf("null ttl should not override: %v", c.Coordination.StateMutex.TTL())
	}
	c = mustParse(t, "coordinator:\n  coordination:\n    state-mutex: {ttl: 0s, retry-interval-ms: 0}\n")
	err := c.Validate()
	for _, key := range []string{"coordinator.coordination.state-mutex.ttl:", "coordinator.coordination.state-mutex.retry-interval-ms:"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("Validate() = %v, want it to name %s", err, key)
		}
	}
}

func TestValidateNamesKeys(t *testing.T) {
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		key    string
	}{
		{"store type", func(c *Config) { c.Store.Type = "mongo" }, "coordinator.store.type"},
		{"jdbc url", func(c *Config) { c.Store.Type = StoreJDBC }, "coordinator.store.jdbc.url"},
		{"audit sink", func(c *Config) { c.Audit.Sink = "kafka" }, "coordinator.audit.sink"},
		{"lease ttl", func(c *Config) { c.Coordination.MemberLeaseTTL = 0 }, "coordinator.coordination.member-lease-ttl"},
		{"heartbeat", func(c *Config) { c.Coordination.HeartbeatInterval = 0 }, "coordinator.coordination.heartbeat-interval"},
		{"rebalance", func(c *Config) { c.Coordination.RebalanceTimeout = 0 }, "coordinator.coordination.rebalance-timeout"},
		{"retention", func(c *Config) { c.Coordination.StaleMemberRetention = -1 }, "coordinator.coordination.stale-member-retention"},
		{"event loop", func(c *Config) { c.Coordination.EventLoop.Interval = 0 }, "coordinator.coordination.event-loop.interval"},
		{"sweep", func(c *Config) { c.Coordination.EventLoop.SweepInterval = 0 }, "coordinator.coordination.event-loop.sweep-interval"},
		{"mutex ttl", func(c *Config) { c.Coordination.StateMutex.TTLMs = 0 }, "coordinator.coordination.state-mutex.ttl-ms"},
		{"mutex acquire", func(c *Config) { c.Coordination.StateMutex.AcquireTimeoutMs = -1 }, "coordinator.coordination.state-mutex.acquire-timeout-ms"},
		{"max batch", func(c *Config) { c.Coordination.GroupCommit.MaxBatch = 0 }, "coordinator.coordination.group-commit.max-batch"},
		{"max queued heartbeats", func(c *Config) { c.Coordination.MaxQueuedHeartbeats = 0 }, "coordinator.coordination.max-queued-heartbeats"},
		{"cluster lease", func(c *Config) { c.Cluster.LeaseTTL = 0 }, "coordinator.cluster.lease-ttl"},
		{"cluster renewal", func(c *Config) { c.Cluster.RenewInterval = c.Cluster.LeaseTTL }, "coordinator.cluster.renew-interval"},
		{"cluster url", func(c *Config) { c.Cluster.AdvertiseURL = "10.0.0.1:8080" }, "coordinator.cluster.advertise-url"},
		{"initial zero", func(c *Config) { c.Defaults.InitialShardCount = 0 }, "coordinator.defaults.initial-shard-count"},
		{"initial above max", func(c *Config) { c.Defaults.InitialShardCount = 5000 }, "coordinator.defaults.initial-shard-count"},
		{"max zero", func(c *Config) { c.Defaults.MaxShardCount = 0 }, "coordinator.defaults.max-shard-count"},
		{"port zero", func(c *Config) { c.Redis.Port = 0 }, "coordinator.redis.port"},
		{"port high", func(c *Config) { c.Redis.Port = 65536 }, "coordinator.redis.port"},
		{"database", func(c *Config) { c.Redis.Database = -1 }, "coordinator.redis.database"},
		{"redis host", func(c *Config) { c.Audit.Sink = AuditRedis; c.Redis.Host = " " }, "coordinator.redis.host"},
		{"cluster node", func(c *Config) { c.Redis.ClusterNodes = []string{"a:1", "nohost"} }, "coordinator.redis.cluster-nodes[1]"},
		{"role", func(c *Config) { c.API.Users = []User{{Username: "u", Password: "p", Roles: []string{"READ", "read"}}} }, "coordinator.api.users[0].roles[1]"},
		{"blank username", func(c *Config) { c.API.Users = []User{{Username: " ", Password: "p"}} }, "coordinator.api.users[0].username"},
		{"blank password", func(c *Config) { c.API.Users = []User{{Username: "u"}} }, "coordinator.api.users[0].password"},
		{"duplicate user", func(c *Config) { c.API.Users = []User{{Username: "u", Password: "p"}, {Username: "u", Password: "q"}} }, "coordinator.api.users[1].username"},
		{"admin password", func(c *Config) { c.API.AdminPassword = "" }, "coordinator.api.admin-password"},
		{"admin username", func(c *Config) { c.API.AdminUsername = "" }, "coordinator.api.admin-username"},
		{"token ttl", func(c *Config) { c.API.TokenTTL = 0 }, "coordinator.api.token-ttl"},
		{"window", func(c *Config) { c.API.RateLimit.Window = 0 }, "coordinator.api.rate-limit.window"},
		{"base path", func(c *Config) { c.API.BasePath = "coord" }, "coordinator.api.base-path"},
		{"root base path", func(c *Config) { c.API.BasePath = "/" }, "coordinator.api.base-path"},
		{"address", func(c *Config) { c.Server.Address = "8080" }, "coordinator.server.address"},
		{"key prefix", func(c *Config) { c.Store.KeyPrefix = "" }, "coordinator.store.key-prefix"},
		{"breaker threshold", func(c *Config) { c.Store.Breaker.FailureThreshold = 0 }, "coordinator.store.breaker.failure-threshold"},
		{"breaker threshold above uint32", func(c *Config) { c.Store.Breaker.FailureThreshold = math.MaxUint32 + 1 }, "coordinator.store.breaker.failure-threshold"},
		{"breaker timeout", func(c *Config) { c.Store.Breaker.OpenTimeout = 0 }, "coordinator.store.breaker.open-timeout"},
		{"store timeout", func(c *Config) { c.Store.Timeout = 0 }, "coordinator.store.timeout"},
		{"offset cache", func(c *Config) { c.Monitoring.OffsetCacheTTL = -1 }, "coordinator.monitoring.offset-cache-ttl"},
		{"metrics user without password", func(c *Config) { c.Monitoring.MetricsAuth.Username = "prom" }, "coordinator.monitoring.metrics-auth.password"},
		{"metrics password without user", func(c *Config) { c.Monitoring.MetricsAuth.Password = "pw" }, "coordinator.monitoring.metrics-auth.username"},
		{"metrics token with a space", func(c *Config) { c.Monitoring.MetricsAuth.BearerToken = "a b" }, "coordinator.monitoring.metrics-auth.bearer-token"},
		{"shard series negative", func(c *Config) { c.Monitoring.ShardSeries = -1 }, "coordinator.monitoring.shard-series"},
		{"shard series above the cap", func(c *Config) { c.Monitoring.ShardSeries = 1025 }, "coordinator.monitoring.shard-series"},
		{"group series negative", func(c *Config) { c.Monitoring.GroupSeries = -1 }, "coordinator.monitoring.group-series"},
		{"group series above the cap", func(c *Config) { c.Monitoring.GroupSeries = 10001 }, "coordinator.monitoring.group-series"},
		{"member series", func(c *Config) { c.Monitoring.MemberSeries = -1 }, "coordinator.monitoring.member-series"},
		{"status series above the cap", func(c *Config) { c.Monitoring.StatusSeries = 1025 }, "coordinator.monitoring.status-series"},
		{"status window", func(c *Config) { c.Status.Window = 0 }, "coordinator.status.window"},
		{"status min samples beyond the window", func(c *Config) { c.Status.MinSamples = 11 }, "coordinator.status.min-samples"},
		{"status stopped samples", func(c *Config) { c.Status.StoppedSamples = 0 }, "coordinator.status.stopped-samples"},
		{"status lag threshold", func(c *Config) { c.Status.LagThreshold = -1 }, "coordinator.status.lag-threshold"},
		{"scaling target drain time", func(c *Config) { c.Scaling.TargetDrainTime = 0 }, "coordinator.scaling.target-drain-time"},
		{"scaling min members", func(c *Config) { c.Scaling.MinMembers = -1 }, "coordinator.scaling.min-members"},
		{"scaling max below min", func(c *Config) { c.Scaling.MinMembers, c.Scaling.MaxMembers = 4, 2 }, "coordinator.scaling.max-members"},
		{"scaling scale-down delay", func(c *Config) { c.Scaling.ScaleDownDelay = -1 }, "coordinator.scaling.scale-down-delay"},
		{"scaling fallback rate", func(c *Config) { c.Scaling.FallbackRatePerMember = 0 }, "coordinator.scaling.fallback-rate-per-member"},
		{"health timeout", func(c *Config) { c.Health.RedisTimeoutMs = 0 }, "coordinator.health.redis-timeout-ms"},
		{"health cache", func(c *Config) { c.Health.CacheTTLMs = -1 }, "coordinator.health.cache-ttl-ms"},
		{"id", func(c *Config) { c.ID = "" }, "coordinator.id"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := seedDefaults()
			tc.mutate(c)
			err := c.Validate()
			var ke *KeyError
			if err == nil || !errors.As(err, &ke) || ke.Key != tc.key || strings.Count(err.Error(), "\n") != 0 {
				t.Errorf("Validate() = %v, want exactly one error naming %s", err, tc.key)
			}
		})
	}

	c := seedDefaults()
	c.API.RateLimit.MaxRequests = -1
	c.Store.Type, c.Store.JDBC.URL = StoreJDBC, "postgres://u@h:5432/db"
	c.API.Users = []User{{Username: "g", Password: "p", Roles: []string{"READ", "WRITE", "MEMBER", "ADMIN", "MONITOR"}}}
	c.API.AdminPassword = "" // not needed once users are listed
	c.Redis.ClusterNodes = []string{"a:7000", "[::1]:7001"}
	if err := c.Validate(); err != nil {
		t.Errorf("valid config rejected: %v", err)
	}

	c = seedDefaults()
	c.Store.Type, c.Audit.Sink = "x", "y"
	if err := c.Validate(); err == nil || strings.Count(err.Error(), "\n") != 1 {
		t.Errorf("Validate() = %v, want both errors joined", err)
	}
}

func TestLoadValidatesAndNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "coordinator.yaml")
	if err := os.WriteFile(path, []byte("coordinator:\n  store:\n    type: jdbc\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path, env(nil))
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "coordinator.store.jdbc.url") {
		t.Errorf("Load error = %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.yaml")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Load(missing) error = %v", err)
	}
}

// An unset coordinator.id is the host name and the listen port, so that
// coordinators on one host differ and each keeps its id on its port; an
// ephemeral port (0) gives the process id instead.
func TestCoordinatorID(t *testing.T) {
	for _, tc := range []struct {
		doc  string
		opts []Option
		want string
	}{
		{"", []Option{host("box-1", nil)}, "box-1-8080"},
		{"coordinator: {server: {address: ':8081'}}", []Option{host("box-1", nil)}, "box-1-8081"},
		{"coordinator: {server: {address: '[::1]:9000'}}", []Option{host(" box-1 ", nil)}, "box-1-9000"},
		{"", []Option{env(map[string]string{"COORDINATOR_SERVER_ADDRESS": "0.0.0.0:8082"}), host("box-1", nil)}, "box-1-8082"},
		{"coordinator: {server: {address: '127.0.0.1:0'}}", []Option{host("box-1", nil)}, "box-1-" + strconv.Itoa(os.Getpid())},
		{"", []Option{host("", errors.New("no host"))}, FallbackID + "-8080"},
		{"coordinator: {id: '${COORDINATOR_ID:}'}", []Option{env(map[string]string{"COORDINATOR_ID": "c-9"})}, "c-9"},
		{"coordinator: {id: fixed}", nil, "fixed"},
	} {
		if c := mustParse(t, tc.doc, tc.opts...); c.ID != tc.want {
			t.Errorf("Parse(%q): id %q, want %q", tc.doc, c.ID, tc.want)
		}
	}
}

func TestRedisHelpers(t *testing.T) {
	c := seedDefaults()
	c.Redis.Host, c.Redis.Port = "::1", 6380
	if got := c.RedisAddr(); got != "[::1]:6380" {
		t.Errorf("RedisAddr = %q", got)
	}
	for _, tc := range []struct {
		mutate func(*Config)
		want   bool
	}{
		{func(*Config) {}, false},
		{func(c *Config) { c.Store.Type = StoreRedis }, true},
		{func(c *Config) { c.Store.Type = StoreJDBC }, false},
		{func(c *Config) { c.Audit.Sink = AuditRedis }, true},
		{func(c *Config) { c.Streams.ProvisioningEnabled = true }, true},
	} {
		c := seedDefaults()
		tc.mutate(c)
		if got := c.RedisRequired(); got != tc.want {
			t.Errorf("RedisRequired(store=%s sink=%s provisioning=%v) = %v", c.Store.Type, c.Audit.Sink, c.Streams.ProvisioningEnabled, got)
		}
	}
}

func TestRedactedNeverShowsSecrets(t *testing.T) {
	c := seedDefaults()
	c.API.AdminPassword = "admin-pw-1"
	c.API.TokenSecret = "token-secret-2"
	c.Redis.Password = "redis-pw-3"
	c.Redis.ClusterNodes = []string{"n:1"}
	c.API.Users = []User{{Username: "grafana", Password: "user-pw-4", Roles: []string{"READ"}}}
	c.Store.JDBC.URL = "postgres://app:db-pw-5@db:5432/coord?sslmode=disable&password=db-pw-6"
	c.Monitoring.MetricsAuth = MetricsAuth{BearerToken: "metrics-token-7", Username: "prom", Password: "metrics-pw-8"}
	ten := Duration(10 * time.Second)
	c.Coordination.StateMutex.DeprecatedTTL = &ten

	out := c.String()
	for _, secret := range []string{"admin-pw-1", "token-secret-2", "redis-pw-3", "user-pw-4", "db-pw-5", "db-pw-6", "metrics-token-7", "metrics-pw-8"} {
		if strings.Contains(out, secret) {
			t.Errorf("String() leaks %q:\n%s", secret, out)
		}
	}
	for _, visible := range []string{"grafana", "postgres://app:", "@db:5432/coord", "sslmode=disable", "ttl: 10s", "token-ttl: 168h0m0s"} {
		if !strings.Contains(out, visible) {
			t.Errorf("String() lacks %q:\n%s", visible, out)
		}
	}
	if c.API.Users[0].Password != "user-pw-4" || c.API.AdminPassword != "admin-pw-1" {
		t.Error("Redacted modified the original")
	}
	back := mustParse(t, out)
	if !reflect.DeepEqual(back, c.Redacted()) {
		t.Errorf("String() does not parse back:\n%s\n%s", out, back)
	}
	if r := seedDefaults().Redacted(); r.API.TokenSecret != "" || r.Redis.Password != "" || r.Store.JDBC.URL != "" {
		t.Errorf("empty secrets should stay empty: %+v", r)
	}
	c.Store.JDBC.URL = "jdbc:postgresql://db/coord?user=app&password=x"
	if got := c.Redacted().Store.JDBC.URL; got != redactedMark {
		t.Errorf("opaque URL = %q", got)
	}
}
