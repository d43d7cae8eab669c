package main

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"

	"github.com/redis-stream-coordinator/coordinator/config"
	"github.com/redis-stream-coordinator/coordinator/internal/tlsfiles"
)

// tlsConfigs returns the API listener's TLS configuration (nil when
// server.tls is off) and that of the connections to the other
// coordinators whose URL is https. Certificates and keys are reloaded when
// their files change (internal/tlsfiles); CA bundles are read once, here.
// Errors name the key whose file does not load.
func tlsConfigs(cfg *config.Config, logger *slog.Logger) (server, peer *tls.Config, err error) {
	if server, err = serverTLS(cfg.Server.TLS, logger); err != nil {
		return nil, nil, err
	}
	if peer, err = peerTLS(cfg.Cluster.TLS, logger); err != nil {
		return nil, nil, err
	}
	if cfg.Server.TLS.ClientAuth == config.ClientAuthRequire && peer.GetClientCertificate == nil {
		logger.Warn("tls: server.tls.client-auth is require but cluster.tls.cert-file is empty: " +
			"other coordinators configured alike cannot forward requests to this one")
	}
	return server, peer, nil
}

// serverTLS is the API listener's configuration: the certificate of
// cert-file and key-file, TLS min-version and up, and client certificates
// as client-auth says (request: asked for, and verified against
// client-ca-file when that is set; require: refused unless one verifies).
func serverTLS(c config.ServerTLS, logger *slog.Logger) (*tls.Config, error) {
	if !c.Enabled() {
		return nil, nil
	}
	pair, err := tlsfiles.Load(c.CertFile, c.KeyFile, logger)
	if err != nil {
		return nil, fmt.Errorf("coordinator.server.tls.cert-file, key-file: %w", err)
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, GetCertificate: pair.GetCertificate}
	if c.MinVersion == config.TLSVersion13 {
		cfg.MinVersion = tls.VersionTLS13
	}
	if c.ClientCAFile != "" {
		if cfg.ClientCAs, err = certPool(c.ClientCAFile); err != nil {
			return nil, fmt.Errorf("coordinator.server.tls.client-ca-file: %w", err)
		}
	}
	switch {
	case c.ClientAuth == config.ClientAuthRequire:
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
	case c.ClientAuth == config.ClientAuthRequest && cfg.ClientCAs != nil:
		cfg.ClientAuth = tls.VerifyClientCertIfGiven
	case c.ClientAuth == config.ClientAuthRequest:
		cfg.ClientAuth = tls.RequestClientCert
	}
	return cfg, nil
}

// peerTLS is the configuration of the connections to https peers: their
// certificates verified against ca-file (the system roots when it is
// empty) for server-name (the host of their URL when it is empty), this coordinator's client certificate (cert-file, key-file)
// presented when one is configured and a peer asks.
func peerTLS(c config.ClusterTLS, logger *slog.Logger) (*tls.Config, error) {
	cfg := &tls.Config{MinVersion: tls.VersionTLS12, ServerName: c.ServerName}
	if c.CAFile != "" {
		var err error
		if cfg.RootCAs, err = certPool(c.CAFile); err != nil {
			return nil, fmt.Errorf("coordinator.cluster.tls.ca-file: %w", err)
		}
	}
	if c.CertFile != "" {
		pair, err := tlsfiles.Load(c.CertFile, c.KeyFile, logger)
		if err != nil {
			return nil, fmt.Errorf("coordinator.cluster.tls.cert-file, key-file: %w", err)
		}
		cfg.GetClientCertificate = pair.GetClientCertificate
	}
	return cfg, nil
}

// certPool reads a PEM bundle of CA certificates.
func certPool(path string) (*x509.CertPool, error) {
	data, err := os.ReadFile(path) // #nosec G304 -- the path is the operator's configuration (a *ca-file key)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(data) {
		return nil, fmt.Errorf("%s holds no PEM certificate", path)
	}
	return pool, nil
}

// serve serves srv on ln until it stops: over TLS (HTTP/2 or HTTP/1.1, as
// the client offers) when srv.TLSConfig is set, plain HTTP/1.1 otherwise.
func serve(srv *http.Server, ln net.Listener) error {
	if srv.TLSConfig != nil {
		return srv.ServeTLS(ln, "", "")
	}
	return srv.Serve(ln)
}

// scheme is the API's URL scheme: https when it is served over TLS.
func scheme(tlsOn bool) string {
	if tlsOn {
		return "https"
	}
	return "http"
}
