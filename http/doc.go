// Package httpapi is the coordinator's REST edge (docs/protocol.md §0, §2): member
// heartbeats, the Admin API and the monitoring API, served with
// julienschmidt/httprouter under a configurable base path (default
// contract.BasePath).
//
// It owns JSON in and out, request validation (docs/protocol.md §3), and the one mapping from
// errors to HTTP statuses and error bodies (docs/protocol.md §0): domain errors
// (*group.Error), cluster refusals, actor runtime errors (contract.Err*) and
// store outcomes (persistence.Classify) become `{"status","errorCode","message"}`
// answers, with Retry-After and X-Coordinator-Owner, by the one table
// outcomes (respond.go) and nowhere else. A heartbeat that was not served
// is answered by API.failHeartbeat alone: 200 with status RETRY when its
// outcome's row says it may succeed as it is (a cluster refusal, an owner
// that did not answer, a heartbeat shed or not stored by the runtime:
// contract.ErrShed, contract.ErrNotStored), else its error answer; it is
// the one place an outcome becomes RETRY. It talks to the actor system
// only through the small Runtime interface.
//
// With a cluster, the edge of a group's routes (forward.go) proves a
// request's forwarded mark (forwardauth.go), takes the routing decision
// (cluster.Node.Route) once, and serves the request, refuses it, or
// forwards it to the group's coordinator (heartbeats in batches,
// forward_batch.go) before any middleware runs.
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
