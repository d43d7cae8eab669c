package httpapi

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/batchwire"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Forwarded heartbeats travel in batches (docs/cluster.md, Forwarding): a
// coordinator that does not own a heartbeat's group queues it for the
// owner, and at most batchSenders requests per owner are in flight, each
// carrying whatever had queued when it left (no timer: a lone heartbeat
// leaves at once, and while a batch is in flight the next one fills). The
// owner serves every item through the heartbeat route's handler chain, as
// if the member had sent it there (authentication with the item's own
// credentials, rate limits, audit, metrics: the chain runs once, there),
// and answers all items in one response.
const (
	// ForwardBatchPath is the owner's route for batches of forwarded
	// heartbeats; only a live coordinator of the cluster may call it: the
	// batch carries its mark, signed over the whole batch body
	// (forwardauth.go).
	ForwardBatchPath = "/internal/cluster/forwarded-heartbeats"

	// batchSenders is the most batches in flight to one owner.
	batchSenders = 4
	// maxBatchItems caps a batch's items.
	maxBatchItems = 256
	// batchTimeout bounds one batch's round trip.
	batchTimeout = 10 * time.Second
	// batchBodyFactor × the request body limit caps a batch's body: a
	// batch is closed once its heartbeat bodies reach the limit, so it
	// holds under two limits of bodies and their headers.
	batchBodyFactor = 16
	// batchReadFactor × the cap of a batch's body bounds the bodies of
	// the batches being read at once (their signatures held); a batch
	// waits for room (and gives up when its request ends).
	batchReadFactor = 4
)

// codeNotCoordinator refuses a batch from a caller that is not a live
// coordinator.
const codeNotCoordinator = string(contract.CodeNotACoordinator)

// queued is a heartbeat waiting for its owner's answer: item is its
// encoding (batchwire.AppendItem); answer receives the owner's answer, or
// nil when the owner could not be reached or refused the batch.
type queued struct {
	ctx    context.Context
	item   []byte
	answer chan *batchwire.Answer
}

// ownerQueue is the heartbeats waiting for one owner and how many
// senders serve them.
type ownerQueue struct {
	owner   persistence.Peer
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
func (b *batcher) forward(ctx context.Context, owner persistence.Peer, item []byte) (a *batchwire.Answer, ok bool) {
	q := &queued{ctx: ctx, item: item, answer: make(chan *batchwire.Answer, 1)}
	b.mu.Lock()
	oq := b.queues[owner.URL]
	if oq == nil {
		oq = &ownerQueue{}
		b.queues[owner.URL] = oq
	}
	// The owner as last routed to: a restarted owner (same URL) has a new
	// token, and the batch's mark is signed with the key shared with it.
	oq.owner = owner
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
		owner, batch := b.take(oq)
		if batch == nil {
			return
		}
		b.deliver(owner, batch)
	}
}

// take removes the next batch from oq: its first waiting heartbeats up to
// maxBatchItems and a request body limit of encoded items, those whose
// caller left skipped, with the owner to send it to. With nothing waiting
// it retires the sender (and the queue with its last sender) and returns
// nil.
func (b *batcher) take(oq *ownerQueue) (persistence.Peer, []*queued) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var batch []*queued
	size, n := int64(0), 0
	for ; n < len(oq.waiting) && len(batch) < maxBatchItems && size < b.f.api.maxBody; n++ {
		if q := oq.waiting[n]; q.ctx.Err() == nil {
			batch = append(batch, q)
			size += int64(len(q.item))
		}
	}
	oq.waiting = append(oq.waiting[:0], oq.waiting[n:]...)
	if len(batch) == 0 {
		oq.senders--
		if oq.senders == 0 && len(oq.waiting) == 0 {
			delete(b.queues, oq.owner.URL)
		}
		return oq.owner, nil
	}
	return oq.owner, batch
}

// deliver sends one batch to owner and hands each heartbeat its answer.
func (b *batcher) deliver(owner persistence.Peer, batch []*queued) {
	answers, err := b.post(owner, batch)
	if err != nil {
		b.f.api.log.Debug("forward to owner failed", "owner", owner.ID, "heartbeats", len(batch), "err", err)
		b.f.cluster.Unreachable(owner.ID)
	}
	for i, q := range batch {
		var a *batchwire.Answer
		if err == nil {
			a = &answers[i]
		}
		b.f.forwarded(a != nil)
		q.answer <- a
	}
}

// post sends batch to owner and returns its answers, one per item.
func (b *batcher) post(owner persistence.Peer, batch []*queued) ([]batchwire.Answer, error) {
	items := make([][]byte, len(batch))
	for i, q := range batch {
		items[i] = q.item
	}
	key := b.f.cluster.ForwardKey(owner)
	if key == nil {
		return nil, errNoForwardKey
	}
	ctx, cancel := context.WithTimeout(context.Background(), batchTimeout)
	defer cancel()
	payload := batchwire.Batch(items)
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(owner.URL, "/")+ForwardBatchPath, bytes.NewReader(payload))
	if err != nil {
		return nil, err
	}
	req.Header["Content-Type"] = batchContentType
	digest := sha256.Sum256(payload)
	signForward(req.Header, req.Method, req.URL.RequestURI(), b.f.cluster.Self().ID, key, owner.ID, time.Now(), int64(len(payload)), &digest)
	resp, err := b.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("owner answered the batch %s", resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, batchBodyFactor*b.f.api.maxBody))
	if err != nil {
		return nil, err
	}
	return batchwire.Answers(body, len(batch))
}

// batchContentType is the Content-Type of batches and their answers.
var batchContentType = []string{batchwire.ContentType}

