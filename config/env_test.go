package config

import (
	"errors"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// A user file is merged over the default tree: a key it leaves out keeps
// the default file's value, placeholder included.
func TestUserFileMergesOverDefaults(t *testing.T) {
	path := filepath.Join(t.TempDir(), "my.yaml")
	if err := os.WriteFile(path, []byte("coordinator:\n  store: {type: redis}\n  api: {token-ttl: 1h}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := Load(path, env(map[string]string{"COORDINATOR_ADMIN_PASSWORD": "from-env", "REDIS_HOST": "redis.internal"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.API.AdminPassword != "from-env" || c.Redis.Host != "redis.internal" {
		t.Errorf("placeholders of keys the file leaves out ignored: password %q, redis host %q", c.API.AdminPassword, c.Redis.Host)
	}
	if c.Store.Type != StoreRedis || c.API.TokenTTL != d("1h") || c.API.BasePath != "/coord/v1" || c.Store.KeyPrefix != "redis-stream:coord" {
		t.Errorf("merge: %+v", c)
	}
}

// Every key is overridden by its COORDINATOR_… variable, over the file;
// values are typed like the file's and taken literally.
func TestEnvironmentOverridesEveryKind(t *testing.T) {
	c := mustParse(t, "coordinator:\n  server: {address: 127.0.0.1:1}\n  redis: {cluster-nodes: [a:1]}\n", env(map[string]string{
		"COORDINATOR_SERVER_ADDRESS":                           "127.0.0.1:9000",
		"COORDINATOR_STORE_TYPE":                               "redis",
		"COORDINATOR_REDIS_CLUSTER_NODES":                      "n1:7000, n2:7001,",
		"COORDINATOR_API_RATE_LIMIT_MAX_REQUESTS":              "7",
		"COORDINATOR_API_AUTHENTICATE_MEMBER_API":              "true",
		"COORDINATOR_COORDINATION_HEARTBEAT_INTERVAL":          "PT3S",
		"COORDINATOR_COORDINATION_STATE_MUTEX_ACQUIRE_TIMEOUT": "2s",
		"COORDINATOR_API_TOKEN_SECRET":                         "${NOT_EXPANDED}",
		"COORDINATOR_API_ADMIN_USERNAME":                       "",
		"COORDINATOR_API_USERS":                                "[{username: ops, password: 's: 1', roles: [READ, WRITE]}]",
		"COORDINATOR_REDIS_PORT":                               "",
		"COORDINATOR_MONITORING_METRICS_AUTH_BEARER_TOKEN":     "scrape-token",
		"COORDINATOR_MONITORING_METRICS_AUTH_USERNAME":         "prom",
		"COORDINATOR_MONITORING_METRICS_AUTH_PASSWORD":         "prom-pw",
	}))
	if c.Server.Address != "127.0.0.1:9000" || c.Store.Type != StoreRedis ||
		!slices.Equal(c.Redis.ClusterNodes, []string{"n1:7000", "n2:7001"}) ||
		c.API.RateLimit.MaxRequests != 7 || !c.API.AuthenticateMemberAPI ||
		c.Coordination.HeartbeatInterval != d("3s") || c.Coordination.StateMutex.AcquireTimeout() != 2*time.Second ||
		c.API.TokenSecret != "${NOT_EXPANDED}" || c.API.AdminUsername != "" || c.Redis.Port != 6379 ||
		c.Monitoring.MetricsAuth != (MetricsAuth{BearerToken: "scrape-token", Username: "prom", Password: "prom-pw"}) {
		t.Errorf("overrides not applied: %+v", c)
	}
	if len(c.API.Users) != 1 || c.API.Users[0].Username != "ops" || c.API.Users[0].Password != "s: 1" ||
		!slices.Equal(c.API.Users[0].Roles, []string{"READ", "WRITE"}) {
		t.Errorf("users: %+v", c.API.Users)
	}
}

// A bad override names the key and the variable.
func TestEnvironmentOverrideErrors(t *testing.T) {
	for name, want := range map[string]string{
		"COORDINATOR_REDIS_PORT":                      `coordinator.redis.port: environment variable COORDINATOR_REDIS_PORT: expected an integer, got "x"`,
		"COORDINATOR_COORDINATION_MEMBER_LEASE_TTL":   "coordinator.coordination.member-lease-ttl: environment variable COORDINATOR_COORDINATION_MEMBER_LEASE_TTL: ",
		"COORDINATOR_API_USERS":                       "coordinator.api.users: environment variable COORDINATOR_API_USERS: expected a list",
		"COORDINATOR_COORDINATION_EVENT_LOOP_ENABLED": "coordinator.coordination.event-loop.enabled: environment variable COORDINATOR_COORDINATION_EVENT_LOOP_ENABLED: expected true or false",
	} {
		err := parseErr(t, "", env(map[string]string{name: "x"}))
		var ke *KeyError
		if !errors.As(err, &ke) || !strings.HasPrefix(err.Error(), want) {
			t.Errorf("%s=x: error %v, want prefix %q", name, err, want)
		}
	}
}

// The naming rule gives every key its own variable, none of which reuses
// a placeholder variable of the default file for another key.
func TestEnvNames(t *testing.T) {
	keys := EnvKeys()
	if len(keys) < 50 || !slices.Contains(keys, "server.address") || !slices.Contains(keys, "api.users") ||
		!slices.Contains(keys, "coordination.state-mutex.ttl") {
		t.Fatalf("EnvKeys() = %v", keys)
	}
	if got := EnvName("coordinator.redis.cluster-nodes"); got != "COORDINATOR_REDIS_CLUSTER_NODES" {
		t.Errorf("EnvName = %q", got)
	}
	placeholders := map[string]bool{}
	for _, m := range regexp.MustCompile(`\$\{([A-Z_]+)`).FindAllStringSubmatch(string(defaultFile), -1) {
		placeholders[m[1]] = true
	}
	seen := map[string]string{}
	for _, k := range keys {
		n := EnvName(k)
		if other, dup := seen[n]; dup {
			t.Errorf("%s and %s share %s", k, other, n)
		}
		seen[n] = k
		if placeholders[n] && k != "id" {
			t.Errorf("%s: %s is also a placeholder of another key", k, n)
		}
	}
}

// The default admin password and an empty token secret are refused on a
// non-loopback address unless api.allow-insecure-defaults is set, and
// anonymous members unless api.allow-anonymous-members is (these cases
// turn member authentication on; TestAnonymousMembersRefused covers it).
func TestInsecureDefaultsRefused(t *testing.T) {
	const (
		pw     = "coordinator.api.admin-password"
		secret = "coordinator.api.token-secret"
	)
	tests := []struct {
		name string
		env  map[string]string
		want []string // keys named by the errors
	}{
		{"default loopback", nil, nil},
		{"localhost", map[string]string{"COORDINATOR_SERVER_ADDRESS": "localhost:8080"}, nil},
		{"ipv6 loopback", map[string]string{"COORDINATOR_SERVER_ADDRESS": "[::1]:8080"}, nil},
		{"all interfaces", map[string]string{"COORDINATOR_SERVER_ADDRESS": ":8080"}, []string{pw, secret}},
		{"any address", map[string]string{"COORDINATOR_SERVER_ADDRESS": "0.0.0.0:8080"}, []string{pw, secret}},
		{"password only", map[string]string{"COORDINATOR_SERVER_ADDRESS": ":8080", "COORDINATOR_ADMIN_PASSWORD": "s3cret"}, []string{secret}},
		{"secret only", map[string]string{"COORDINATOR_SERVER_ADDRESS": ":8080", "COORDINATOR_TOKEN_SECRET": "k"}, []string{pw}},
		{"both set", map[string]string{"COORDINATOR_SERVER_ADDRESS": ":8080", "COORDINATOR_ADMIN_PASSWORD": "s3cret", "COORDINATOR_TOKEN_SECRET": "k"}, nil},
		{"users replace admin", map[string]string{"COORDINATOR_SERVER_ADDRESS": ":8080", "COORDINATOR_TOKEN_SECRET": "k",
			"COORDINATOR_API_USERS": "[{username: ops, password: x, roles: [ADMIN]}]"}, nil},
		{"opt-in", map[string]string{"COORDINATOR_SERVER_ADDRESS": ":8080", "COORDINATOR_API_ALLOW_INSECURE_DEFAULTS": "true"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			vars := maps.Clone(tc.env)
			if vars == nil {
				vars = map[string]string{}
			}
			vars["COORDINATOR_API_AUTHENTICATE_MEMBER_API"] = "true"
			err := mustParse(t, "", env(vars)).Validate()
			var got []string
			for _, e := range unjoin(err) {
				var ke *KeyError
				if !errors.As(e, &ke) {
					t.Fatalf("not a KeyError: %v", e)
				}
				got = append(got, ke.Key)
				if !strings.Contains(e.Error(), "coordinator.api.allow-insecure-defaults: true") {
					t.Errorf("error does not name the opt-in key: %v", e)
				}
			}
			if !slices.Equal(got, tc.want) {
				t.Errorf("Validate() = %v, want errors for %v", err, tc.want)
			}
		})
	}
}

// TestAnonymousMembersRefused: off loopback, authenticate-member-api
// false is refused unless api.allow-anonymous-members is set, whatever
// allow-insecure-defaults says; the error names both ways out.
func TestAnonymousMembersRefused(t *testing.T) {
	const key = "coordinator.api.authenticate-member-api"
	safe := map[string]string{"COORDINATOR_ADMIN_PASSWORD": "s3cret", "COORDINATOR_TOKEN_SECRET": "k"}
	for _, tc := range []struct {
		name    string
		env     map[string]string
		refused bool
	}{
		{"loopback", map[string]string{}, false},
		{"all interfaces", map[string]string{"COORDINATOR_SERVER_ADDRESS": ":8080"}, true},
		{"insecure defaults allowed", map[string]string{"COORDINATOR_SERVER_ADDRESS": ":8080", "COORDINATOR_API_ALLOW_INSECURE_DEFAULTS": "true"}, true},
		{"member auth on", map[string]string{"COORDINATOR_SERVER_ADDRESS": ":8080", "COORDINATOR_API_AUTHENTICATE_MEMBER_API": "true"}, false},
		{"explicitly allowed", map[string]string{"COORDINATOR_SERVER_ADDRESS": ":8080", "COORDINATOR_API_ALLOW_ANONYMOUS_MEMBERS": "true"}, false},
	} {
		vars := maps.Clone(tc.env)
		maps.Copy(vars, safe)
		err := mustParse(t, "", env(vars)).Validate()
		named := false
		for _, e := range unjoin(err) {
			if ke, ok := errors.AsType[*KeyError](e); ok && ke.Key == key {
				named = true
				if !strings.Contains(e.Error(), "allow-anonymous-members: true") || !strings.Contains(e.Error(), "set it to true") {
					t.Errorf("%s: the error names no way out: %v", tc.name, e)
				}
			}
		}
		if named != tc.refused {
			t.Errorf("%s: refused = %v, want %v (%v)", tc.name, named, tc.refused, err)
		}
	}
}

// unjoin splits an errors.Join result (nil → none).
func unjoin(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		return j.Unwrap()
	}
	if err != nil {
		return []error{err}
	}
	return nil
}

// A set COORDINATOR_ variable that is no override, no placeholder of either
// file and no client variable fails the parse, naming it and the closest
// known name; the others are accepted.
func TestUnknownEnvironmentVariable(t *testing.T) {
	err := parseErr(t, "", WithEnviron([]string{"COORDINATOR_STORE_TYP=redis", "HOME=/root"}))
	want := "environment variable COORDINATOR_STORE_TYP: unknown key (no configuration key or placeholder has this name; did you mean COORDINATOR_STORE_TYPE?)"
	if !errors.Is(err, ErrUnknownKey) || err.Error() != want {
		t.Errorf("error %v, want %q", err, want)
	}
	c := mustParse(t, "coordinator:\n  id: ${COORDINATOR_MY_ID:x}\n", WithEnviron([]string{
		"COORDINATOR_MY_ID=from-file-placeholder", "COORDINATOR_TOKEN_SECRET=default-placeholder",
		"COORDINATOR_STORE_TYPE=redis", "COORDINATOR_URL=http://client", "COORDINATOR_CONFIG=x.yaml",
	}))
	if c.ID != "from-file-placeholder" || c.API.TokenSecret != "default-placeholder" || c.Store.Type != StoreRedis {
		t.Errorf("known variables: %+v", c)
	}
}
