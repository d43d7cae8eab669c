package tlsfiles

import (
	"bytes"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeclock"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testcerts"
)

// logs is a concurrency-safe log destination.
type logs struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logs) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logs) count(s string) int {
	l.mu.Lock()
	defer l.mu.Unlock()
	return strings.Count(l.buf.String(), s)
}

// commonName is the subject common name of c's leaf.
func commonName(t *testing.T, c *tls.Certificate) string {
	t.Helper()
	leaf, err := x509.ParseCertificate(c.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	return leaf.Subject.CommonName
}

func files(t *testing.T) (certFile, keyFile string) {
	dir := t.TempDir()
	return filepath.Join(dir, "tls.crt"), filepath.Join(dir, "tls.key")
}

// The files are looked at once per CheckInterval: a change is used after
// the next look, a pair that does not load keeps the previous certificate
// and is logged once, and a later good pair is used again.
func TestReload(t *testing.T) {
	ca := testcerts.NewCA(t, "ca")
	certFile, keyFile := files(t)
	ca.Issue(t, "first").Write(t, certFile, keyFile)
	clock := fakeclock.New(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	out := &logs{}
	p, err := load(certFile, keyFile, slog.New(slog.NewTextHandler(out, nil)), clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	current := func() string {
		c, err := p.GetCertificate(nil)
		if err != nil {
			t.Fatal(err)
		}
		return commonName(t, c)
	}
	if got := current(); got != "first" {
		t.Fatalf("loaded %q", got)
	}

	ca.Issue(t, "second").Write(t, certFile, keyFile)
	clock.Advance(CheckInterval - time.Nanosecond)
	if got := current(); got != "first" {
		t.Fatalf("%q before CheckInterval passed: the files were looked at early", got)
	}
	clock.Advance(time.Nanosecond)
	if got := current(); got != "second" || out.count("certificate reloaded") != 1 {
		t.Fatalf("after a change: %q, log:\n%s", got, out.buf.String())
	}

	third := ca.Issue(t, "third")
	testcerts.WriteFile(t, certFile, third.CertPEM) // the key is still second's
	for range 3 {
		clock.Advance(CheckInterval)
		if got := current(); got != "second" {
			t.Fatalf("a certificate without its key replaced the pair in use: %q", got)
		}
	}
	if n := out.count("do not load"); n != 1 {
		t.Fatalf("a pair that does not load logged %d times, want once:\n%s", n, out.buf.String())
	}
	testcerts.WriteFile(t, keyFile, third.KeyPEM)
	clock.Advance(CheckInterval)
	if got := current(); got != "third" {
		t.Fatalf("after the key followed: %q", got)
	}

	if err := os.Remove(certFile); err != nil {
		t.Fatal(err)
	}
	clock.Advance(CheckInterval)
	c, err := p.GetClientCertificate(nil)
	if err != nil || commonName(t, c) != "third" || out.count("do not load") != 2 {
		t.Fatalf("after the certificate file was removed: %v, log:\n%s", err, out.buf.String())
	}
}

// Load fails, naming the files, when the pair does not load.
func TestLoadErrors(t *testing.T) {
	ca := testcerts.NewCA(t, "ca")
	certFile, keyFile := files(t)
	if _, err := Load(certFile, keyFile, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), certFile) {
		t.Errorf("missing files: %v", err)
	}
	testcerts.WriteFile(t, certFile, ca.Issue(t, "a").CertPEM)
	testcerts.WriteFile(t, keyFile, ca.Issue(t, "b").KeyPEM)
	if _, err := Load(certFile, keyFile, slog.New(slog.DiscardHandler)); err == nil || !strings.Contains(err.Error(), keyFile) {
		t.Errorf("a key of another certificate: %v", err)
	}
}

// Handshakes may ask for the certificate concurrently while it is
// reloaded: each gets a whole pair.
func TestConcurrentReload(t *testing.T) {
	ca := testcerts.NewCA(t, "ca")
	certFile, keyFile := files(t)
	pairs := []testcerts.Pair{ca.Issue(t, "a"), ca.Issue(t, "b")}
	pairs[0].Write(t, certFile, keyFile)
	clock := fakeclock.New(time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC))
	clock.SetStep(CheckInterval) // every call may look
	p, err := load(certFile, keyFile, slog.New(slog.DiscardHandler), clock.Now)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			for range 200 {
				if c := p.Certificate(); len(c.Certificate) == 0 || c.PrivateKey == nil {
					t.Error("a certificate without its chain or key")
					return
				}
			}
		})
	}
	for i := range 20 {
		pairs[i%2].Write(t, certFile, keyFile)
	}
	wg.Wait()
}
