// Package batchwire is the binary encoding of the batches of forwarded
// heartbeats that coordinators of one cluster send each other
// (docs/cluster.md, "Forwarding and what it costs"): a batch request
// carries the items a non-owner queued for one owner (each a path, the
// member's headers and its body, unchanged), and the owner's answer
// carries one answer per item (status, headers, body) in the same order.
//
// A body is a uvarint count followed by that many records. A string (a
// path, a header name or value, a body) is a uvarint length and its bytes;
// a header is a uvarint count of fields, each a name and a uvarint count of
// values; a status is a uvarint. Nothing is escaped or copied into an
// intermediate form, so encoding an item costs about one copy of its bytes.
// The format is internal to one release of the coordinator: ContentType
// names its version (with the way batches are authenticated: v=2 since
// the mark signs the body's digest and length from a header), and an
// owner refuses any other.
package batchwire
