package group

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// violations collects bean-validation style messages ("field: message").
type violations []string

func (v *violations) add(field, msg string) { *v = append(*v, field+": "+msg) }

// err returns INVALID_REQUEST with the messages sorted and joined by "; ".
func (v violations) err() error {
	if len(v) == 0 {
		return nil
	}
	slices.Sort(v)
	return &Error{Code: contract.CodeInvalidRequest, Message: strings.Join(v, "; ")}
}

func (v *violations) notBlank(field, value string) {
	if strings.TrimSpace(value) == "" {
		v.add(field, "must not be blank")
	}
}

// between adds a violation unless least ≤ n ≤ most, with the messages of
// bean validation's @Min and @Max.
func (v *violations) between(field string, n, least, most int64) {
	if n < least {
		v.add(field, fmt.Sprintf("must be greater than or equal to %d", least))
	} else {
		v.atMost64(field, n, most)
	}
}

// instant adds a violation unless t is unset (null) or within
// [MinReportedInstant, MaxReportedInstant].
func (v *violations) instant(field string, t contract.Instant) {
	if !t.IsZero() && (t < MinReportedInstant || t > MaxReportedInstant) {
		v.add(field, "must be null or between "+MinReportedInstant.String()+" and "+MaxReportedInstant.String())
	}
}

// atLeast adds a violation unless n ≥ least; it reports whether n is.
func (v *violations) atLeast(field string, n, least int) bool {
	if n < least {
		v.add(field, fmt.Sprintf("must be greater than or equal to %d", least))
		return false
	}
	return true
}

// atMost64 adds a violation unless n ≤ most.
func (v *violations) atMost64(field string, n, most int64) {
	if n > most {
		v.add(field, fmt.Sprintf("must be less than or equal to %d", most))
	}
}

// atMost adds a violation unless n ≤ most.
func (v *violations) atMost(field string, n, most int) {
	if n > most {
		v.add(field, fmt.Sprintf("must be less than or equal to %d", most))
	}
}

// Bounds of free-text fields, in bytes (docs/protocol.md §3 as we add to it; the OpenAPI
// schemas state the same).
const (
	maxNameBytes   = 200  // names, ids, memberName, requestedBy, streamKey
	maxReasonBytes = 1000 // reason
	maxEntryBytes  = 64   // stream entry ids, deprecatedAfter
)

// Bounds of the numbers a heartbeat reports about its member
// (docs/protocol.md §4.1, "Bounds"). They keep a member from claiming
// values that skew what the coordinator computes from them (the work
// assignor divides a shard's work by runtimeMaxConcurrency; monitoring
// sums pending counts and shows the newest updatedAt) or that no JSON
// number carries exactly. The validator is pure: times are bounded by a
// fixed range, not by a clock.
const (
	// MaxConcurrency bounds runtimeMaxConcurrency (1..MaxConcurrency) and
	// availableConcurrency (0..MaxConcurrency).
	MaxConcurrency = 65536
	// MaxReportedCount bounds a revoke report's inFlight and a progress
	// report's pendingCount (0..MaxReportedCount, 10^12): far above what a
	// Redis consumer group can hold pending, and low enough that summing
	// one per shard over millions of shards does not overflow.
	MaxReportedCount = 1_000_000_000_000
	// MaxReportedEpoch bounds memberEpoch and metadataVersion from above
	// (2^53-1, the largest integer every JSON parser carries exactly); the
	// coordinator issues both and they never come near it. memberEpoch
	// below -1 is the status INVALID_REQUEST of docs/protocol.md §4.2 step 8,
	// not a validation error; metadataVersion is at least 0.
	MaxReportedEpoch = 1<<53 - 1
)

// MinReportedInstant and MaxReportedInstant bound the times a heartbeat
// reports (revokingShards[].ackedAt, shardProgress[].updatedAt) when they
// are not null: 2000-01-01T00:00:00.000Z to 2199-12-31T23:59:59.999Z.
const (
	MinReportedInstant contract.Instant = 946_684_800_000
	MaxReportedInstant contract.Instant = 7_258_118_400_000 - 1
)

// atMostBytes adds a violation when s is longer than most bytes.
func (v *violations) atMostBytes(field, s string, most int) {
	if len(s) > most {
		v.add(field, fmt.Sprintf("must be at most %d bytes", most))
	}
}

// optionalAtMostBytes is atMostBytes for a nullable field.
func (v *violations) optionalAtMostBytes(field string, s *string, most int) {
	if s != nil {
		v.atMostBytes(field, *s, most)
	}
}

