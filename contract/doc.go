// Package contract is the coordinator's whole wire (docs/protocol.md):
// what every client, in any language, and the server agree on.
//
//   - The member protocol's messages (HeartbeatRequest, HeartbeatResponse
//     and their statuses) and value types (ShardSet, Instant).
//   - The data-plane contract clients implement: stream keys and the key
//     pattern, Redis Cluster slots and the producers' ShardFor
//     (docs/protocol.md §6.7), and the dead-letter entry's fields.
//   - Every request and answer body of the Admin, Monitoring and Grafana
//     routes: the admin and live-operation requests, the group views
//     (GroupView, AssignmentsView, Member, Migration, LiveReset, …) and
//     their list envelopes (GroupList, MemberList, ResetList, …), offsets,
//     messages, dead letters, the Grafana rows, the cluster view, health,
//     login and session, audit records. Package group projects its state
//     into these; nothing else declares a body.
//   - The one list of error codes (Code) and the error body.
//   - The route table (Routes: method, template, operation, scope, audit
//     action, mutation, feature, request and answer types), the route
//     templates, the URL builders clients use and the default base path.
//   - The errors the runtime answers with besides domain and store errors
//     (mapped to statuses only by the HTTP layer).
//
// It is a leaf: it imports no package of the project, so the pure domain
// (package group) and every client can import it.
package contract
