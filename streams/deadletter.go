package streams

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// Dead-letter entries are written by the Go client's Consumer (package
// client) after MaxDeliveries failed deliveries: the fields "stream" (the
// shard key the entry came from), "id" (its id there), "deliveries",
// "error" (the handler's last error) and, for each field k of the original
// entry, "field:k". An optional "group" field names the consumer group.
const (
	deadLetterStream     = "stream"
	deadLetterID         = "id"
	deadLetterDeliveries = "deliveries"
	deadLetterError      = "error"
	deadLetterGroup      = "group"
	deadLetterFieldPre   = "field:"
)

// DeadLetterStream is the default dead-letter stream of a stream prefix,
// the Go client's default ("<prefix>-dead-letter").
func DeadLetterStream(prefix string) string { return prefix + "-dead-letter" }

// DeadLetter is one entry of a dead-letter stream.
type DeadLetter struct {
	// ID is the entry's id in the dead-letter stream.
	ID string `json:"id"`
	// SourceStream and SourceID are where the entry was read from ("" when
	// the entry does not say).
	SourceStream string `json:"sourceStream"`
	SourceID     string `json:"sourceId"`
	// SourceShard is the shard index of SourceStream, nil when it is not a
	// shard key of the prefix.
	SourceShard *int `json:"sourceShard"`
	// Deliveries is how often it was delivered before it was dead-lettered
	// (0 when not recorded); Error the handler's last error ("" when not
	// recorded).
	Deliveries int64  `json:"deliveries"`
	Error      string `json:"error"`
	// Fields are the original entry's fields.
	Fields map[string]string `json:"fields"`
}

// DeadLetterPage is one page of dead letters, newest first.
type DeadLetterPage struct {
	Stream  string       `json:"stream"`
	Length  int64        `json:"length"`
	Entries []DeadLetter `json:"entries"`
	// NextCursor continues after this page; nil when nothing remained.
	NextCursor *string `json:"nextCursor"`
}

var (
	// ErrDeadLetterNotFound is matched by redrive and delete errors for an
	// id that is not in the dead-letter stream.
	ErrDeadLetterNotFound = errors.New("dead letter not found")
	// ErrNotRedrivable is matched by redrive errors for an entry that does
	// not say which shard of the group it came from, or carries no fields.
	ErrNotRedrivable = errors.New("dead letter cannot be redriven")
)

// DeadLetters reads one page of the dead-letter stream dlq for the group of
// prefix, newest first, starting before cursor (a previous page's last id;
// blank = the newest). Entries that name another consumer group are left
// out. limit is clamped as the message explorer's.
func (o *Operator) DeadLetters(ctx context.Context, dlq, prefix, group, cursor string, limit int) (DeadLetterPage, error) {
	limit = ClampLimit(limit)
	end := "+"
	if cursor != "" {
		if _, err := parseID(cursor); err != nil {
			return DeadLetterPage{}, fmt.Errorf("%w: %w", ErrInvalidCursor, err)
		}
		end = "(" + cursor
	}
	page := DeadLetterPage{Stream: dlq, Entries: []DeadLetter{}}
	length, err := o.client.XLen(ctx, dlq).Result()
	if err != nil {
		return DeadLetterPage{}, err
	}
	page.Length = length
	msgs, err := o.client.XRevRangeN(ctx, dlq, end, "-", int64(limit)+1).Result()
	if err != nil {
		return DeadLetterPage{}, err
	}
	more := len(msgs) > limit
	msgs = msgs[:min(len(msgs), limit)]
	for _, m := range msgs {
		d := deadLetterOf(m, prefix)
		if g, ok := m.Values[deadLetterGroup].(string); ok && g != group {
			continue
		}
		page.Entries = append(page.Entries, d)
	}
	if more && len(msgs) > 0 {
		next := msgs[len(msgs)-1].ID
		page.NextCursor = &next
	}
	return page, nil
}

// deadLetterOf decodes one dead-letter entry.
func deadLetterOf(m redis.XMessage, prefix string) DeadLetter {
	d := DeadLetter{ID: m.ID, Fields: map[string]string{}}
	for k, v := range m.Values {
		s := fmt.Sprint(v)
		switch {
		case k == deadLetterStream:
			d.SourceStream = s
		case k == deadLetterID:
			d.SourceID = s
		case k == deadLetterDeliveries:
			d.Deliveries, _ = strconv.ParseInt(s, 10, 64)
		case k == deadLetterError:
			d.Error = s
		case strings.HasPrefix(k, deadLetterFieldPre):
			d.Fields[strings.TrimPrefix(k, deadLetterFieldPre)] = s
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
// original fields, as a new entry) and then deletes it from dlq. The source
// must be one of the shards 0..shardCount-1 of prefix (an error otherwise,
// nothing changed). A crash between the two steps leaves the entry in both
// streams: it is delivered again, which dead letters must tolerate anyway.
func (o *Operator) Redrive(ctx context.Context, dlq, prefix string, shardCount int, id string) (Redriven, error) {
	d, err := o.deadLetter(ctx, dlq, prefix, id)
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

// DeleteDeadLetter removes the dead letter id from dlq
// (ErrDeadLetterNotFound when it is not there).
func (o *Operator) DeleteDeadLetter(ctx context.Context, dlq, id string) error {
	if _, err := parseID(id); err != nil {
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

// deadLetter reads one dead letter by id.
func (o *Operator) deadLetter(ctx context.Context, dlq, prefix, id string) (DeadLetter, error) {
	if _, err := parseID(id); err != nil {
		return DeadLetter{}, err
	}
	msgs, err := o.client.XRange(ctx, dlq, id, id).Result()
	if err != nil {
		return DeadLetter{}, err
	}
	if len(msgs) == 0 {
		return DeadLetter{}, fmt.Errorf("%w: %s", ErrDeadLetterNotFound, id)
	}
	return deadLetterOf(msgs[0], prefix), nil
}

// DeadLetterLength returns the length of the dead-letter stream dlq (0 when
// it does not exist).
func (o *Operator) DeadLetterLength(ctx context.Context, dlq string) (int64, error) {
	return o.client.XLen(ctx, dlq).Result()
}
