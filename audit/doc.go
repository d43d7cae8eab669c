// Package audit records Admin API mutations (docs/protocol.md §9.1 and the seed's
// "Audit Logging" section).
//
// The HTTP layer wraps every request with an audit step that runs outside
// authentication and rate limiting, so 401, 403 and 429 answers are recorded
// too:
//
//	target, ok := routes.Match(r.Method, r.URL.Path) // mutation routes only
//	ev := audit.NewEvent(r, coordinatorID, target, start)
//	ctx := audit.WithEvent(r.Context(), ev)          // inner layers annotate it:
//	    ev.SetPrincipal(name, roles)                 //   after authentication
//	    ev.SetBody(body)                             //   when the handler read the body
//	ev.Finish(status, panicked, errorCode, end)
//	err := sink.Record(context.WithoutCancel(ctx), *ev) // log err; never fail the request
//
// An Event holds no headers, passwords or bodies: only the request's method,
// path, route, query string (values of secret-looking parameters redacted),
// correlation id, client address, user agent, and a SHA-256 fingerprint plus
// a few whitelisted fields of the body.
//
// Sinks: LogSink (one structured INFO line, logger
// "redis-stream-coordinator.audit"), RedisSink (a capped LIST per group or
// stream) and MemorySink (the last events per group, so monitoring can show
// recent mutations when the log sink is configured); Tee combines them.
// RedisSink and MemorySink implement History.
package audit
