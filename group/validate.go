package group

import (
	"fmt"
	"slices"
	"strings"
	"unicode"
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
	return &Error{Code: CodeInvalidRequest, Message: strings.Join(v, "; ")}
}

func (v *violations) notBlank(field, value string) {
	if strings.TrimSpace(value) == "" {
		v.add(field, "must not be blank")
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

// atMost adds a violation unless n ≤ most.
func (v *violations) atMost(field string, n, most int) {
	if n > most {
		v.add(field, fmt.Sprintf("must be less than or equal to %d", most))
	}
}

const maxNameBytes = 200

// ValidateName checks a stream prefix, consumer group or member id (§3):
// 1–200 bytes of printable characters without '/', '{', '}' or whitespace.
// ValidateKey adds the rule of a (prefix, group) pair.
func ValidateName(field, value string) error {
	if field == "streamPrefix" && strings.ContainsAny(value, "{}") {
		return Errorf(CodeInvalidRequest, "streamPrefix must not contain Redis Cluster hash tag braces")
	}
	ok := len(value) >= 1 && len(value) <= maxNameBytes
	for _, r := range value {
		if !ok {
			break
		}
		ok = r != unicode.ReplacementChar && unicode.IsPrint(r) && !unicode.IsSpace(r) && !strings.ContainsRune("/{}", r)
	}
	if !ok {
		return Errorf(CodeInvalidRequest, "%s: must be 1-%d bytes of printable characters without '/', '{', '}' or whitespace", field, maxNameBytes)
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
		return Errorf(CodeInvalidRequest, "consumerGroup: must not contain ':' unless it equals the streamPrefix (the group's Redis keys <prefix>:{streamPrefix:consumerGroup}:… must name one group only)")
	}
	if x, ok := streamLevelTag(k.StreamPrefix + ":" + k.ConsumerGroup); ok {
		return Errorf(CodeInvalidRequest, "consumerGroup: must not make the Redis hash tag %s, which is the stream-level group of %s (prefix and group %s)", k.HashTag(), x, x)
	}
	return nil
}

// ValidateHeartbeat applies the validation rules of §3 to a heartbeat
// (HTTP 400 INVALID_REQUEST). Lists are capped at MaxShardCount entries.
func ValidateHeartbeat(req *HeartbeatRequest, s Settings) error {
	var v violations
	v.atLeast("protocolVersion", req.ProtocolVersion, 1)
	v.notBlank("requestId", req.RequestID)
	v.notBlank("memberId", req.MemberID)
	if c := req.RuntimeConsumerCapacity; c == nil {
		v.add("runtimeConsumerCapacity", "must not be null")
	} else {
		v.atLeast("runtimeConsumerCapacity.runtimeMaxConcurrency", c.RuntimeMaxConcurrency, 1)
		v.atLeast("runtimeConsumerCapacity.availableConcurrency", c.AvailableConcurrency, 0)
	}
	for field, n := range map[string]int{
		"ownedShards": len(req.OwnedShards), "revokingShards": len(req.RevokingShards), "shardProgress": len(req.ShardProgress),
	} {
		if n > s.MaxShardCount {
			v.add(field, fmt.Sprintf("must not list more than %d shards", s.MaxShardCount))
		}
	}
	return v.err()
}

// ValidateCreate checks a create body (§2.2).
func ValidateCreate(req *CreateRequest, s Settings) error {
	var v violations
	if n := req.InitialShardCount; n != nil && v.atLeast("initialShardCount", *n, 1) {
		v.atMost("initialShardCount", *n, s.MaxShardCount)
	}
	v.notBlank("requestedBy", req.RequestedBy)
	return v.err()
}

// ValidateDelete checks a delete body (§2.3).
func ValidateDelete(req *DeleteRequest) error { return validateWhoAndWhy(req.RequestedBy, req.Reason) }

// validateWhoAndWhy checks the requestedBy and reason every destructive
// request carries: neither may be blank.
func validateWhoAndWhy(requestedBy, reason string) error {
	var v violations
	v.notBlank("requestedBy", requestedBy)
	v.notBlank("reason", reason)
	return v.err()
}

// ValidateScale checks a scale body (§2.5, §6.2 step 1).
func ValidateScale(req *ScaleRequest, s Settings) error {
	var v violations
	switch n := req.TargetShardCount; {
	case n == nil:
		v.add("targetShardCount", "must not be null")
	case *n < 0:
		return Errorf(CodeInvalidRequest, "targetShardCount must be zero or positive")
	default:
		v.atMost("targetShardCount", *n, s.MaxShardCount)
	}
	v.notBlank("requestedBy", req.RequestedBy)
	return v.err()
}

// ValidateRollback checks a rollback body (§2.5).
func ValidateRollback(req *RollbackRequest) error {
	return validateWhoAndWhy(req.RequestedBy, req.Reason)
}
