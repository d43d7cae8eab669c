package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testcerts"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// TLS tests: coordinators started by run with server.tls and cluster.tls
// on certificates made for the test (internal/testkit/testcerts).

// writePair writes p to dir as <name>.crt and <name>.key.
func writePair(t *testing.T, dir, name string, p testcerts.Pair) (certFile, keyFile string) {
	t.Helper()
	certFile, keyFile = filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key")
	p.Write(t, certFile, keyFile)
	return certFile, keyFile
}

// startTLS runs a coordinator on a free loopback port with the
// `coordinator:` lines yaml, which set server.tls, and returns its root
// URL (https://127.0.0.1:<port>) and log.
func startTLS(t *testing.T, yaml string) (string, *logBuffer) {
	t.Helper()
	root, _, logs := startLogged(t, "-config", writeConfig(t, "coordinator:\n  server:\n    address: \"127.0.0.1:0\"\n"+yaml))
	if !strings.HasPrefix(root, "https://") {
		t.Fatalf("listening at %s with server.tls set", root)
	}
	return root, logs
}

// httpsClient trusts ca and presents cert when it is non-nil, whoever
// signed it (with Certificates instead, Go sends none that the server's
// CA list does not name). It speaks HTTP/2, as browsers and curl do; the
// coordinators forward to each other over HTTP/1.1.
func httpsClient(t *testing.T, ca *testcerts.CA, cert *tls.Certificate) *http.Client {
	t.Helper()
	cfg := &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12}
	if cert != nil {
		cfg.GetClientCertificate = func(*tls.CertificateRequestInfo) (*tls.Certificate, error) { return cert, nil }
	}
	tr := &http.Transport{TLSClientConfig: cfg, ForceAttemptHTTP2: true}
	t.Cleanup(tr.CloseIdleConnections)
	return &http.Client{Transport: tr}
}

// handshake opens a TLS connection to the host:port of root with cfg and
// returns its state.
func handshake(root string, cfg *tls.Config) (tls.ConnectionState, error) {
	conn, err := tls.Dial("tcp", strings.TrimPrefix(root, "https://"), cfg)
	if err != nil {
		return tls.ConnectionState{}, err
	}
	defer conn.Close()
	return conn.ConnectionState(), nil
}

// With server.tls the API is served over HTTPS only, at the configured
// min-version and up; the listening log and the advertised URL say https.
func TestTLSServesHTTPS(t *testing.T) {
	ca := testcerts.NewCA(t, "server CA")
	certFile, keyFile := writePair(t, t.TempDir(), "server", ca.Issue(t, "coordinator"))
	for _, tc := range []struct {
		minVersion          string
		refused, oldestKept uint16
	}{
		{"1.2", tls.VersionTLS11, tls.VersionTLS12},
		{"1.3", tls.VersionTLS12, tls.VersionTLS13},
	} {
		t.Run(tc.minVersion, func(t *testing.T) {
			root, logs := startTLS(t, fmt.Sprintf("    tls: {cert-file: %q, key-file: %q, min-version: %q}\n", certFile, keyFile, tc.minVersion))
			if rec, _ := logs.find("coordinator listening"); rec["scheme"] != "https" || rec["advertiseUrl"] != root {
				t.Errorf("listening log %v: want scheme https and advertiseUrl %s", rec, root)
			}
			hc := httpsClient(t, ca, nil)
			if st, body, _ := sendVia(t, hc, adminAuth, "POST", root+"/coord/v1/streams/orders", `{"requestedBy":"it"}`); st != http.StatusCreated {
				t.Errorf("create a stream over https with Basic credentials: %d %s", st, body)
			}

			// Plain HTTP to the TLS port is answered by net/http's TLS
			// handshake: a 400 that says why, then the connection closes.
			plain, err := http.Get("http://" + strings.TrimPrefix(root, "https://") + "/actuator/info")
			if err != nil {
				t.Errorf("plain HTTP: %v, want net/http's 400 answer", err)
			} else {
				body, _ := io.ReadAll(plain.Body)
				_ = plain.Body.Close()
				if plain.StatusCode != http.StatusBadRequest || !strings.Contains(string(body), "Client sent an HTTP request to an HTTPS server") {
					t.Errorf("plain HTTP answered %s %q, want 400 Client sent an HTTP request to an HTTPS server", plain.Status, body)
				}
			}
			if _, err := handshake(root, &tls.Config{MinVersion: tls.VersionTLS12}); !errors.As(err, new(x509.UnknownAuthorityError)) {
				t.Errorf("a client without the CA: %v, want an unknown authority", err)
			}
			if _, err := handshake(root, &tls.Config{RootCAs: ca.Pool(), MinVersion: tc.refused, MaxVersion: tc.refused}); err == nil ||
				!strings.Contains(err.Error(), "protocol version") {
				t.Errorf("TLS %s (below min-version %s): %v, want refused", tls.VersionName(tc.refused), tc.minVersion, err)
			}
			st, err := handshake(root, &tls.Config{RootCAs: ca.Pool(), MinVersion: tc.oldestKept, MaxVersion: tc.oldestKept,
				NextProtos: []string{"h2", "http/1.1"}})
			if err != nil || st.Version != tc.oldestKept || st.NegotiatedProtocol != "h2" {
				t.Errorf("TLS %s offering HTTP/2: %v, version %s, protocol %q", tls.VersionName(tc.oldestKept), err,
					tls.VersionName(st.Version), st.NegotiatedProtocol)
			}
		})
	}
}