// errNoForwardKey: the owner's registry token is not a public key (a
// coordinator of a release that drew random tokens), so no mark can be
// signed for it.
var errNoForwardKey = errors.New("no forwarding key for the owner (its registry token is not a public key)")

// serveBatch serves a batch of forwarded heartbeats (ForwardBatchPath)
// whose mark a live coordinator signed: every item concurrently through
// the heartbeat route's handler chain, as forwarded by that coordinator,
// with the batch's peer address. The mark is proven from the headers
// alone (its signature covers the body's length and SHA-256), before a
// byte of the body is read: a batch without a valid mark is refused 403
// NOT_A_COORDINATOR having read nothing of it. The body is then read, at
// most its signed length and batchBodyFactor × the body limit, while the
// bodies read at once stay within f.batchReads, and checked against the
// digest signed (403 when it differs).
func (f *forwarder) serveBatch(w http.ResponseWriter, r *http.Request, _ httprouter.Params) {
	mark, err := readMark(r.Header, f.cluster.Live(), f.cluster.ForwardKey, time.Now())
	if err == nil {
		err = mark.verify(r.Method, r.RequestURI, f.cluster.Self().ID, r.ContentLength)
	}
	if err != nil {
		f.notCoordinator(w, r, err)
		return
	}
	if r.Header.Get("Content-Type") != batchwire.ContentType {
		f.api.fail(w, r, invalid("a batch of forwarded heartbeats must be sent as %s", batchwire.ContentType))
		return
	}
	if r.ContentLength > batchBodyFactor*f.api.maxBody {
		f.api.fail(w, r, errPayloadTooLarge)
		return
	}
	if err := f.batchReads.Acquire(r.Context(), r.ContentLength); err != nil {
		f.api.fail(w, r, err)
		return
	}
	body := make([]byte, r.ContentLength)
	_, err = io.ReadFull(r.Body, body)
	f.batchReads.Release(r.ContentLength)
	if err != nil {
		f.api.fail(w, r, invalid("reading the batch: %v", err))
		return
	}
	if err := mark.checkBody(body); err != nil {
		f.notCoordinator(w, r, err)
		return
	}
	items, err := batchwire.Items(body, maxBatchItems)
	if err != nil {
		f.api.fail(w, r, invalid("malformed batch: %v", err))
		return
	}
	answers := make([][]byte, len(items))
	var wg sync.WaitGroup
	wg.Add(len(items))
	for i := range items {
		f.itemWorkers.Go(func() {
			defer wg.Done()
			answers[i] = f.serveItem(r, mark.by, &items[i])
		})
	}
	wg.Wait()
	w.Header()["Content-Type"] = batchContentType
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(batchwire.Batch(answers))
}

// notCoordinator refuses a batch whose mark is not valid: 403
// NOT_A_COORDINATOR.
func (f *forwarder) notCoordinator(w http.ResponseWriter, r *http.Request, err error) {
	f.api.log.Debug("batch of forwarded heartbeats refused", "by", r.Header.Get(HeaderForwardedBy), "err", err)
	writeError(w, http.StatusForbidden, codeNotCoordinator, "Only a live coordinator of this cluster may send forwarded heartbeats")
}

// serveItem serves one forwarded heartbeat into memory and returns its
// encoded answer (batchwire.AppendAnswer): as proven forwarded by the
// batch's sender (by), from the batch's peer address.
func (f *forwarder) serveItem(batch *http.Request, by string, item *batchwire.Item) []byte {
	ans := &itemAnswer{header: http.Header{}, status: http.StatusOK}
	req, err := http.NewRequestWithContext(batch.Context(), http.MethodPost, item.Path, bytes.NewReader(item.Body))
	if err != nil {
		writeError(ans, http.StatusBadRequest, string(contract.CodeInvalidRequest), "Malformed forwarded heartbeat path")
		return ans.encode()
	}
	req.Header = item.Header
	req.RemoteAddr, req.TLS = batch.RemoteAddr, batch.TLS
	f.serveForwarded(ans, req, by)
	return ans.encode()
}

// serveForwarded is the edge of a batch's item r, which coordinator by
// proved it forwarded: the routing decision (route), then the heartbeat
// route's handler chain, which runs here once. A path that is not a
// heartbeat's is answered 404; a panic 500, as the router answers them.
func (f *forwarder) serveForwarded(w http.ResponseWriter, r *http.Request, by string) {
	defer func() {
		if p := recover(); p != nil {
			f.api.recovered(w, r, p)
		}
	}()
	h, ps, _ := f.heartbeats.Lookup(r.Method, r.URL.Path)
	if h == nil {
		f.heartbeats.NotFound.ServeHTTP(w, r)
		return
	}
	f.route(w, r, ps, forwarded{mark: cluster.Mark{By: by}}, true, h)
}

// itemAnswer is a batch item's whole answer (status, header, body),
// written in memory by the heartbeat route's handler chain and encoded
// into the batch's answer (encode). It is no statusRecorder: there is no
// writer below it to pass the answer through to (the item's answer
// travels inside the batch's), so it keeps the whole body, not the start
// of an error body.
type itemAnswer struct {
	header http.Header
	status int
	wrote  bool
	body   []byte
}

func (r *itemAnswer) Header() http.Header { return r.header }

func (r *itemAnswer) WriteHeader(status int) {
	if !r.wrote {
		r.status, r.wrote = status, true
	}
}

func (r *itemAnswer) Write(b []byte) (int, error) {
	r.WriteHeader(http.StatusOK)
	r.body = append(r.body, b...)
	return len(b), nil
}

// encode returns the recorded answer's encoding.
func (r *itemAnswer) encode() []byte {
	return batchwire.AppendAnswer(make([]byte, 0, len(r.body)+256), r.status, r.header, r.body)
}
