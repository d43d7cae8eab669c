package bench

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"strconv"
	"time"
)

// rawTransport is a lean HTTP/1.1 keep-alive transport to one server: at
// most size connections, each carrying one request at a time, and no
// goroutines of its own. net/http's Transport runs a reader and a writer
// goroutine per connection; on a machine whose cores the load generator
// shares with the coordinator that costs the coordinator CPU (the load
// generator's own CPU is reported per phase).
type rawTransport struct {
	addr  string
	idle  chan *rawConn
	slots chan struct{} // one token per open connection
}

// rawConn is one connection with its buffers.
type rawConn struct {
	c  net.Conn
	br *bufio.Reader
	bw *bufio.Writer
}

func newRawTransport(addr string, size int) *rawTransport {
	return &rawTransport{addr: addr, idle: make(chan *rawConn, size), slots: make(chan struct{}, size)}
}

// get returns an idle connection or dials one when fewer than size are
// open, waiting otherwise.
func (t *rawTransport) get(ctx context.Context) (*rawConn, error) {
	select {
	case c := <-t.idle:
		return c, nil
	default:
	}
	select {
	case c := <-t.idle:
		return c, nil
	case t.slots <- struct{}{}:
		c, err := (&net.Dialer{}).DialContext(ctx, "tcp", t.addr)
		if err != nil {
			<-t.slots
			return nil, err
		}
		return &rawConn{c: c, br: bufio.NewReaderSize(c, 4<<10), bw: bufio.NewWriterSize(c, 4<<10)}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}

// discard closes a broken connection and frees its slot.
func (t *rawTransport) discard(c *rawConn) {
	c.c.Close()
	<-t.slots
}

// CloseIdleConnections closes the idle connections.
func (t *rawTransport) CloseIdleConnections() {
	for {
		select {
		case c := <-t.idle:
			t.discard(c)
		default:
			return
		}
	}
}

// RoundTrip sends req (its body must have a known length) and reads the
// answer; the connection returns to the pool once the body is read and
// closed. The request must complete within requestTimeout or the
// context's deadline, whichever is earlier.
func (t *rawTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.Body != nil && req.ContentLength < 0 {
		return nil, errors.New("bench transport: request body of unknown length")
	}
	c, err := t.get(req.Context())
	if err != nil {
		return nil, err
	}
	deadline := time.Now().Add(requestTimeout)
	if d, ok := req.Context().Deadline(); ok && d.Before(deadline) {
		deadline = d
	}
	_ = c.c.SetDeadline(deadline)
	if err := writeRequest(c.bw, req); err != nil {
		t.discard(c)
		return nil, err
	}
	res, err := http.ReadResponse(c.br, req)
	if err != nil {
		t.discard(c)
		return nil, err
	}
	res.Body = &rawBody{ReadCloser: res.Body, t: t, c: c, keep: !res.Close}
	return res, nil
}

// writeRequest writes req in HTTP/1.1 wire form and flushes it.
func writeRequest(w *bufio.Writer, req *http.Request) error {
	w.WriteString(req.Method)
	w.WriteByte(' ')
	w.WriteString(req.URL.RequestURI())
	w.WriteString(" HTTP/1.1\r\nHost: ")
	w.WriteString(req.URL.Host)
	w.WriteString("\r\n")
	for k, vs := range req.Header {
		for _, v := range vs {
			w.WriteString(k)
			w.WriteString(": ")
			w.WriteString(v)
			w.WriteString("\r\n")
		}
	}
	if req.Body != nil {
		w.WriteString("Content-Length: ")
		w.WriteString(strconv.FormatInt(req.ContentLength, 10))
		w.WriteString("\r\n\r\n")
		if _, err := io.Copy(w, req.Body); err != nil {
			return err
		}
	} else {
		w.WriteString("\r\n")
	}
	return w.Flush()
}

// rawBody returns its connection to the pool when closed after being read
// to the end, and closes it otherwise.
type rawBody struct {
	io.ReadCloser
	t    *rawTransport
	c    *rawConn
	keep bool
	done bool
}

func (b *rawBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err != nil && err != io.EOF {
		b.keep = false
	}
	return n, err
}

func (b *rawBody) Close() error {
	if b.done {
		return nil
	}
	b.done = true
	if _, err := b.ReadCloser.Read(make([]byte, 1)); err != io.EOF {
		b.keep = false // not read to the end
	}
	if !b.keep {
		b.t.discard(b.c)
		return nil
	}
	b.t.idle <- b.c
	return nil
}