// client-auth request lets a client without a certificate in, require
// does not; neither lets in a certificate client-ca-file did not sign.
func TestTLSClientCertificates(t *testing.T) {
	dir := t.TempDir()
	serverCA, clientCA := testcerts.NewCA(t, "server CA"), testcerts.NewCA(t, "client CA")
	certFile, keyFile := writePair(t, dir, "server", serverCA.Issue(t, "coordinator"))
	clientCAFile := filepath.Join(dir, "client-ca.crt")
	testcerts.WriteFile(t, clientCAFile, clientCA.PEM)
	good, foreign := clientCA.Issue(t, "ops").TLS(t), testcerts.NewCA(t, "stranger").Issue(t, "ops").TLS(t)
	for _, tc := range []struct {
		auth      string
		anonymous bool // a client without a certificate is served
	}{{"request", true}, {"require", false}} {
		t.Run(tc.auth, func(t *testing.T) {
			root, _ := startTLS(t, fmt.Sprintf("    tls: {cert-file: %q, key-file: %q, client-ca-file: %q, client-auth: %s}\n",
				certFile, keyFile, clientCAFile, tc.auth))
			for _, c := range []struct {
				name   string
				cert   *tls.Certificate
				served bool
			}{{"no certificate", nil, tc.anonymous}, {"a certificate of client-ca-file", &good, true}, {"a certificate of another CA", &foreign, false}} {
				req, err := http.NewRequest(http.MethodGet, root+"/coord/v1/streams/orders/groups", nil)
				if err != nil {
					t.Fatal(err)
				}
				req.Header.Set("Authorization", adminAuth)
				resp, err := httpsClient(t, serverCA, c.cert).Do(req)
				if err == nil {
					_ = resp.Body.Close()
				}
				if served := err == nil; served != c.served {
					t.Errorf("%s: error %v, want served %v", c.name, err, c.served)
				}
			}
		})
	}
}

// New certificate files are served without a restart; files that do not
// load keep the certificate in use, and say so in the log.
func TestTLSReloadsCertificate(t *testing.T) {
	t.Parallel() // certificates and a coordinator of its own
	ca := testcerts.NewCA(t, "server CA")
	certFile, keyFile := writePair(t, t.TempDir(), "server", ca.Issue(t, "first"))
	root, logs := startTLS(t, fmt.Sprintf("    tls: {cert-file: %q, key-file: %q}\n", certFile, keyFile))
	served := func() string {
		st, err := handshake(root, &tls.Config{RootCAs: ca.Pool(), MinVersion: tls.VersionTLS12})
		if err != nil {
			t.Fatal(err)
		}
		return st.PeerCertificates[0].Subject.CommonName
	}
	if cn := served(); cn != "first" {
		t.Fatalf("serves %q", cn)
	}
	ca.Issue(t, "second").Write(t, certFile, keyFile)
	eventually.True(t, "the new certificate served", func() bool { return served() == "second" })

	testcerts.WriteFile(t, certFile, ca.Issue(t, "third").CertPEM) // not second's key
	eventually.True(t, "the pair that does not load logged", func() bool {
		if cn := served(); cn != "second" {
			t.Fatalf("serves %q after a certificate without its key was written", cn)
		}
		_, logged := logs.find("tls: the certificate files changed but do not load; the previous certificate stays in use")
		return logged
	})
}

