package httpapi

import (
	"context"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// pathKey validates the {streamPrefix} and {consumerGroup} path parameters
// (docs/protocol.md §3, group.ValidateKey). Routes without {consumerGroup} (POST
// /streams/{P}) get G = P.
func pathKey(ps httprouter.Params) (group.Key, error) {
	p := ps.ByName("streamPrefix")
	if err := group.ValidateName("streamPrefix", p); err != nil {
		return group.Key{}, err
	}
	g := ps.ByName("consumerGroup")
	if g == "" {
		return group.Key{StreamPrefix: p, ConsumerGroup: p}, nil
	}
	if err := group.ValidateName("consumerGroup", g); err != nil {
		return group.Key{}, err
	}
	key := group.Key{StreamPrefix: p, ConsumerGroup: g}
	if err := group.ValidateKey(key); err != nil {
		return group.Key{}, err
	}
	return key, nil
}

// streamCreatedBody renders #2's answer.
func streamCreatedBody(v contract.GroupView) any {
	return contract.StreamCreated{StreamPrefix: v.StreamPrefix, ShardCount: v.ShardCount, MetadataVersion: v.MetadataVersion}
}

// groupCreatedBody renders #4's answer: the GroupResponse.
func groupCreatedBody(v contract.GroupView) any { return v }

// mutate serves a mutation of a group or stream: validate the path (the
// first failure answers), decode the body into a Req, validate it, run do,
// and answer status with do's body.
func mutate[Req any](a *API, w http.ResponseWriter, r *http.Request, ps httprouter.Params, status int,
	validate func(*Req) error, do func(ctx context.Context, key group.Key, req Req) (any, error)) {
	var req Req
	key, err := pathKey(ps)
	if err == nil {
		err = a.decodeBody(w, r, &req)
	}
	if err == nil {
		err = validate(&req)
	}
	var body any
	if err == nil {
		body, err = do(r.Context(), key, req)
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, status, body)
}

// create builds the handle of a create endpoint (#2 with streamLevel, #4):
// validate path and body, create, answer 201 with render's body.
func (a *API) create(streamLevel bool, render func(contract.GroupView) any) httprouter.Handle {
	validate := func(req *contract.CreateRequest) error { return group.ValidateCreate(req, a.settings) }
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		mutate(a, w, r, ps, http.StatusCreated, validate, func(ctx context.Context, key group.Key, req contract.CreateRequest) (any, error) {
			view, err := a.runtime.CreateGroup(ctx, key, req, streamLevel)
			return render(view), err
		})
	}
}

// deleteGroup serves #6; the body is required.
func (a *API) deleteGroup(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	mutate(a, w, r, ps, http.StatusOK, group.ValidateDelete, func(ctx context.Context, key group.Key, req contract.DeleteRequest) (any, error) {
		return a.runtime.DeleteGroup(ctx, key, req)
	})
}

// read builds the handle of a GET on one group: validate the path, fetch,
// and answer 200 with render's body.
func read[T any](a *API, fetch func(context.Context, group.Key) (T, error), render func(group.Key, T) any) httprouter.Handle {
	return func(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
		key, err := pathKey(ps)
		var v T
		if err == nil {
			v, err = fetch(r.Context(), key)
		}
		if err != nil {
			a.fail(w, r, err)
			return
		}
		writeJSON(w, http.StatusOK, render(key, v))
	}
}

// asIs renders a value unchanged.
func asIs[T any](_ group.Key, v T) any { return v }

// routingBody answers #7: every shard with its key and Redis Cluster slot.
func routingBody(_ group.Key, rt group.Routing) any { return rt.View() }
