package httpapi

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Forwarded heartbeats travel in batches (docs/cluster.md, Forwarding): a
// coordinator that does not own a heartbeat's group queues it for the
// owner, and at most batchSenders requests per owner are in flight, each
// carrying whatever had queued when it left (no timer: a lone heartbeat
// leaves at once, and while a batch is in flight the next one fills). The
// owner serves every item through the heartbeat route's handler chain, as
// if the member had sent it there (authentication with the item's own
// credentials, rate limits, audit, metrics), and answers all items in one
// response.
const (
	// ForwardBatchPath is the owner's route for batches of forwarded
	// heartbeats; only a live coordinator of the cluster may call it.
	ForwardBatchPath = "/internal/cluster/forwarded-heartbeats"
	// HeaderCoordinatorToken carries, with HeaderForwardedBy, the registry
	// token of the coordinator that sends a batch: the owner serves the
	// batch only if that id and token are a live registry entry.
	HeaderCoordinatorToken = "X-Coordinator-Token"

	// batchSenders is the most batches in flight to one owner.
	batchSenders = 4
	// maxBatchItems caps a batch's items.
	maxBatchItems = 256
	// batchTimeout bounds one batch's round trip.
	batchTimeout = 10 * time.Second
	// batchBodyFactor × the request body limit caps a batch's body: a
	// batch is closed once its heartbeat bodies reach the limit, so it
	// holds under two limits of bodies (JSON-escaped) and their headers.
	batchBodyFactor = 16
)

// codeNotCoordinator refuses a batch from a caller that is not a live
// coordinator.
const codeNotCoordinator = "NOT_A_COORDINATOR"

// batchItem is one forwarded heartbeat: its path, headers and body as the
// member sent them (plus X-Forwarded-For naming the member).
type batchItem struct {
	Path   string      `json:"path"`
	Header http.Header `json:"header"`
	Body   string      `json:"body"`
}

// batchAnswer is the owner's answer to one item.
type batchAnswer struct {
	Status int         `json:"status"`
	Header http.Header `json:"header"`
	Body   string      `json:"body"`
}

type batchRequest struct {
	Items []batchItem `json:"items"`
}

type batchResponse struct {
	Answers []batchAnswer `json:"answers"`
}

// queued is a heartbeat waiting for its owner's answer; answer receives
// it, or nil when the owner could not be reached or refused the batch.
type queued struct {
	ctx    context.Context
	item   batchItem
	answer chan *batchAnswer
}

// ownerQueue is the heartbeats waiting for one owner and how many
// senders serve them.
type ownerQueue struct {
	owner   persistence.Coordinator
	waiting []*queued
	senders int
}

// batcher queues forwarded heartbeats per owner and sends them in
// batches.
type batcher struct {
	f      *forwarder
	client *http.Client
	mu     sync.Mutex
	queues map[string]*ownerQueue // by owner URL
}

// forward queues item for owner and waits for its answer (nil: the owner
// could not be reached or refused). ok is false when ctx ended first.
func (b *batcher) forward(ctx context.Context, owner persistence.Coordinator, item batchItem) (a *batchAnswer, ok bool) {
	q := &queued{ctx: ctx, item: item, answer: make(chan *batchAnswer, 1)}
	b.mu.Lock()
	oq := b.queues[owner.URL]
	if oq == nil {
		oq = &ownerQueue{owner: owner}
		b.queues[owner.URL] = oq
	}
	oq.waiting = append(oq.waiting, q)
	start := oq.senders < batchSenders
	if start {
		oq.senders++
	}
	b.mu.Unlock()
	if start {
		go b.send(oq)
	}
	select {
	case a := <-q.answer:
		return a, true
	case <-ctx.Done():
		return nil, false
	}
}

// send sends oq's waiting heartbeats in batches until none waits.
func (b *batcher) send(oq *ownerQueue) {
	for {
		batch := b.take(oq)
		if batch == nil {
			return
		}
		b.deliver(oq.owner, batch)
	}
}

// take removes the next batch from oq: its first waiting heartbeats up to
// maxBatchItems and a request body limit of bodies, those whose caller
// left skipped. With nothing waiting it retires the sender (and the queue
// with its last sender) and returns nil.
func (b *batcher) take(oq *ownerQueue) []*queued {
	b.mu.Lock()
	defer b.mu.Unlock()
	var batch []*queued
	size, n := int64(0), 0
	for ; n < len(oq.waiting) && len(batch) < maxBatchItems && size < b.f.api.maxBody; n++ {
		if q := oq.waiting[n]; q.ctx.Err() == nil {
			batch = append(batch, q)
			size += int64(len(q.item.Body))
		}
	}
	oq.waiting = append(oq.waiting[:0], oq.waiting[n:]...)
	if len(batch) == 0 {
		oq.senders--
		if oq.senders == 0 && len(oq.waiting) == 0 {
			delete(b.queues, oq.owner.URL)
		}
		return nil
	}
	return batch
}

