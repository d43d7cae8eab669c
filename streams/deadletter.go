package streams

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis/go-redis/v9"
)

// ErrNotDeadLetterStream is matched by ResolveDeadLetterStream's errors
// for a name that is not the prefix's dead-letter stream.
var ErrNotDeadLetterStream = errors.New("not a dead-letter stream of the prefix")

// ResolveDeadLetterStream returns the dead-letter stream that a request for
// the groups of prefix names: DeadLetterStream(prefix) when name is blank
// or that very name, ErrNotDeadLetterStream for any other name. The rule is
// exact on purpose: a name merely starting with "<prefix>-" can be another
// prefix's key ("orders-eu:0" is a shard of prefix "orders-eu", and
// "orders-eu-dead-letter" its dead-letter stream), while
// "<prefix>-dead-letter" is nobody else's (no other prefix's shard
// "<Q>:<i>" or dead-letter stream "<Q>-dead-letter" has that name).
func ResolveDeadLetterStream(prefix, name string) (string, error) {
	own := contract.DeadLetterStream(prefix)
	if name != "" && name != own {
		return "", fmt.Errorf("%w: the dead-letter stream of the groups of %s is %s; other streams are not reachable here", ErrNotDeadLetterStream, prefix, own)
	}
	return own, nil
}

// DeadLetterPage is one page of dead letters, newest first: the wire's
// page, and whether the read budget cut it short.
type DeadLetterPage struct {
	contract.DeadLetterPage
	// Truncated: the entries a page may examine (deadLetterScanPages pages'
	// worth, and the read budget MaxReadEntries, MaxReadBytes) ran out
	// before the page was full; NextCursor continues. Not on the wire (the
	// HTTP layer says so in a header).
	Truncated bool
}

var (
	// ErrDeadLetterNotFound is matched by redrive and delete errors for an
	// id that is not in the dead-letter stream.
	ErrDeadLetterNotFound = errors.New("dead letter not found")
	// ErrNotRedrivable is matched by redrive errors for an entry that does
	// not say which shard of the group it came from, or carries no fields.
	ErrNotRedrivable = errors.New("dead letter cannot be redriven")
	// ErrOtherGroup is matched by redrive and delete errors for an entry
	// that another consumer group dead-lettered.
	ErrOtherGroup = errors.New("dead letter of another consumer group")
)

// deadLetterScanPages bounds the entries one DeadLetters call examines:
// at most this many pages' worth, so that a page of a group whose entries
// are rare among other groups' ends early (with a cursor) instead of
// reading the whole stream.
const deadLetterScanPages = 10

// DeadLetters reads one page of the dead-letter stream dlq, newest first,
// starting before cursor (a previous page's NextCursor; blank = the
// newest). With group set, only the entries of that consumer group and
// those that name no group are listed; blank lists every entry. prefix
// names the shards that SourceShard refers to. limit is clamped as the
// message explorer's. A page examines at most deadLetterScanPages × limit
// entries, within the read budget (MaxReadEntries, MaxReadBytes; reads of
// at most limit entries, the first of at most firstReadChunk): it can hold
// fewer than limit entries (even none) while NextCursor says more remain
// (Truncated). It waits for its share of MaxHeldReadBytes as the message
// explorer's pages do (ErrReadBusy when not given in time).
func (o *Operator) DeadLetters(ctx context.Context, dlq, prefix, group, cursor string, limit int) (DeadLetterPage, error) {
	limit = ClampLimit(limit)
	end := "+"
	if cursor != "" {
		if _, err := parseID(cursor); err != nil {
			return DeadLetterPage{}, fmt.Errorf("%w: %w", ErrInvalidCursor, err)
		}
		end = "(" + cursor
	}
	page := DeadLetterPage{DeadLetterPage: contract.DeadLetterPage{Stream: dlq, Entries: []contract.DeadLetter{}}}
	length, err := o.client.XLen(ctx, dlq).Result()
	if err != nil {
		return DeadLetterPage{}, err
	}
	page.Length = length
	// more: entries older than end may remain.
	more := true
	b, err := o.limits.start(ctx, o.pool)
	if err != nil {
		return DeadLetterPage{}, err
	}
	defer b.done(ctx)
	examine := min(deadLetterScanPages*limit, b.maxEntries)
	for more && len(page.Entries) < limit && b.entries < examine && b.left() {
		n := min(limit, examine-b.entries, b.allowance(1))
		msgs, err := o.client.XRevRangeN(ctx, dlq, end, "-", int64(n)).Result()
		if err != nil {
			return DeadLetterPage{}, err
		}
		b.spend(msgs)
		more = len(msgs) == n
		for i, m := range msgs {
			end = "(" + m.ID
			if d := deadLetterOf(m, prefix); group == "" || d.Group == "" || d.Group == group {
				page.Entries = append(page.Entries, d)
			}
			if len(page.Entries) == limit {
				more = more || i < len(msgs)-1
				break
			}
		}
	}
	if more && end != "+" {
		older, err := o.client.XRevRangeN(ctx, dlq, end, "-", 1).Result()
		if err != nil {
			return DeadLetterPage{}, err
		}
		if len(older) > 0 {
			next := strings.TrimPrefix(end, "(")
			page.NextCursor = &next
			page.Truncated = len(page.Entries) < limit
		}
	}
	return page, nil
}

