package redis

import (
	"context"
	"sync"
	"time"

	goredis "github.com/redis/go-redis/v9"
)

// maxPipeline bounds the commands of one pipeline.
const maxPipeline = 512

// pipeliner sends the commands of concurrent callers as one pipeline per
// round trip. One goroutine sends: it takes the first call, then every call
// already waiting (calls queue while the previous pipeline is in flight),
// and executes them as one pipeline. A lone call therefore goes out at
// once, and the group actors of many groups share round trips instead of
// taking one connection each.
//
// Each caller gets its own command's reply and error: a failing command
// (an error reply, redis.Nil) fails only itself, a failed connection fails
// every command of the pipeline with the same error as a lone command
// would get. A caller whose ctx ends returns ctx's error at once; its
// command is not sent if the pipeline is not built yet, and may run
// otherwise (as a lone command cancelled in flight may). A pipeline runs
// until the latest deadline of its callers (without one when a caller has
// none), bounded also by the client's read and write timeouts; it carries
// no caller's context values.
type pipeliner struct {
	client goredis.UniversalClient
	calls  chan *call    // unbuffered: waiting senders are the queue
	closed chan struct{} // closed by close
	done   chan struct{} // closed when the sender has returned
	once   sync.Once
}

// call is one caller's command; done is closed once cmd holds its result.
type call struct {
	ctx  context.Context
	cmd  goredis.Cmder
	done chan struct{}
}

// newPipeliner starts the sender on client.
func newPipeliner(client goredis.UniversalClient) *pipeliner {
	p := &pipeliner{client: client, calls: make(chan *call), closed: make(chan struct{}), done: make(chan struct{})}
	go p.run()
	return p
}

// do runs cmd in the next pipeline and returns its error (cmd.Err(), or
// ctx's error, or goredis.ErrClosed after close). cmd's reply may be read
// only when do returned nil or cmd.Err().
func (p *pipeliner) do(ctx context.Context, cmd goredis.Cmder) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c := &call{ctx: ctx, cmd: cmd, done: make(chan struct{})}
	select {
	case p.calls <- c:
	case <-ctx.Done():
		return ctx.Err()
	case <-p.closed:
		return goredis.ErrClosed
	}
	select {
	case <-c.done:
		return cmd.Err()
	case <-ctx.Done():
		return ctx.Err()
	}
}

// close stops the sender after the pipeline in flight; later calls get
// goredis.ErrClosed. It does not close the client.
func (p *pipeliner) close() {
	p.once.Do(func() { close(p.closed) })
	<-p.done
}

// run is the sender.
func (p *pipeliner) run() {
	defer close(p.done)
	batch := make([]*call, 0, 64)
	for {
		select {
		case c := <-p.calls:
			batch = append(batch, c)
		case <-p.closed:
			return
		}
	more:
		for len(batch) < maxPipeline {
			select {
			case c := <-p.calls:
				batch = append(batch, c)
			default:
				break more
			}
		}
		p.send(batch)
		clear(batch)
		batch = batch[:0]
	}
}

// send executes the calls whose ctx has not ended as one pipeline and
// completes every call.
func (p *pipeliner) send(batch []*call) {
	pipe := p.client.Pipeline()
	var last time.Time
	bounded := true
	for _, c := range batch {
		if err := c.ctx.Err(); err != nil {
			c.cmd.SetErr(err)
			continue
		}
		d, ok := c.ctx.Deadline()
		bounded = bounded && ok
		if d.After(last) {
			last = d
		}
		_ = pipe.Process(c.ctx, c.cmd) // queues; the result comes with Exec
	}
	if pipe.Len() > 0 {
		ctx, cancel := context.Background(), context.CancelFunc(func() {})
		if bounded {
			ctx, cancel = context.WithDeadline(ctx, last)
		}
		_, _ = pipe.Exec(ctx) // every command carries its own error
		cancel()
	}
	for _, c := range batch {
		close(c.done)
	}
}

// eval runs script as goredis.Script.Run does, through the pipeliner:
// EVALSHA, and when Redis does not have the script (NOSCRIPT) SCRIPT LOAD
// on the client and EVALSHA again.
func (p *pipeliner) eval(ctx context.Context, script *goredis.Script, keys []string, args ...any) *goredis.Cmd {
	cmd := p.evalSha(ctx, script.Hash(), keys, args)
	if goredis.HasErrorPrefix(cmd.Err(), "NOSCRIPT") {
		if err := script.Load(ctx, p.client).Err(); err != nil {
			return failed(ctx, err)
		}
		cmd = p.evalSha(ctx, script.Hash(), keys, args)
	}
	return cmd
}

// evalSha runs one EVALSHA of the script with hash sha.
func (p *pipeliner) evalSha(ctx context.Context, sha string, keys []string, args []any) *goredis.Cmd {
	a := make([]any, 0, 3+len(keys)+len(args))
	a = append(a, "evalsha", sha, len(keys))
	for _, k := range keys {
		a = append(a, k)
	}
	cmd := goredis.NewCmd(ctx, append(a, args...)...)
	if len(keys) > 0 {
		cmd.SetFirstKeyPos(3) // a Cluster client routes by the first key
	}
	if err := p.do(ctx, cmd); err != nil {
		return failed(ctx, err) // cmd may still be in flight
	}
	return cmd
}

// failed is a command that failed with err before or without a reply.
func failed(ctx context.Context, err error) *goredis.Cmd {
	cmd := goredis.NewCmd(ctx)
	cmd.SetErr(err)
	return cmd
}