// deliver sends one batch to owner and hands each heartbeat its answer.
func (b *batcher) deliver(owner persistence.Coordinator, batch []*queued) {
	answers, err := b.post(owner, batch)
	if err != nil {
		b.f.api.log.Debug("forward to owner failed", "owner", owner.ID, "heartbeats", len(batch), "err", err)
		b.f.cluster.Unreachable(owner.ID)
	}
	for i, q := range batch {
		var a *batchAnswer
		if err == nil {
			a = &answers[i]
		}
		b.f.forwarded(a != nil)
		q.answer <- a
	}
}

// post sends batch to owner and returns its answers, one per item.
func (b *batcher) post(owner persistence.Coordinator, batch []*queued) ([]batchAnswer, error) {
	in := batchRequest{Items: make([]batchItem, len(batch))}
	for i, q := range batch {
		in.Items[i] = q.item
	}
	body, err := json.Marshal(in)
	if err != nil {
		return nil, err
	}
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(owner.URL, "/")+ForwardBatchPath, bytes.NewReader(body))
	if err != nil {
		return nil, err
	}
	self := b.f.cluster.Self()
	req.Header["Content-Type"] = jsonContentType
	req.Header.Set(HeaderForwardedBy, self.ID)
	req.Header.Set(HeaderCoordinatorToken, self.Token)
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("owner answered the batch %s", resp.Status)
	}
	var out batchResponse
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return nil, err
	}
	if len(out.Answers) != len(batch) {
		return nil, fmt.Errorf("owner answered %d of %d heartbeats", len(out.Answers), len(batch))
	}
	return out.Answers, nil
}

// serveBatch serves a batch of forwarded heartbeats (ForwardBatchPath):
// every item concurrently through the heartbeat route's handler chain,
// as forwarded by the sending coordinator, with the batch's peer address.
func (f *forwarder) serveBatch(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	by := r.Header.Get(HeaderForwardedBy)
	if !f.isCoordinator(by, r.Header.Get(HeaderCoordinatorToken)) {
		writeError(w, http.StatusForbidden, codeNotCoordinator, "Only a live coordinator of this cluster may send forwarded heartbeats")
		return
	}
	var in batchRequest
	if err := json.NewDecoder(http.MaxBytesReader(w, r.Body, batchBodyFactor*f.api.maxBody)).Decode(&in); err != nil {
		if _, tooLarge := errors.AsType[*http.MaxBytesError](err); tooLarge {
			f.api.fail(w, r, errPayloadTooLarge)
			return
		}
		f.api.fail(w, r, invalid("malformed batch: %v", err))
		return
	}
	out := batchResponse{Answers: make([]batchAnswer, len(in.Items))}
	var wg sync.WaitGroup
	for i, item := range in.Items {
		wg.Go(func() { out.Answers[i] = f.serveItem(r, by, item) })
	}
	wg.Wait()
	writeJSON(w, http.StatusOK, out)
}

// isCoordinator reports whether id and token are a live registry entry.
func (f *forwarder) isCoordinator(id, token string) bool {
	if id == "" || token == "" {
		return false
	}
	for _, c := range f.cluster.Live() {
		if c.ID == id && c.Token == token {
			return true
		}
	}
	return false
}

// serveItem serves one forwarded heartbeat into memory.
func (f *forwarder) serveItem(batch *http.Request, by string, item batchItem) batchAnswer {
	rec := &answerRecorder{answer: batchAnswer{Header: http.Header{}}}
	req, err := http.NewRequestWithContext(batch.Context(), http.MethodPost, item.Path, strings.NewReader(item.Body))
	if err != nil {
		writeError(rec, http.StatusBadRequest, string(group.CodeInvalidRequest), "Malformed forwarded heartbeat path")
		return rec.answer
	}
	req.Header = item.Header
	if req.Header == nil {
		req.Header = http.Header{}
	}
	req.Header.Set(HeaderForwardedBy, by)
	req.RemoteAddr = batch.RemoteAddr
	f.heartbeats.ServeHTTP(rec, req)
	return rec.answer
}

// answerRecorder is the in-memory ResponseWriter of a batch item.
type answerRecorder struct {
	answer batchAnswer
	body   strings.Builder
	wrote  bool
}

func (r *answerRecorder) Header() http.Header { return r.answer.Header }

func (r *answerRecorder) WriteHeader(status int) {
	if !r.wrote {
		r.answer.Status, r.wrote = status, true
	}
}

func (r *answerRecorder) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	n, _ := r.body.Write(b)
	r.answer.Body = r.body.String()
	return n, nil
}
