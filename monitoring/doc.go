// Package monitoring builds the data-plane projections of the monitoring
// API: a group's stream shard offsets (docs/protocol.md §2.6 /offsets, and the rows the
// Grafana endpoints of docs/protocol.md §2.7 reuse) combine what Redis reports about each
// shard (package streams) with what the coordinator knows about the group
// (package group: owners and member-reported progress) and the observed
// produced/consumed rates.
//
// Observation (Redis reads, rates) and projection (merging with a group
// snapshot) are separate steps, so a caller may cache observations (see
// streams.Cache) while projecting each one onto fresh group state.
package monitoring
