// Package tlsfiles keeps a TLS certificate and its private key loaded from
// two PEM files and loads them again when the files change, so that a
// renewed certificate (a rotated Kubernetes Secret, cert-manager, an ACME
// client) is used without a restart.
//
// A Pair serves tls.Config.GetCertificate (a server) and
// GetClientCertificate (a client that presents a certificate). A handshake
// looks at the files at most once per CheckInterval, and then only stats
// them; when either is another file than at the last look (one renamed
// over it) or its size or modification time differs, both are read again.
// A pair that does not load (a file missing or half written, a key that
// does not match the certificate) leaves the previous certificate in use
// and is logged as an error, once per change of the files.
package tlsfiles
