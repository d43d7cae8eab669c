package contract

// ConsumptionStatus is how a shard's consumption is going, or a group's
// (its worst shard's), by the rules of docs/observability.md
// ("Consumption status"), evaluated over a sliding window of the lag
// refresher's samples.
type ConsumptionStatus string

// The consumption statuses, from the least to the most severe (Severity).
const (
	// ConsumptionUnknown: not evaluated yet (no lag-refresh round since the
	// group was placed on the coordinator that answers). Groups only.
	ConsumptionUnknown ConsumptionStatus = "UNKNOWN"
	// ConsumptionOK: nothing below applies.
	ConsumptionOK ConsumptionStatus = "OK"
	// ConsumptionPaused: no member may read the shard: an operator paused
	// it or a live offset reset holds it.
	ConsumptionPaused ConsumptionStatus = "PAUSED"
	// ConsumptionLagging: the lag grew over the window.
	ConsumptionLagging ConsumptionStatus = "LAGGING"
	// ConsumptionRewound: the group's position moved back within the
	// window outside a live reset.
	ConsumptionRewound ConsumptionStatus = "REWOUND"
	// ConsumptionStalled: a member holds the shard, entries wait or arrive,
	// and the group's position does not move.
	ConsumptionStalled ConsumptionStatus = "STALLED"
	// ConsumptionStopped: entries wait or arrive and no live member holds
	// the shard (no member, or all of them gone).
	ConsumptionStopped ConsumptionStatus = "STOPPED"
)

// ConsumptionStatuses lists the statuses a shard can have, from the least
// to the most severe.
var ConsumptionStatuses = []ConsumptionStatus{ConsumptionOK, ConsumptionPaused, ConsumptionLagging,
	ConsumptionRewound, ConsumptionStalled, ConsumptionStopped}

// Severity orders the statuses: a group's status is its shards' most
// severe. UNKNOWN ranks below OK, an unlisted status below both.
func (s ConsumptionStatus) Severity() int {
	for i, c := range ConsumptionStatuses {
		if c == s {
			return i + 1
		}
	}
	if s == ConsumptionUnknown {
		return 0
	}
	return -1
}

// StatusView is the body of GET GroupStatus: the group's consumption
// status and each shard's, with the evidence each was decided on.
type StatusView struct {
	StreamPrefix  string `json:"streamPrefix"`
	ConsumerGroup string `json:"consumerGroup"`
	// Status is the most severe status of the shards; UNKNOWN before the
	// first evaluation.
	Status ConsumptionStatus `json:"status"`
	// Since is when the group took Status (null while UNKNOWN).
	Since Instant `json:"since"`
	// EvaluatedAt is the time of the last sample (null while UNKNOWN).
	EvaluatedAt Instant `json:"evaluatedAt"`
	// Counts holds the number of shards in each status (every status of
	// ConsumptionStatuses, 0 included).
	Counts map[ConsumptionStatus]int `json:"counts"`
	// WindowSamples is the size of the window (status.window): each
	// shard's status is decided on at most that many samples.
	WindowSamples int           `json:"windowSamples"`
	Shards        []ShardStatus `json:"shards"`
}

// ShardStatus is one shard of a StatusView.
type ShardStatus struct {
	ShardIndex int               `json:"shardIndex"`
	Status     ConsumptionStatus `json:"status"`
	// Since is the time of the sample at which the shard took Status.
	Since    Instant        `json:"since"`
	Evidence StatusEvidence `json:"evidence"`
}

// StatusEvidence is what a shard's status was decided on: its window of
// samples.
type StatusEvidence struct {
	// WindowStart and WindowEnd are the times of the window's first and
	// last samples; Samples how many it holds.
	WindowStart Instant `json:"windowStart"`
	WindowEnd   Instant `json:"windowEnd"`
	Samples     int     `json:"samples"`
	// LagStart and LagEnd are the lag (entries not yet delivered to the
	// group) at the window's first and last samples; null when Redis could
	// not tell.
	LagStart *int64 `json:"lagStart"`
	LagEnd   *int64 `json:"lagEnd"`
	// IngestRate is the entries added to the shard per second over the
	// window, ConsumeRate the entries delivered to the group per second
	// (added minus lag growth); null with fewer than two samples or an
	// unknown lag.
	IngestRate  *float64 `json:"ingestRate"`
	ConsumeRate *float64 `json:"consumeRate"`
	// Position is the group's last-delivered id at the last sample; null
	// where the consumer group does not exist on the shard.
	Position *string `json:"position"`
	// Holders is the number of live members holding the shard at the last
	// sample; Paused whether it was paused then.
	Holders int  `json:"holders"`
	Paused  bool `json:"paused"`
}

// ScalingView is the body of GET GroupScaling: how many members the group
// needs so that its backlog drains within the target drain time while it
// keeps up with its ingest (docs/observability.md, "Scaling signal").
// KEDA's metrics-api scaler reads desiredMembers.
type ScalingView struct {
	StreamPrefix  string `json:"streamPrefix"`
	ConsumerGroup string `json:"consumerGroup"`
	// DesiredMembers is the signal: RecommendedMembers after hysteresis (a
	// rise at once, a fall only after it held for scaling.scale-down-delay).
	// Before the first evaluation it is the live member count, bounded as
	// the recommendation is.
	DesiredMembers int `json:"desiredMembers"`
	// RecommendedMembers is ceil((ingestRate + backlog /
	// targetDrainSeconds) / consumeRatePerMember), bounded by
	// scaling.min-members, scaling.max-members and the shard count.
	RecommendedMembers int `json:"recommendedMembers"`
	// Members is the number of live members holding shards now; ShardCount
	// bounds the signal (a member beyond it would read nothing).
	Members    int `json:"members"`
	ShardCount int `json:"shardCount"`
	// IngestRate is the entries added per second to all shards over the
	// window; Backlog the entries not yet delivered, summed over the shards.
	IngestRate float64 `json:"ingestRate"`
	Backlog    int64   `json:"backlog"`
	// ConsumeRatePerMember is the entries one member delivers per second:
	// measured (ConsumeRateMeasured) while members held shards and entries
	// waited, else the last such measure, else
	// scaling.fallback-rate-per-member.
	ConsumeRatePerMember float64 `json:"consumeRatePerMember"`
	ConsumeRateMeasured  bool    `json:"consumeRateMeasured"`
	// PredictedDrainSeconds is the time DesiredMembers would take to drain
	// the backlog at ConsumeRatePerMember each while entries keep arriving
	// at IngestRate: backlog / (desiredMembers × consumeRatePerMember −
	// ingestRate); 0 without backlog, null when they cannot catch up.
	PredictedDrainSeconds *float64 `json:"predictedDrainSeconds"`
	TargetDrainSeconds    float64  `json:"targetDrainSeconds"`
	// Since is when DesiredMembers took its value, EvaluatedAt the time of
	// the last sample (both null before the first evaluation).
	Since       Instant `json:"since"`
	EvaluatedAt Instant `json:"evaluatedAt"`
}