// firstInvalid runs check on the items of list in order and keeps the
// violations of the first item that has any, named "list[i]". Each item is
// checked unnamed first and named only when it fails, so that checking a
// valid list formats nothing and allocates the same however long it is.
func firstInvalid[T any](v *violations, list string, items []T, check func(v *violations, field string, item T)) {
	var probe violations
	for i, item := range items {
		if check(&probe, "", item); len(probe) > 0 {
			check(v, fmt.Sprintf("%s[%d]", list, i), item)
			return
		}
	}
}

// shardIndex adds a violation unless 0 ≤ i < s.MaxShardCount (no group has
// more shards; the domain checks the group's own count).
func (v *violations) shardIndex(field string, i int, s Settings) bool {
	if i < 0 || i >= s.MaxShardCount {
		v.add(field, fmt.Sprintf("must be between 0 and %d", s.MaxShardCount-1))
		return false
	}
	return true
}

// ValidateName checks a stream prefix, consumer group or member id (docs/protocol.md §3):
// 1–200 bytes of printable characters without '/', '{', '}' or whitespace.
// ValidateKey adds the rule of a (prefix, group) pair.
func ValidateName(field, value string) error {
	if field == "streamPrefix" && strings.ContainsAny(value, "{}") {
		return Errorf(contract.CodeInvalidRequest, "streamPrefix must not contain Redis Cluster hash tag braces")
	}
	ok := len(value) >= 1 && len(value) <= maxNameBytes
	for _, r := range value {
		if !ok {
			break
		}
		ok = r != unicode.ReplacementChar && unicode.IsPrint(r) && !unicode.IsSpace(r) && !strings.ContainsRune("/{}", r)
	}
	if !ok {
		return Errorf(contract.CodeInvalidRequest, "%s: must be 1-%d bytes of printable characters without '/', '{', '}' or whitespace", field, maxNameBytes)
	}
	return nil
}

// ValidateKey checks a pair of valid names so that its Key.HashTag names it
// alone: a consumer group name may not contain ':' unless it equals its
// stream prefix (the group a stream-level create makes), and a pair may
// not read as another prefix's stream-level group ({a:b:a:b} is the
// stream-level group of a:b, so prefix a:b:a with group b is refused).
func ValidateKey(k Key) error {
	if k.ConsumerGroup == k.StreamPrefix {
		return nil
	}
	if strings.Contains(k.ConsumerGroup, ":") {
		return Errorf(contract.CodeInvalidRequest, "consumerGroup: must not contain ':' unless it equals the streamPrefix (the group's Redis keys <prefix>:{streamPrefix:consumerGroup}:… must name one group only)")
	}
	if x, ok := streamLevelTag(k.StreamPrefix + ":" + k.ConsumerGroup); ok {
		return Errorf(contract.CodeInvalidRequest, "consumerGroup: must not make the Redis hash tag %s, which is the stream-level group of %s (prefix and group %s)", k.HashTag(), x, x)
	}
	return nil
}

