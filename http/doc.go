// Package httpapi is the coordinator's REST edge (docs/protocol.md §0, §2): member
// heartbeats, the Admin API and the monitoring API, served with
// julienschmidt/httprouter under a configurable base path (default
// contract.BasePath).
//
// It owns JSON in and out, request validation (docs/protocol.md §3), and the one mapping from
// errors to HTTP statuses and error bodies (docs/protocol.md §0): domain errors
// (*group.Error), actor runtime errors (contract.Err*) and store error
// classes (persistence.Err*) become `{"status","errorCode","message"}`
// answers here and nowhere else. It talks to the actor system only through
// the small Coordinator interface.
//
// Cross-cutting concerns (authentication, audit, rate limiting, metrics)
// plug in as Middleware: each registered route is described by a Route
// (method, path template, whether it mutates, its audit action), so a
// middleware can decide per route what it does. Options.Security installs
// the access control, audit and rate-limit middlewares and the login and
// session routes (see Security and docs/security.md).
//
// The package never panics on input; a panic in a handler is recovered and
// answered with a 500 JSON error body.
package httpapi