// Two coordinators on one store, both served over HTTPS with client
// certificates required, forward to each other over HTTPS: each verifies
// the other against cluster.tls.ca-file and presents cluster.tls.cert-file.
// A heartbeat (a forwarded batch) and a group read (the reverse proxy)
// sent to the coordinator that does not own the group are answered by the
// owner.
func TestTLSBetweenCoordinators(t *testing.T) {
	ca := testcerts.NewCA(t, "cluster CA")
	forwardOverTLS(t, ca, ca.Issue(t, "coordinator"), "")
}

// Coordinators that share one certificate naming neither their IP nor
// their host (a Service's name, say) verify each other against
// cluster.tls.server-name: a forward to the owner's https://127.0.0.1 URL
// succeeds although the certificate names only that Service.
func TestTLSPeersVerifiedByServerName(t *testing.T) {
	ca := testcerts.NewCA(t, "cluster CA")
	const name = "coordinators.example"
	forwardOverTLS(t, ca, ca.IssueFor(t, "coordinator", name), name)
}

// forwardOverTLS starts two coordinators serving server (a pair ca
// issued) with client certificates required and cluster.tls.server-name
// serverName, and checks that each answers a heartbeat and a group read
// for a group the other owns, through a forward over mutual TLS.
func forwardOverTLS(t *testing.T, ca *testcerts.CA, server testcerts.Pair, serverName string) {
	t.Helper()
	dir := t.TempDir()
	caFile := filepath.Join(dir, "ca.crt")
	testcerts.WriteFile(t, caFile, ca.PEM)
	serverCert, serverKey := writePair(t, dir, "server", server)
	peerCert, peerKey := writePair(t, dir, "peer", ca.Issue(t, "coordinator peer"))
	store := redisStoreYAML(testredis.SharedAddr, testredis.Prefix(t, testredis.Shared(t)))
	var roots []string
	for i := range 2 {
		root, _ := startTLS(t, fmt.Sprintf(`    tls: {cert-file: %q, key-file: %q, client-ca-file: %q, client-auth: require}
  id: tls-%d
  cluster:
    tls: {ca-file: %q, cert-file: %q, key-file: %q, server-name: %q}
`, serverCert, serverKey, caFile, i, caFile, peerCert, peerKey, serverName)+store)
		roots = append(roots, root)
	}
	operator := ca.Issue(t, "operator").TLS(t)
	hc := httpsClient(t, ca, &operator)
	hc.Transport.(*http.Transport).TLSClientConfig.ServerName = serverName
	for _, root := range roots {
		eventually.True(t, root+" sees both coordinators", func() bool {
			var v contract.ClusterView
			st, body, _ := sendVia(t, hc, adminAuth, "GET", root+"/coord/v1/cluster", "")
			return st == http.StatusOK && json.Unmarshal([]byte(body), &v) == nil && len(v.Coordinators) == 2
		})
	}

	key := group.Key{StreamPrefix: fmt.Sprintf("tls-%d", time.Now().UnixNano()), ConsumerGroup: "workers"}
	var owner string
	eventually.True(t, "the group created", func() bool {
		st, body, h := sendVia(t, hc, adminAuth, "POST", groupURL(roots[0]+"/coord/v1", key), `{"initialShardCount":2,"requestedBy":"it"}`)
		if st == http.StatusServiceUnavailable {
			return false
		}
		if st != http.StatusCreated {
			t.Fatalf("create: %d %s", st, body)
		}
		owner = h.Get(contract.OwnerHeader)
		return true
	})
	other := roots[0]
	switch owner {
	case roots[0]:
		other = roots[1]
	case roots[1]:
	default:
		t.Fatalf("owner %q is neither of %v", owner, roots)
	}

	grp := groupURL(other+"/coord/v1", key)
	if st, body, _ := sendVia(t, hc, adminAuth, "POST", grp+"/members/m1/heartbeat", joinHeartbeat); st != http.StatusOK || !strings.Contains(body, `"status":"OK"`) {
		t.Errorf("heartbeat via %s, forwarded to %s: %d %s", other, owner, st, body)
	}
	if st, body, h := sendVia(t, hc, adminAuth, "GET", grp, ""); st != http.StatusOK || h.Get(contract.OwnerHeader) != owner ||
		!strings.Contains(body, `"targetAssignmentSummary":{"m1":2}`) {
		t.Errorf("group read via %s, forwarded to %s: %d %v %s", other, owner, st, h, body)
	}
}
