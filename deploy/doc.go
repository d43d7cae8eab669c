// Package deploy holds the monitoring stack's files — docker-compose.yml,
// the Prometheus scrape configuration and alert rules (prometheus/), the
// Grafana provisioning and dashboard (grafana/) and the coordinator's
// configuration for the stack (coordinator/) — and, in its tests, the
// checks that keep them true to the code: promtool checks and unit tests
// of the alert rules, a real Prometheus server scraping an in-process
// coordinator, and the dashboard's metrics and API paths checked against
// the metrics registry and the HTTP router. It has no Go API.
//
// promtool and prometheus come from the Debian package "prometheus". The
// tests that need them skip when they are missing, unless the CI
// environment variable is set (.ci/run installs the package).
package deploy