// deadLetterOf decodes one dead-letter entry.
func deadLetterOf(m redis.XMessage, prefix string) contract.DeadLetter {
	d := contract.DeadLetter{ID: m.ID, Fields: map[string]string{}}
	for k, v := range m.Values {
		s := valueString(v)
		switch {
		case k == contract.DeadLetterFieldStream:
			d.SourceStream = s
		case k == contract.DeadLetterFieldID:
			d.SourceID = s
		case k == contract.DeadLetterFieldDeliveries:
			d.Deliveries, _ = strconv.ParseInt(s, 10, 64)
		case k == contract.DeadLetterFieldError:
			d.Error = s
		case k == contract.DeadLetterFieldGroup:
			d.Group = s
		case strings.HasPrefix(k, contract.DeadLetterFieldPrefix):
			d.Fields[strings.TrimPrefix(k, contract.DeadLetterFieldPrefix)] = s
		}
	}
	if rest, ok := strings.CutPrefix(d.SourceStream, prefix+":"); ok {
		if i, err := strconv.Atoi(rest); err == nil && i >= 0 && strconv.Itoa(i) == rest {
			d.SourceShard = &i
		}
	}
	return d
}

// Redriven is the outcome of redriving one dead letter.
type Redriven struct {
	ID string `json:"id"`
	// Stream and NewID are where the entry was added again.
	Stream string `json:"stream"`
	NewID  string `json:"newId"`
}

// Redrive adds the dead letter id of dlq back to its source shard (with its
// original fields, as a new entry) and then deletes it from dlq, for the
// consumer group group (ErrOtherGroup for an entry another group
// dead-lettered or one that names no group). The source must be one of the
// shards 0..shardCount-1 of prefix (an error otherwise, nothing changed).
// Every group of the prefix reads the new entry. A crash between the two
// steps leaves the entry in both streams: it is delivered again, which
// dead letters must tolerate anyway.
func (o *Operator) Redrive(ctx context.Context, dlq, prefix, group string, shardCount int, id string) (Redriven, error) {
	d, err := o.deadLetter(ctx, dlq, prefix, group, id)
	if err != nil {
		return Redriven{}, err
	}
	if d.SourceShard == nil || *d.SourceShard >= shardCount {
		return Redriven{}, fmt.Errorf("%w: %s: its source stream %q is not a shard of %s (0..%d)", ErrNotRedrivable, id, d.SourceStream, prefix, shardCount-1)
	}
	values := make([]string, 0, 2*len(d.Fields))
	for k, v := range d.Fields {
		values = append(values, k, v)
	}
	if len(values) == 0 {
		return Redriven{}, fmt.Errorf("%w: %s: no original fields", ErrNotRedrivable, id)
	}
	newID, err := o.client.XAdd(ctx, &redis.XAddArgs{Stream: d.SourceStream, Values: values}).Result()
	if err != nil {
		return Redriven{}, err
	}
	if err := o.client.XDel(ctx, dlq, id).Err(); err != nil {
		return Redriven{}, err
	}
	return Redriven{ID: id, Stream: d.SourceStream, NewID: newID}, nil
}

