package persistence

import (
	"encoding/json"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// Versions of the stored form (see the package documentation).
const (
	// SchemaVersion is the only schema this codec reads and writes.
	SchemaVersion = 1
	// LayoutVersion is the layout this codec writes: member records in
	// their own documents beside the aggregate.
	LayoutVersion = 2
	// LegacyLayoutVersion is the Kotlin server's layout: members and
	// targets inside the aggregate. It is read, never written.
	LegacyLayoutVersion = 1
)

// defaultRebalanceTimeoutMs is a member's rebalanceTimeoutMs when the
// stored record lacks it (docs/protocol.md §8.5 defaults on read).
const defaultRebalanceTimeoutMs = 60000

// CheckVersions returns an ErrCorrupt-wrapped error unless schema is
// SchemaVersion and layout is LegacyLayoutVersion or LayoutVersion.
func CheckVersions(schema, layout int) error {
	if schema != SchemaVersion {
		return fmt.Errorf("unsupported schemaVersion %d: %w", schema, ErrCorrupt)
	}
	if layout != LegacyLayoutVersion && layout != LayoutVersion {
		return fmt.Errorf("unsupported layoutVersion %d: %w", layout, ErrCorrupt)
	}
	return nil
}

// Encode returns the complete layout-2 document of g for Create: the
// aggregate at storeRevision 1 and one document per member record. A target
// entry without a member record has no document to live in and is dropped.
func Encode(g *group.Group) Document {
	doc := Document{
		Aggregate:     encodeAggregate(g, 1),
		Members:       make(map[string][]byte, len(g.Members)),
		SchemaVersion: SchemaVersion,
		LayoutVersion: LayoutVersion,
	}
	if !g.UpdatedAt.IsZero() {
		doc.UpdatedAt = g.UpdatedAt.Time()
	}
	for id := range g.Members {
		doc.Members[id] = encodeMember(g, id)
	}
	return doc
}

// Rewrite returns a mutation that writes the whole of g: the aggregate and
// every member document. A group decoded from a document whose
// LayoutVersion is LegacyLayoutVersion must be committed with Rewrite once
// before any MutationOf delta, because the legacy aggregate still embeds
// the member records and targets that a delta would leave stale.
func Rewrite(g *group.Group, now time.Time) Mutation {
	doc := Encode(g)
	return Mutation{Aggregate: doc.Aggregate, PutMembers: doc.Members, UpdatedAt: now}
}

// MutationOf returns the delta that persists recs, which have already been
// applied to g: a MetaRecord rewrites the aggregate from g.Meta; a member,
// target or target-removed record puts that member's document as it is in g
// now, or deletes it when g no longer has the member record (pruned). A
// DeletedRecord contributes nothing: the caller deletes the group with
// Store.Delete instead of committing.
func MutationOf(g *group.Group, recs []group.Record, now time.Time) Mutation {
	m := Mutation{UpdatedAt: now}
	touched := map[string]bool{}
	for _, r := range recs {
		switch r := r.(type) {
		case group.MetaRecord:
			m.Aggregate = encodeAggregate(g, 0)
		case group.MemberRecord:
			touched[r.Member.MemberID] = true
		case group.MemberRemovedRecord:
			touched[r.MemberID] = true
		case group.TargetRecord:
			touched[r.MemberID] = true
		case group.TargetRemovedRecord:
			touched[r.MemberID] = true
		case group.DeletedRecord:
		default:
			panic(fmt.Sprintf("persistence: unknown record type %T", r))
		}
	}
	for _, id := range slices.Sorted(maps.Keys(touched)) {
		if g.Members[id] == nil {
			m.DeleteMembers = append(m.DeleteMembers, id)
			continue
		}
		if m.PutMembers == nil {
			m.PutMembers = map[string][]byte{}
		}
		m.PutMembers[id] = encodeMember(g, id)
	}
	return m
}

// encodeAggregate marshals g's group-level fields with the given
// storeRevision and empty member and target maps.
func encodeAggregate(g *group.Group, rev Revision) []byte {
	return mustMarshal(storeAggregate(&g.Meta, rev))
}

// encodeMember marshals member id of g with its target entry.
func encodeMember(g *group.Group, id string) []byte {
	var target *contract.ShardSet
	if t, ok := g.Targets[id]; ok {
		target = &t
	}
	return mustMarshal(storeMember(g.Members[id], target))
}

// mustMarshal marshals values whose types cannot fail to encode.
func mustMarshal(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		panic(fmt.Sprintf("persistence: encode %T: %v", v, err))
	}
	return b
}

// storeRevisionField matches the aggregate's top-level storeRevision member.
// It cannot match inside a JSON string (quotes there are escaped) and it
// matches only a numeric value, so the first match is the top-level one in
// every aggregate this codec writes and in the legacy ones.
var storeRevisionField = regexp.MustCompile(`"storeRevision"\s*:\s*-?[0-9]+`)

