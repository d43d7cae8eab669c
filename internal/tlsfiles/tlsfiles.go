package tlsfiles

import (
	"crypto/tls"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"
)

// CheckInterval is the least time between two looks at the files.
const CheckInterval = time.Second

// Pair is a certificate and key loaded from files, reloaded when they
// change. It is safe for concurrent use.
type Pair struct {
	certFile, keyFile string
	log               *slog.Logger
	now               func() time.Time

	cert atomic.Pointer[tls.Certificate]
	// nextLook is when the files are looked at next (Unix nanoseconds).
	nextLook atomic.Int64
	// mu is held by the one caller looking at the files; it guards seen,
	// the files' stamp at the last look.
	mu   sync.Mutex
	seen stamp
}

// stamp tells one version of the two files from another: what stat said
// of each (nil when it failed).
type stamp struct {
	cert, key os.FileInfo
}

// same reports whether a and b are one version of the files: the same
// files (a file renamed over another, as a Kubernetes Secret volume is
// updated, is a new one) with the same sizes and modification times.
func (a stamp) same(b stamp) bool {
	return sameFile(a.cert, b.cert) && sameFile(a.key, b.key)
}

func sameFile(a, b os.FileInfo) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return os.SameFile(a, b) && a.Size() == b.Size() && a.ModTime().Equal(b.ModTime())
}

// Load reads the certificate chain (PEM, leaf first) from certFile and its
// private key (PEM) from keyFile. Reload problems are logged to logger.
func Load(certFile, keyFile string, logger *slog.Logger) (*Pair, error) {
	return load(certFile, keyFile, logger, time.Now)
}

// load is Load on the clock now.
func load(certFile, keyFile string, logger *slog.Logger, now func() time.Time) (*Pair, error) {
	p := &Pair{certFile: certFile, keyFile: keyFile, log: logger, now: now}
	p.seen = p.stat()
	cert, err := p.read()
	if err != nil {
		return nil, err
	}
	p.cert.Store(cert)
	p.nextLook.Store(now().Add(CheckInterval).UnixNano())
	return p, nil
}

// Certificate returns the certificate in use, after looking at the files
// when CheckInterval has passed since the last look. While one caller
// looks (and reads), the others get the certificate in use.
func (p *Pair) Certificate() *tls.Certificate {
	if now := p.now(); now.UnixNano() >= p.nextLook.Load() && p.mu.TryLock() {
		p.look(now)
		p.mu.Unlock()
	}
	return p.cert.Load()
}

// GetCertificate is Certificate as a tls.Config.GetCertificate.
func (p *Pair) GetCertificate(*tls.ClientHelloInfo) (*tls.Certificate, error) {
	return p.Certificate(), nil
}

// GetClientCertificate is Certificate as a tls.Config.GetClientCertificate.
func (p *Pair) GetClientCertificate(*tls.CertificateRequestInfo) (*tls.Certificate, error) {
	return p.Certificate(), nil
}

// look reads the files again if they changed since the last look, unless
// another caller looked since now's caller read nextLook; p.mu is held.
func (p *Pair) look(now time.Time) {
	if now.UnixNano() < p.nextLook.Load() {
		return
	}
	p.nextLook.Store(now.Add(CheckInterval).UnixNano())
	s := p.stat()
	if s.same(p.seen) {
		return
	}
	// The stamp is taken before the read: files that change during it
	// differ from it at the next look and are read again.
	p.seen = s
	cert, err := p.read()
	if err != nil {
		p.log.Error("tls: the certificate files changed but do not load; the previous certificate stays in use",
			"certFile", p.certFile, "keyFile", p.keyFile, "err", err)
		return
	}
	p.cert.Store(cert)
	attrs := []any{"certFile", p.certFile}
	if cert.Leaf != nil {
		attrs = append(attrs, "subject", cert.Leaf.Subject.String(), "notAfter", cert.Leaf.NotAfter)
	}
	p.log.Info("tls: certificate reloaded", attrs...)
}

func (p *Pair) stat() stamp {
	return stamp{cert: fileInfo(p.certFile), key: fileInfo(p.keyFile)}
}

// fileInfo is what stat says of path, nil when it fails.
func fileInfo(path string) os.FileInfo {
	fi, err := os.Stat(path)
	if err != nil {
		return nil
	}
	return fi
}

// read loads the pair (with its Leaf parsed, unless GODEBUG
// x509keypairleaf=0).
func (p *Pair) read() (*tls.Certificate, error) {
	cert, err := tls.LoadX509KeyPair(p.certFile, p.keyFile)
	if err != nil {
		return nil, fmt.Errorf("certificate %s, key %s: %w", p.certFile, p.keyFile, err)
	}
	return &cert, nil
}
