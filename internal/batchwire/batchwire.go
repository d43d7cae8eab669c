package batchwire

import (
	"encoding/binary"
	"errors"
	"fmt"
	"net/http"
)

// ContentType is the media type of batch requests and answers. v=2: the
// encoding of v=1, sent with the mark that coordinators check before they
// read the body (its signature covers the body's length and SHA-256,
// docs/cluster.md, Trust model); an owner refuses a v=1 batch.
const ContentType = "application/x-coordinator-heartbeat-batch; v=2"

// Item is one forwarded request of a batch. Body aliases the decoded
// buffer.
type Item struct {
	Path   string
	Header http.Header
	Body   []byte
}

// Answer is the owner's answer to one item. Body aliases the decoded
// buffer.
type Answer struct {
	Status int
	Header http.Header
	Body   []byte
}

// AppendItem appends one item (path, header, body) to b.
func AppendItem(b []byte, path string, header http.Header, body []byte) []byte {
	b = appendString(b, path)
	b = appendHeader(b, header)
	return appendString(b, body)
}

// AppendAnswer appends one answer (status, header, body) to b.
func AppendAnswer(b []byte, status int, header http.Header, body []byte) []byte {
	b = binary.AppendUvarint(b, uint64(max(status, 0)))
	b = appendHeader(b, header)
	return appendString(b, body)
}

// Batch returns the body of a batch of records, each encoded by
// AppendItem or AppendAnswer.
func Batch(records [][]byte) []byte {
	size := binary.MaxVarintLen64
	for _, r := range records {
		size += len(r)
	}
	b := binary.AppendUvarint(make([]byte, 0, size), uint64(len(records)))
	for _, r := range records {
		b = append(b, r...)
	}
	return b
}

// Items decodes a batch request of at most maxItems items.
func Items(b []byte, maxItems int) ([]Item, error) {
	d := decoder{b: b}
	n := d.count(maxItems)
	items := make([]Item, 0, n)
	for range n {
		it := Item{Path: string(d.bytes()), Header: d.header(), Body: d.bytes()}
		if d.err != nil {
			break
		}
		items = append(items, it)
	}
	return items, d.end()
}

// Answers decodes a batch answer that must hold exactly n answers.
func Answers(b []byte, n int) ([]Answer, error) {
	d := decoder{b: b}
	if got := d.count(n); d.err == nil && got != n {
		return nil, fmt.Errorf("batch answer holds %d answers, want %d", got, n)
	}
	answers := make([]Answer, 0, n)
	for range n {
		status := d.uvarint()
		if d.err == nil && (status < 100 || status > 999) {
			d.err = fmt.Errorf("batch answer: status %d", status)
		}
		a := Answer{Status: int(status), Header: d.header(), Body: d.bytes()} // #nosec G115 -- status is checked to be 100..999
		if d.err != nil {
			break
		}
		answers = append(answers, a)
	}
	return answers, d.end()
}

func appendString[S string | []byte](b []byte, s S) []byte {
	return append(binary.AppendUvarint(b, uint64(len(s))), s...)
}

func appendHeader(b []byte, h http.Header) []byte {
	b = binary.AppendUvarint(b, uint64(len(h)))
	for name, values := range h {
		b = appendString(b, name)
		b = binary.AppendUvarint(b, uint64(len(values)))
		for _, v := range values {
			b = appendString(b, v)
		}
	}
	return b
}

// errTruncated is a body that ends inside a record.
var errTruncated = errors.New("batch body ends inside a record")

// decoder reads a body front to back; the first error sticks and every
// later read returns zero values.
type decoder struct {
	b   []byte
	err error
}

func (d *decoder) uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errTruncated
		return 0
	}
	d.b = d.b[n:]
	return v
}

// count reads a count of at most limit entries, each of which takes at
// least one more byte, so that a forged count cannot make a large
// allocation.
func (d *decoder) count(limit int) int {
	n := d.uvarint()
	if d.err == nil && (n > uint64(limit) || n > uint64(len(d.b))) { // #nosec G115 -- limit and len are not negative
		d.err = fmt.Errorf("batch body: count %d over its limit or its remaining %d bytes", n, len(d.b))
	}
	if d.err != nil {
		return 0
	}
	return int(n) // #nosec G115 -- n ≤ limit, an int
}

func (d *decoder) bytes() []byte {
	n := d.uvarint()
	if d.err == nil && n > uint64(len(d.b)) {
		d.err = errTruncated
	}
	if d.err != nil {
		return nil
	}
	s := d.b[:n:n]
	d.b = d.b[n:]
	return s
}

func (d *decoder) header() http.Header {
	n := d.count(len(d.b))
	h := make(http.Header, n)
	for range n {
		name := string(d.bytes())
		values := make([]string, d.count(len(d.b)))
		for i := range values {
			values[i] = string(d.bytes())
		}
		if d.err != nil {
			return nil
		}
		h[name] = values
	}
	return h
}

// end returns the decoding error, or one for bytes left after the last
// record.
func (d *decoder) end() error {
	if d.err == nil && len(d.b) > 0 {
		d.err = fmt.Errorf("batch body: %d bytes after the last record", len(d.b))
	}
	return d.err
}