// WithStoreRevision returns aggregate with its storeRevision set to rev, so
// that it equals the store's revision. An aggregate without the member is
// returned unchanged. The Redis store does the same in Lua.
func WithStoreRevision(aggregate []byte, rev Revision) []byte {
	loc := storeRevisionField.FindIndex(aggregate)
	if loc == nil {
		return aggregate
	}
	out := make([]byte, 0, len(aggregate)+8)
	out = append(out, aggregate[:loc[0]]...)
	out = append(out, `"storeRevision":`...)
	out = strconv.AppendInt(out, int64(rev), 10)
	return append(out, aggregate[loc[1]:]...)
}

// Decode rebuilds the group stored in doc by applying a MetaRecord, a
// MemberRecord per member and a TargetRecord per target entry to
// group.New(). Members and targets embedded in the aggregate (layout 1) are
// applied first, then the member documents, which win. rev is the store's
// revision; the aggregate's own storeRevision is not consulted.
//
// Every failure wraps ErrCorrupt: undecodable JSON, an unsupported schema
// or layout version, a missing group key, a member document whose memberId
// differs from its key, or a shard count that is neither stored nor
// derivable from the legacy shardCountsByVersion.
func Decode(doc Document, rev Revision) (*group.Group, error) {
	if err := CheckVersions(doc.SchemaVersion, doc.LayoutVersion); err != nil {
		return nil, err
	}
	g, err := decode(doc)
	if err != nil {
		return nil, fmt.Errorf("decode group at revision %d: %w: %w", rev, ErrCorrupt, err)
	}
	return g, nil
}

func decode(doc Document) (*group.Group, error) {
	var agg storedAggregate
	if err := json.Unmarshal(doc.Aggregate, &agg); err != nil {
		return nil, fmt.Errorf("aggregate: %w", err)
	}
	meta, err := agg.meta()
	if err != nil {
		return nil, err
	}
	g := group.New()
	g.Apply(group.MetaRecord{Meta: meta})
	for _, id := range slices.Sorted(maps.Keys(agg.Members)) {
		m, err := decodeMember(id, agg.Members[id])
		if err != nil {
			return nil, err
		}
		g.Apply(group.MemberRecord{Member: m.member()})
	}
	for _, id := range slices.Sorted(maps.Keys(agg.TargetAssignments)) {
		g.Apply(group.TargetRecord{MemberID: id, Shards: agg.TargetAssignments[id]})
	}
	for _, id := range slices.Sorted(maps.Keys(doc.Members)) {
		m, err := decodeMember(id, doc.Members[id])
		if err != nil {
			return nil, err
		}
		g.Apply(group.MemberRecord{Member: m.member()})
		if m.TargetAssignment != nil {
			g.Apply(group.TargetRecord{MemberID: id, Shards: *m.TargetAssignment})
		} else {
			g.Apply(group.TargetRemovedRecord{MemberID: id})
		}
	}
	return g, nil
}

// decodeMember reads one member document (or a legacy member record
// embedded in the aggregate) stored under id, applying the read defaults of
// docs/protocol.md §8.5.
func decodeMember(id string, raw []byte) (*storedMember, error) {
	m := &storedMember{RebalanceTimeoutMs: defaultRebalanceTimeoutMs}
	if err := json.Unmarshal(raw, m); err != nil {
		return nil, fmt.Errorf("member %s: %w", id, err)
	}
	if m.MemberID == "" {
		m.MemberID = id
	}
	if m.MemberID != id {
		return nil, fmt.Errorf("member stored as %s has memberId %s", id, m.MemberID)
	}
	return m, nil
}

// KeyOf reads the group key from an aggregate without decoding the rest.
func KeyOf(aggregate []byte) (group.Key, error) {
	var k struct {
		StreamPrefix  string `json:"streamPrefix"`
		ConsumerGroup string `json:"consumerGroup"`
	}
	if err := json.Unmarshal(aggregate, &k); err != nil {
		return group.Key{}, fmt.Errorf("aggregate: %w: %w", ErrCorrupt, err)
	}
	if k.StreamPrefix == "" || k.ConsumerGroup == "" {
		return group.Key{}, fmt.Errorf("aggregate lacks streamPrefix or consumerGroup: %w", ErrCorrupt)
	}
	return group.Key{StreamPrefix: k.StreamPrefix, ConsumerGroup: k.ConsumerGroup}, nil
}

// isoMillis is the stored updatedAt format (ISO-8601 UTC, milliseconds).
const isoMillis = "2006-01-02T15:04:05.000Z"

// FormatTime formats a document's UpdatedAt for a store field.
func FormatTime(t time.Time) string { return t.UTC().Format(isoMillis) }

// ParseTime reads a stored updatedAt (any RFC 3339 form; empty is the zero
// time). A failure wraps ErrCorrupt.
func ParseTime(s string) (time.Time, error) {
	if s == "" {
		return time.Time{}, nil
	}
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return time.Time{}, fmt.Errorf("updatedAt %q: %w", s, ErrCorrupt)
	}
	return t, nil
}
