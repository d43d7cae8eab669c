package charttest

import (
	"strings"
	"testing"
)

// schemaError starts every error of values that values.schema.json rejects
// (Helm's wording, as helm install prints it).
const schemaError = "values don't meet the specifications of the schema(s)"

// Settings that cannot work fail the render, naming the value and saying
// why: the schema's type and key checks, and the templates' own refusals.
func TestChartRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		// want are substrings of the error.
		want []string
	}{
		{"memory store with replicas", "replicaCount: 2\nconfig: {store: {type: memory}}",
			[]string{"refused: config.store.type is memory with 2 replicas (replicaCount)", "Use config.store.type redis or jdbc"}},
		{"store type left to the coordinator's default", "config: {store: {type: null}}",
			[]string{"refused: config.store.type is memory with 3 replicas"}},
		{"autoscaling with memory store", "replicaCount: 1\nautoscaling: {enabled: true, minReplicas: 1, maxReplicas: 4}\nconfig: {store: {type: memory}}",
			[]string{"refused: config.store.type is memory with 4 replicas (autoscaling.maxReplicas)"}},
		{"autoscaling of one memory coordinator", "replicaCount: 1\nautoscaling: {enabled: true, minReplicas: 1, maxReplicas: 1}\nconfig: {store: {type: memory}}",
			[]string{"refused: autoscaling.enabled with config.store.type memory"}},
		{"autoscaling bounds", "autoscaling: {enabled: true, minReplicas: 5, maxReplicas: 3}",
			[]string{"refused: autoscaling.minReplicas 5 is above autoscaling.maxReplicas 3"}},
		{"replicaCount not a number", `replicaCount: "three"`,
			[]string{schemaError, "/replicaCount", "want integer"}},
		{"unknown config key", "config: {bogus: 1}",
			[]string{schemaError, "/config", "additional properties 'bogus' not allowed"}},
		{"unknown nested config key", "config: {store: {typ: redis}}",
			[]string{schemaError, "/config/store", "additional properties 'typ' not allowed"}},
		{"config value of the wrong type", "config: {coordination: {max-queued-heartbeats: many}}",
			[]string{schemaError, "/config/coordination/max-queued-heartbeats"}},
		{"duration without unit", "config: {cluster: {lease-ttl: 5}}",
			[]string{schemaError, "/config/cluster/lease-ttl"}},
		{"unknown store type", "config: {store: {type: etcd}}",
			[]string{schemaError, "/config/store/type"}},
		{"unknown top-level value", "replicas: 3",
			[]string{schemaError, "additional properties 'replicas' not allowed"}},
		{"fixed coordinator id", "config: {id: coordinator-1}",
			[]string{"refused: config.id: the chart sets each coordinator's id to its pod name", "shared by every replica"}},
		{"fixed advertise URL", "config: {cluster: {advertise-url: 'http://coord:8080'}}",
			[]string{"refused: config.cluster.advertise-url: each pod advertises its own"}},
		{"listen address", "config: {server: {address: '127.0.0.1:8080'}}",
			[]string{"refused: config.server.address"}},
		{"server TLS in config", "config: {server: {tls: {cert-file: /x}}}",
			[]string{"refused: config.server.tls: the chart sets it from tls.enabled"}},
		{"admin password in config", "config: {api: {admin-password: hunter2}}",
			[]string{"refused: config.api.admin-password", "auth.existingSecret"}},
		{"Redis password in config", "config: {redis: {password: hunter2}}",
			[]string{"refused: config.redis.password", "redis.passwordSecret"}},
		{"Redis host in config", "config: {redis: {host: elsewhere}}",
			[]string{"refused: config.redis.host: set redis.host"}},
		{"metrics credential in config", "config: {monitoring: {metrics-auth: {bearer-token: abc}}}",
			[]string{"refused: config.monitoring.metrics-auth", "metricsAuth.bearerToken"}},
		{"literal user password", "config: {api: {users: [{username: ops-team, password: hunter2, roles: [READ]}]}}",
			[]string{"refused: config.api.users[0].password is a literal password", "${OPS_TEAM_PASSWORD}"}},
		{"unknown role", "config: {api: {users: [{username: ops, password: '${OPS}', roles: [ROOT]}]}}",
			[]string{schemaError, "/config/api/users/0/roles/0"}},
		{"JDBC URL with a password", "config: {store: {type: jdbc, jdbc: {url: 'postgres://coord:hunter2@db:5432/coord'}}}",
			[]string{"refused: config.store.jdbc.url carries a literal password"}},
		{"JDBC URL with a password parameter", "config: {store: {type: jdbc, jdbc: {url: 'postgres://db:5432/coord?user=c&password=hunter2'}}}",
			[]string{"refused: config.store.jdbc.url carries a literal password"}},
		{"TLS without a Secret", "tls: {enabled: true}",
			[]string{"refused: tls.enabled without tls.secretName"}},
		{"client certificates required", "tls: {enabled: true, secretName: coord-tls, clientAuth: require}",
			[]string{"refused: tls.clientAuth require", "probes present no client certificate"}},
		{"client certificates without TLS", "tls: {clientAuth: request}",
			[]string{"refused: tls.clientAuth request without tls.enabled"}},
		{"TLS version", `tls: {enabled: true, secretName: coord-tls, minVersion: "1.1"}`,
			[]string{schemaError, "/tls/minVersion"}},
		{"Redis CA without Redis TLS", "redis: {tlsCA: {secretName: redis-ca}}",
			[]string{"refused: redis.tlsCA.secretName without redis.tls: true"}},
		{"disruption budget blocking drains", "podDisruptionBudget: {maxUnavailable: 0}",
			[]string{"refused: podDisruptionBudget.maxUnavailable 0 would block every node drain"}},
		{"memory limit the chart cannot read", `resources: {limits: {memory: "1e9"}}`,
			[]string{`resources.limits.memory "1e9"`, "goMemLimitPercent: 0"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := helmTemplate(tc.values)
			if err == nil {
				t.Fatalf("rendered; want an error with %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q\nlacks %q", err, w)
				}
			}
		})
	}
}

// The values next to the refused ones render: one coordinator on the
// memory store, user passwords and a JDBC password as placeholders, a
// memory limit the chart need not read.
func TestChartAcceptsSafeNeighbours(t *testing.T) {
	for name, values := range map[string]string{
		"one memory coordinator": "replicaCount: 1\nconfig: {store: {type: memory}, audit: {sink: log}, streams: {provisioning-enabled: false}}",
		"user password placeholder": `
config: {api: {users: [{username: ops, password: '${OPS_PASSWORD}', roles: [READ]}]}}
extraEnv: [{name: OPS_PASSWORD, valueFrom: {secretKeyRef: {name: users, key: ops}}}]`,
		"JDBC password placeholder": `
config: {store: {type: jdbc, jdbc: {url: 'postgres://coord:${PGPASSWORD}@db:5432/coord'}}}
extraEnv: [{name: PGPASSWORD, valueFrom: {secretKeyRef: {name: db, key: password}}}]`,
		"memory limit the chart cannot read, with goMemLimitPercent 0": "resources: {limits: {memory: \"1e9\"}}\ngoMemLimitPercent: 0",
		"disruption budget with one replica":                           "replicaCount: 1\npodDisruptionBudget: {maxUnavailable: 0}",
		"integer placeholder":                                          "config: {coordination: {max-queued-heartbeats: '${MAX_QUEUED:1024}'}}\nextraEnv: [{name: MAX_QUEUED, value: '2048'}]",
	} {
		t.Run(name, func(t *testing.T) {
			m := render(t, values)
			checkConfig(t, m)
		})
	}
}
