package httpapi

import (
	"context"
	"errors"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// maxDeadLetterIDs bounds the ids of one redrive or delete request.
const maxDeadLetterIDs = 1000

// deadLetterStream returns the dead-letter stream a request names (query or
// body field "stream"): exactly the prefix's own, contract.DeadLetterStream
// (the Go client's default), whether named or left blank. Any other name
// is INVALID_REQUEST before anything is read or removed: a key that merely
// starts with "<prefix>-" can be another prefix's ("orders-eu:0" for the
// groups of "orders"), see streams.ResolveDeadLetterStream.
func deadLetterStream(prefix, name string) (string, error) {
	dlq, err := streams.ResolveDeadLetterStream(prefix, name)
	if err != nil {
		return "", invalid("stream: %v", err)
	}
	return dlq, nil
}

// HeaderReadTruncated is set ("true") on the answer of a page of stream
// entries (the message explorers, dead letters) that the read budget ended
// early (streams.MaxReadEntries, streams.MaxReadBytes): it holds fewer
// entries than its limit, and its next cursor continues after them.
const HeaderReadTruncated = "X-Coordinator-Read-Truncated"

// markTruncated sets HeaderReadTruncated on w when truncated.
func markTruncated(w http.ResponseWriter, truncated bool) {
	if truncated {
		w.Header().Set(HeaderReadTruncated, "true")
	}
}

// deadLetters serves GET …/dead-letters?stream=&cursor=&limit=&allGroups=:
// one page of the group's dead letters, newest first: those the group
// dead-lettered and those that name no group, or with allGroups=true every
// entry of the dead-letter stream (which all groups of the prefix share).
func (a *API) deadLetters(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	page, err := a.deadLetterPage(r, ps)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	markTruncated(w, page.Truncated)
	writeJSON(w, http.StatusOK, page.DeadLetterPage)
}

func (a *API) deadLetterPage(r *http.Request, ps httprouter.Params) (streams.DeadLetterPage, error) {
	key, err := pathKey(ps)
	if err != nil {
		return streams.DeadLetterPage{}, err
	}
	q := r.URL.Query()
	_, limit, err := pageQuery(q)
	if err != nil {
		return streams.DeadLetterPage{}, err
	}
	dlq, err := deadLetterStream(key.StreamPrefix, q.Get("stream"))
	if err != nil {
		return streams.DeadLetterPage{}, err
	}
	of := key.ConsumerGroup
	switch q.Get("allGroups") {
	case "", "false":
	case "true":
		of = ""
	default:
		return streams.DeadLetterPage{}, invalid("allGroups: must be true or false")
	}
	if _, err := a.runtime.Group(r.Context(), key); err != nil {
		return streams.DeadLetterPage{}, err
	}
	ops, err := a.streamOperator()
	if err != nil {
		return streams.DeadLetterPage{}, err
	}
	page, err := ops.DeadLetters(r.Context(), dlq, key.StreamPrefix, of, q.Get("cursor"), limit)
	if err != nil {
		return streams.DeadLetterPage{}, operatorError(err)
	}
	return page, nil
}

func validateDeadLetterRequest(r *contract.DeadLetterAction) error {
	if err := group.ValidateWho(r.RequestedBy, r.Reason); err != nil {
		return err
	}
	for _, id := range r.IDs {
		if len(id) > maxEntryIDBytes {
			return invalid("ids: each at most %d bytes", maxEntryIDBytes)
		}
	}
	switch {
	case len(r.IDs) == 0:
		return invalid("ids: must list at least one dead-letter id")
	case len(r.IDs) > maxDeadLetterIDs:
		return invalid("ids: at most %d per request", maxDeadLetterIDs)
	}
	return nil
}

// redriveDeadLetters serves POST …/dead-letters/redrive: each listed entry
// is added back to the shard it came from and removed from the dead-letter
// stream (streams.Operator.Redrive). Every id gets a result; a failed one
// does not stop the others.
func (a *API) redriveDeadLetters(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	a.eachDeadLetter(w, r, ps, "REDRIVEN", func(ctx context.Context, ops StreamOperator, g contract.GroupView, dlq, id string) (contract.DeadLetterResult, error) {
		out, err := ops.Redrive(ctx, dlq, g.StreamPrefix, g.ConsumerGroup, g.ShardCount, id)
		return contract.DeadLetterResult{Stream: out.Stream, NewID: out.NewID}, err
	})
}

// deleteDeadLetters serves POST …/dead-letters/delete: each listed entry
// is removed from the dead-letter stream.
func (a *API) deleteDeadLetters(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	a.eachDeadLetter(w, r, ps, "DELETED", func(ctx context.Context, ops StreamOperator, g contract.GroupView, dlq, id string) (contract.DeadLetterResult, error) {
		return contract.DeadLetterResult{}, ops.DeleteDeadLetter(ctx, dlq, g.ConsumerGroup, id)
	})
}

// eachDeadLetter runs do on every id of the request's body and answers the
// results: an id that is malformed, absent or cannot be redriven is FAILED
// with its error code; a Redis failure ends the request with 503.
func (a *API) eachDeadLetter(w http.ResponseWriter, r *http.Request, ps httprouter.Params, done string,
	do func(ctx context.Context, ops StreamOperator, g contract.GroupView, dlq, id string) (contract.DeadLetterResult, error)) {
	mutate(a, w, r, ps, http.StatusOK, validateDeadLetterRequest, func(ctx context.Context, key group.Key, req contract.DeadLetterAction) (any, error) {
		dlq, err := deadLetterStream(key.StreamPrefix, req.Stream)
		if err != nil {
			return nil, err
		}
		g, err := a.runtime.Group(ctx, key)
		if err != nil {
			return nil, err
		}
		ops, err := a.streamOperator()
		if err != nil {
			return nil, err
		}
		out := contract.DeadLetterResults{Stream: dlq, Results: make([]contract.DeadLetterResult, 0, len(req.IDs))}
		for _, id := range req.IDs {
			res, err := do(ctx, ops, g, dlq, id)
			res.ID, res.Status = id, done
			if err != nil {
				err = operatorError(err)
				if _, perID := errors.AsType[*group.Error](err); !perID {
					return nil, err
				}
				_, code, message := classify(err)
				res = contract.DeadLetterResult{ID: id, Status: "FAILED", ErrorCode: code, Message: message}
			}
			out.Results = append(out.Results, res)
		}
		return out, nil
	})
}
