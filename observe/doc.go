// Package observe holds what the HTTP edge reports about itself: the
// requests it served (ServedRequest, RequestObserver) and the health report
// it serves (HealthReport, HealthChecker). It sits below both the edge
// (package http, which reports) and package metrics (which counts), so
// that metrics does not import the edge it observes (docs/architecture.md
// §2.1). It holds types only: no I/O, no goroutine.
package observe
