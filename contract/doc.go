// Package contract is the coordinator's wire (docs/protocol.md): the member
// protocol's messages (HeartbeatRequest, HeartbeatResponse and their
// statuses) and value types (ShardSet, Instant), the admin routes'
// request bodies (CreateRequest, DeleteRequest, ScaleRequest,
// RollbackRequest) and the producer-routing answer (RoutingView), the
// login request and answer (LoginRequest, Login), the offset reset's and
// the dead-letter actions' bodies and answers (OffsetReset,
// OffsetResetResult, ResetPreview, GroupPosition, DeadLetterAction,
// DeadLetterResults), the one list of error
// codes (Code) and the error body, the route templates and the URL
// builders clients use, the default base path, and the errors the runtime
// answers with besides domain and store errors (mapped to statuses only by
// the HTTP layer). The server (packages group, actors, http), the Go
// client, coordctl, the bench and the simulations all take these names
// from here.
//
// It is a leaf: it imports no package of the project, so the pure domain
// (package group) and every client can import it.
package contract
