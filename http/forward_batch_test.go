package httpapi_test

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/base64"
	"fmt"
	"io"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/contract"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/batchwire"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
)

// rawBatchHead sends the request line and header of a batch (header,
// Content-Length length) to addr over a TCP connection of its own, and not
// one byte of its body, then reads the answer: a server that needed the
// body before answering would never answer (the connection's deadline,
// a guard against hanging the test, would end it).
func rawBatchHead(t *testing.T, addr string, header http.Header, length int64) (int, string) {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_ = conn.SetDeadline(time.Now().Add(2 * time.Minute))
	var head bytes.Buffer
	fmt.Fprintf(&head, "POST %s HTTP/1.1\r\nHost: %s\r\nContent-Length: %d\r\n", httpapi.ForwardBatchPath, addr, length)
	if err := header.Write(&head); err != nil {
		t.Fatal(err)
	}
	head.WriteString("\r\n")
	if _, err := conn.Write(head.Bytes()); err != nil {
		t.Fatal(err)
	}
	resp, err := http.ReadResponse(bufio.NewReader(conn), nil)
	if err != nil {
		t.Fatalf("no answer before the body was sent: %v", err)
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(body)
}

// Issue 42 item 3: the batch route proves the sender's mark from the
// headers before it reads a byte of the body. Batches of 16 MiB whose
// mark names a live coordinator with a fresh time but whose signature is
// junk (with or without a body digest), made with another key, made for
// another length, or from a coordinator that is not live, are refused 403
// NOT_A_COORDINATOR with none of their body sent; one whose mark holds
// but whose length is above the batch cap is refused 413, unread too.
func TestBatchMarkProvenBeforeTheBody(t *testing.T) {
	e := newForwardEnv(t, nil)
	addr := strings.TrimPrefix(e.owner.URL, "http://")
	const length = 16 << 20
	junk := func() string {
		b := make([]byte, 32)
		_, _ = rand.Read(b)
		return base64.RawURLEncoding.EncodeToString(b)
	}
	now := strconv.FormatInt(time.Now().Unix(), 10)
	signedFor := func(key []byte, sender string, n int) http.Header {
		req, _ := http.NewRequest(http.MethodPost, e.owner.URL+httpapi.ForwardBatchPath, nil)
		httpapi.SignForwarded(req, sender, key, "coord-a", time.Now(), make([]byte, n))
		req.Header.Set("Content-Type", batchwire.ContentType)
		return req.Header
	}
	other, _ := newPeer("coord-x", "http://coord-x.invalid")
	for name, h := range map[string]http.Header{
		"junk signature, as least-privilege probe 3 sends it": {
			httpapi.HeaderForwardedBy: {"coord-b"}, httpapi.HeaderForwardedAt: {now}, httpapi.HeaderForwardSignature: {junk()},
			"Content-Type": {"application/x-coordinator-heartbeat-batch; v=1"},
		},
		"junk signature with a body digest": {
			httpapi.HeaderForwardedBy: {"coord-b"}, httpapi.HeaderForwardedAt: {now}, httpapi.HeaderForwardSignature: {junk()},
			httpapi.HeaderForwardBodyDigest: {junk()}, "Content-Type": {batchwire.ContentType},
		},
		"signed with another key":            signedFor(e.fwdCluster.ForwardKey(other), "coord-b", length),
		"signed by a coordinator not live":   signedFor(e.bKey(), "coord-x", length),
		"signed for another length":          signedFor(e.bKey(), "coord-b", length-1),
		"signed with the sender's own token": signedFor([]byte(e.fwdCluster.Self().Token), "coord-b", length),
	} {
		if st, answer := rawBatchHead(t, addr, h, length); st != http.StatusForbidden || !strings.Contains(answer, string(contract.CodeNotACoordinator)) {
			t.Errorf("%s: %d %s, want 403 NOT_A_COORDINATOR before the body", name, st, answer)
		}
	}
	const over = 16*httpapi.DefaultMaxBodyBytes + 1
	if st, answer := rawBatchHead(t, addr, signedFor(e.bKey(), "coord-b", over), over); st != http.StatusRequestEntityTooLarge {
		t.Errorf("a proven batch above the cap: %d %s, want 413 before the body", st, answer)
	}
}

// A proven batch whose body is sent in pieces, slowly enough that the
// owner reads it in several reads, is served; one whose body differs from
// the one signed (same length) is refused 403 once read.
func TestBatchBodyCheckedAgainstItsMark(t *testing.T) {
	e := newForwardEnv(t, nil)
	createOn(t, e.owner, "orders", 4)
	path, body := coordtest.JoinHeartbeat(t, ordersG, "m1")
	payload := batchwire.Batch([][]byte{batchwire.AppendItem(nil, contract.BasePath+path, http.Header{"Content-Type": {"application/json"}}, []byte(body))})
	post := func(signedOver []byte) (int, []byte) {
		pr, pw := io.Pipe()
		go func() {
			for i := range payload {
				if _, err := pw.Write(payload[i : i+1]); err != nil {
					return
				}
			}
			_ = pw.Close()
		}()
		req, _ := http.NewRequest(http.MethodPost, e.owner.URL+httpapi.ForwardBatchPath, pr)
		req.ContentLength = int64(len(payload))
		req.Header.Set("Content-Type", batchwire.ContentType)
		httpapi.SignForwarded(req, "coord-b", e.bKey(), "coord-a", time.Now(), signedOver)
		resp, err := e.owner.Client().Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, b
	}
	st, answer := post(payload)
	answers, err := batchwire.Answers(answer, 1)
	if st != http.StatusOK || err != nil || answers[0].Status != http.StatusOK || !strings.Contains(string(answers[0].Body), `"memberId":"m1"`) {
		t.Fatalf("batch sent byte by byte: %d %v %q", st, err, answer)
	}
	if st, answer := post(bytes.Repeat([]byte{'x'}, len(payload))); st != http.StatusForbidden || !strings.Contains(string(answer), string(contract.CodeNotACoordinator)) {
		t.Errorf("batch whose body is not the one signed: %d %s", st, answer)
	}
}