// DeleteDeadLetter removes the dead letter id from dlq for the consumer
// group group (ErrDeadLetterNotFound when it is not there, ErrOtherGroup
// when another group dead-lettered it or it names no group).
func (o *Operator) DeleteDeadLetter(ctx context.Context, dlq, group, id string) error {
	if _, err := o.deadLetter(ctx, dlq, "", group, id); err != nil {
		return err
	}
	n, err := o.client.XDel(ctx, dlq, id).Result()
	if err != nil {
		return err
	}
	if n == 0 {
		return fmt.Errorf("%w: %s", ErrDeadLetterNotFound, id)
	}
	return nil
}

// deadLetter reads one dead letter by id for a redrive or delete by group,
// refusing (ErrOtherGroup) one that another group dead-lettered and one
// that names no group: the dead-letter stream is shared by every group of
// the prefix, so an entry without a group may be any group's, and one
// group's operator must not remove it for the others.
func (o *Operator) deadLetter(ctx context.Context, dlq, prefix, group, id string) (contract.DeadLetter, error) {
	if _, err := parseID(id); err != nil {
		return contract.DeadLetter{}, err
	}
	msgs, err := o.client.XRange(ctx, dlq, id, id).Result()
	if err != nil {
		return contract.DeadLetter{}, err
	}
	if len(msgs) == 0 {
		return contract.DeadLetter{}, fmt.Errorf("%w: %s", ErrDeadLetterNotFound, id)
	}
	d := deadLetterOf(msgs[0], prefix)
	switch {
	case d.Group == "":
		return contract.DeadLetter{}, fmt.Errorf("%w: %s names no consumer group, so it is not %s's to redrive or delete", ErrOtherGroup, id, group)
	case d.Group != group:
		return contract.DeadLetter{}, fmt.Errorf("%w: %s was dead-lettered by %s", ErrOtherGroup, id, d.Group)
	}
	return d, nil
}

// DeadLetterTally counts the entries of one dead-letter stream by the
// consumer group that dead-lettered them. The zero value counts nothing
// yet; UpdateTally brings it up to date. It is not safe for concurrent use.
type DeadLetterTally struct {
	// last is the id of the newest entry counted ("" for none).
	last  string
	total int64
	// byGroup counts the entries by their group field ("" for none).
	byGroup map[string]int64
}

// Of returns how many entries the dead-letter page of group lists: those
// group dead-lettered and those that name no group.
func (t *DeadLetterTally) Of(group string) int64 {
	if group == "" {
		return t.byGroup[""]
	}
	return t.byGroup[group] + t.byGroup[""]
}

// tallyBatch is how many entries UpdateTally reads per round trip at
// most: the first batch of a call reads firstReadChunk, the next ones as
// many as MaxReadBytes holds at the average size read so far, so that the
// count never holds more than a few MiB of the stream at once.
const tallyBatch = 1000

// UpdateTally brings t up to date with the dead-letter stream dlq, reading
// only the entries added since its last update. Each batch is read with
// the stream's length in one transaction, so a stream that lost entries
// (redriven, deleted, trimmed) shows as a count above the length; then t
// counts the stream again from its start, once per call (should entries
// vanish during that count as well, the next call counts again).
func (o *Operator) UpdateTally(ctx context.Context, dlq string, t *DeadLetterTally) error {
	recounted := false
	var read, bytes int64 // entries read by this call and their bytes
	for {
		start := "-"
		if t.last != "" {
			start = "(" + t.last
		}
		n := int64(firstReadChunk)
		if read > 0 {
			n = min(tallyBatch, max(MaxReadBytes/max(bytes/read, 1), 1))
		}
		pipe := o.client.TxPipeline()
		length := pipe.XLen(ctx, dlq)
		batch := pipe.XRangeN(ctx, dlq, start, "+", n)
		if _, err := pipe.Exec(ctx); err != nil {
			return err
		}
		if t.byGroup == nil {
			t.byGroup = map[string]int64{}
		}
		for _, m := range batch.Val() {
			g, _ := m.Values[contract.DeadLetterFieldGroup].(string)
			t.byGroup[g]++
			t.total++
			t.last = m.ID
			read, bytes = read+1, min(bytes+entrySize(m), math.MaxInt64/2)
		}
		switch {
		case int64(len(batch.Val())) == n:
		case t.total == length.Val() || recounted:
			return nil
		default:
			*t, recounted = DeadLetterTally{}, true
		}
	}
}
