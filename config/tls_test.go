package config

import (
	"errors"
	"strings"
	"testing"
)

// The TLS keys are read from a file (an unquoted 1.3 is the text "1.3") and
// from their COORDINATOR_… variables.
func TestTLSKeys(t *testing.T) {
	c := mustParse(t, `coordinator:
  server:
    tls: {cert-file: /tls/tls.crt, key-file: /tls/tls.key, min-version: 1.3, client-ca-file: /tls/ca.crt, client-auth: require}
  cluster:
    tls: {ca-file: /peer/ca.crt}
`)
	want := ServerTLS{CertFile: "/tls/tls.crt", KeyFile: "/tls/tls.key", MinVersion: TLSVersion13, ClientCAFile: "/tls/ca.crt", ClientAuth: ClientAuthRequire}
	if c.Server.TLS != want || !c.Server.TLS.Enabled() || c.Cluster.TLS != (ClusterTLS{CAFile: "/peer/ca.crt"}) {
		t.Errorf("server.tls %+v, cluster.tls %+v", c.Server.TLS, c.Cluster.TLS)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("Validate: %v", err)
	}

	c = mustParse(t, "", env(map[string]string{
		"COORDINATOR_SERVER_TLS_CERT_FILE":      "/s/crt",
		"COORDINATOR_SERVER_TLS_KEY_FILE":       "/s/key",
		"COORDINATOR_SERVER_TLS_MIN_VERSION":    "1.3",
		"COORDINATOR_SERVER_TLS_CLIENT_CA_FILE": "/s/ca",
		"COORDINATOR_SERVER_TLS_CLIENT_AUTH":    "request",
		"COORDINATOR_CLUSTER_TLS_CA_FILE":       "/p/ca",
		"COORDINATOR_CLUSTER_TLS_CERT_FILE":     "/p/crt",
		"COORDINATOR_CLUSTER_TLS_KEY_FILE":      "/p/key",
		"COORDINATOR_CLUSTER_TLS_SERVER_NAME":   "coordinators.svc",
	}))
	if c.Server.TLS != (ServerTLS{CertFile: "/s/crt", KeyFile: "/s/key", MinVersion: "1.3", ClientCAFile: "/s/ca", ClientAuth: "request"}) ||
		c.Cluster.TLS != (ClusterTLS{CAFile: "/p/ca", CertFile: "/p/crt", KeyFile: "/p/key", ServerName: "coordinators.svc"}) {
		t.Errorf("environment: server.tls %+v, cluster.tls %+v", c.Server.TLS, c.Cluster.TLS)
	}
	if Default().Server.TLS.Enabled() {
		t.Error("TLS is on by default")
	}
}

// Each inconsistent TLS setting is one error naming its key and saying
// what to do.
func TestValidateTLS(t *testing.T) {
	on := func(c *Config) { c.Server.TLS.CertFile, c.Server.TLS.KeyFile = "c.pem", "k.pem" }
	for _, tc := range []struct {
		name   string
		mutate func(*Config)
		want   string
	}{
		{"cert without key", func(c *Config) { c.Server.TLS.CertFile = "c.pem" },
			"coordinator.server.tls.key-file: is required with coordinator.server.tls.cert-file (the certificate's private key)"},
		{"key without cert", func(c *Config) { c.Server.TLS.KeyFile = "k.pem" },
			"coordinator.server.tls.cert-file: is required with coordinator.server.tls.key-file (the key's certificate)"},
		{"min version", func(c *Config) { on(c); c.Server.TLS.MinVersion = "1.1" },
			`coordinator.server.tls.min-version: unknown TLS version "1.1": want "1.2" or "1.3"`},
		{"client auth", func(c *Config) { on(c); c.Server.TLS.ClientAuth = "verify" },
			`coordinator.server.tls.client-auth: unknown client-auth "verify": want none, request or require`},
		{"require without CA", func(c *Config) { on(c); c.Server.TLS.ClientAuth = ClientAuthRequire },
			"coordinator.server.tls.client-ca-file: is required when client-auth is require (the CAs client certificates are verified against)"},
		{"CA while none", func(c *Config) { on(c); c.Server.TLS.ClientCAFile = "ca.pem" },
			"coordinator.server.tls.client-ca-file: is set while client-auth is none, so no client certificate would be asked for: set client-auth to request or require, or leave client-ca-file empty"},
		{"client auth without TLS", func(c *Config) { c.Server.TLS.ClientAuth, c.Server.TLS.ClientCAFile = ClientAuthRequire, "ca.pem" },
			`coordinator.server.tls.client-auth: is "require" but TLS is off: set cert-file and key-file too`},
		{"peer cert without key", func(c *Config) { c.Cluster.TLS.CertFile = "peer.pem" },
			"coordinator.cluster.tls.key-file: is required with coordinator.cluster.tls.cert-file (the certificate's private key)"},
		{"peer key without cert", func(c *Config) { c.Cluster.TLS.KeyFile = "peer.key" },
			"coordinator.cluster.tls.cert-file: is required with coordinator.cluster.tls.key-file (the key's certificate)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := seedDefaults()
			tc.mutate(c)
			err := c.Validate()
			if _, ok := errors.AsType[*KeyError](err); !ok || err.Error() != tc.want {
				t.Errorf("Validate() = %v\nwant %s", err, tc.want)
			}
		})
	}

	c := seedDefaults()
	on(c)
	c.Server.TLS.ClientCAFile = "ca.pem"
	c.Cluster.TLS = ClusterTLS{CAFile: "peer-ca.pem", CertFile: "peer.pem", KeyFile: "peer.key"}
	for _, auth := range []string{ClientAuthRequest, ClientAuthRequire} {
		c.Server.TLS.ClientAuth = auth
		if err := c.Validate(); err != nil {
			t.Errorf("client-auth %s with a CA: %v", auth, err)
		}
	}
	c.Server.TLS.ClientCAFile = ""
	c.Server.TLS.ClientAuth = ClientAuthRequest
	if err := c.Validate(); err != nil {
		t.Errorf("client-auth request without a CA: %v", err)
	}
	if s := c.String(); !strings.Contains(s, "cert-file: c.pem") || !strings.Contains(s, "ca-file: peer-ca.pem") {
		t.Errorf("String() hides the TLS files:\n%s", s)
	}
}