// ValidateHeartbeat applies the validation rules of docs/protocol.md §3 to a heartbeat
// (HTTP 400 INVALID_REQUEST). Lists are capped at MaxShardCount entries.
func ValidateHeartbeat(req *contract.HeartbeatRequest, s Settings) error {
	var v violations
	v.atLeast("protocolVersion", req.ProtocolVersion, 1)
	v.notBlank("requestId", req.RequestID)
	v.notBlank("memberId", req.MemberID)
	if c := req.RuntimeConsumerCapacity; c == nil {
		v.add("runtimeConsumerCapacity", "must not be null")
	} else {
		v.between("runtimeConsumerCapacity.runtimeMaxConcurrency", int64(c.RuntimeMaxConcurrency), 1, MaxConcurrency)
		v.between("runtimeConsumerCapacity.availableConcurrency", int64(c.AvailableConcurrency), 0, MaxConcurrency)
	}
	v.atMost64("memberEpoch", req.MemberEpoch, MaxReportedEpoch) // below -1: status INVALID_REQUEST (§4.2 step 8)
	v.between("metadataVersion", req.MetadataVersion, 0, MaxReportedEpoch)
	v.atMostBytes("requestId", req.RequestID, maxNameBytes)
	v.atMostBytes("memberId", req.MemberID, maxNameBytes)
	v.optionalAtMostBytes("memberName", req.MemberName, maxNameBytes)
	for _, l := range [...]struct {
		field string
		n     int
	}{{"ownedShards", len(req.OwnedShards)}, {"revokingShards", len(req.RevokingShards)}, {"shardProgress", len(req.ShardProgress)}} {
		if l.n > s.MaxShardCount {
			v.add(l.field, fmt.Sprintf("must not list more than %d shards", s.MaxShardCount))
		}
	}
	if len(v) > 0 {
		return v.err() // the lists may be long: check their items only once they are bounded
	}
	// One violation per list at most, so that the message stays short.
	firstInvalid(&v, "ownedShards", req.OwnedShards, func(v *violations, field string, shard int) {
		v.shardIndex(field+".shardIndex", shard, s)
	})
	firstInvalid(&v, "revokingShards", req.RevokingShards, func(v *violations, field string, r contract.RevokeReport) {
		v.shardIndex(field+".shard.shardIndex", r.Shard.ShardIndex, s)
		v.between(field+".inFlight", r.InFlight, 0, MaxReportedCount)
		v.instant(field+".ackedAt", r.AckedAt)
	})
	firstInvalid(&v, "shardProgress", req.ShardProgress, func(v *violations, field string, p contract.ShardProgress) {
		v.shardIndex(field+".shard.shardIndex", p.Shard.ShardIndex, s)
		v.optionalAtMostBytes(field+".streamKey", p.StreamKey, maxNameBytes)
		v.optionalAtMostBytes(field+".lastDeliveredId", p.LastDeliveredID, maxEntryBytes)
		v.optionalAtMostBytes(field+".lastAckedId", p.LastAckedID, maxEntryBytes)
		v.between(field+".pendingCount", p.PendingCount, 0, MaxReportedCount)
		v.instant(field+".updatedAt", p.UpdatedAt)
	})
	return v.err()
}

// ValidateCreate checks a create body (docs/protocol.md §2.2).
func ValidateCreate(req *contract.CreateRequest, s Settings) error {
	var v violations
	if n := req.InitialShardCount; n != nil && v.atLeast("initialShardCount", *n, 1) {
		v.atMost("initialShardCount", *n, s.MaxShardCount)
	}
	if a := req.Assignor; a != nil && (*a == "" || !ValidAssignor(*a)) {
		v.add("assignor", "must be count or work")
	}
	v.who(req.RequestedBy, req.Reason)
	return v.err()
}

// who checks requestedBy (not blank) and reason (optional) against their
// length bounds.
func (v *violations) who(requestedBy string, reason *string) {
	v.notBlank("requestedBy", requestedBy)
	v.atMostBytes("requestedBy", requestedBy, maxNameBytes)
	v.optionalAtMostBytes("reason", reason, maxReasonBytes)
}

// ValidateWho checks the requestedBy (required) and reason (optional) of an
// operator request beyond docs/protocol.md §2 (offset resets, dead-letter
// redrives and deletes) with the same bounds as the others.
func ValidateWho(requestedBy, reason string) error {
	var v violations
	v.who(requestedBy, &reason)
	return v.err()
}

// ValidateDelete checks a delete body (docs/protocol.md §2.3).
func ValidateDelete(req *contract.DeleteRequest) error {
	return validateWhoAndWhy(req.RequestedBy, req.Reason)
}

// validateWhoAndWhy checks the requestedBy and reason every destructive
// request carries: neither may be blank.
func validateWhoAndWhy(requestedBy, reason string) error {
	var v violations
	v.who(requestedBy, &reason)
	v.notBlank("reason", reason)
	return v.err()
}

// ValidateScale checks a scale body (docs/protocol.md §2.5, §6.2 step 1).
func ValidateScale(req *contract.ScaleRequest, s Settings) error {
	var v violations
	switch n := req.TargetShardCount; {
	case n == nil:
		v.add("targetShardCount", "must not be null")
	case *n < 0:
		return Errorf(contract.CodeInvalidRequest, "targetShardCount must be zero or positive")
	default:
		v.atMost("targetShardCount", *n, s.MaxShardCount)
	}
	v.who(req.RequestedBy, req.Reason)
	v.optionalAtMostBytes("deprecatedAfter", req.DeprecatedAfter, maxEntryBytes)
	return v.err()
}

// ValidateRollback checks a rollback body (docs/protocol.md §2.5).
func ValidateRollback(req *contract.RollbackRequest) error {
	return validateWhoAndWhy(req.RequestedBy, req.Reason)
}
