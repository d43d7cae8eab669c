// Package monitoring builds the data-plane projections of the monitoring
// API: a group's stream shard offsets (docs/protocol.md §2.6 /offsets, and the rows the
// Grafana endpoints of docs/protocol.md §2.7 reuse) combine what Redis reports about each
// shard (package streams) with what the coordinator knows about the group
// (package group: owners and member-reported progress) and the observed
// produced/consumed rates.
//
// A shard's lag counts the entries not yet delivered to the group: Redis's,
// or the stream's length where Redis cannot compute it and every entry is
// unread, or where the consumer group does not exist on the stream yet
// (Reader.Observe). GroupOffsets adds each shard's lag as time, the age of
// its oldest unread entry.
//
// Statuses keeps, per group placed on the coordinator, the consumption
// status and scaling signal (package health) that the lag refresher feeds
// with its observations.
//
// Observation (Redis reads, rates) and projection (merging with a group
// snapshot) are separate steps, so a caller may cache observations (see
// streams.Cache) while projecting each one onto fresh group state.
package monitoring
