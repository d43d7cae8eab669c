package sql

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// errNoConn marks failures to obtain a connection: no statement was sent.
var errNoConn = errors.New("no database connection")

// pool hands out at most cap(slots) connections, reusing idle ones. A
// connection that is closed or not idle (mid-transaction) when released is
// dropped, so a broken connection is never reused.
type pool struct {
	cfg   *pgx.ConnConfig
	slots chan struct{}  // one token per connection handed out
	idle  chan *pgx.Conn // idle connections, at most cap(slots)
}

func newPool(cfg *pgx.ConnConfig, size int) *pool {
	return &pool{cfg: cfg, slots: make(chan struct{}, size), idle: make(chan *pgx.Conn, size)}
}

// acquire returns an idle connection or dials a new one, waiting for a
// free slot until ctx ends. Its errors wrap errNoConn.
func (p *pool) acquire(ctx context.Context) (*pgx.Conn, error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return nil, fmt.Errorf("%w: %w", errNoConn, ctx.Err())
	}
	for {
		select {
		case c := <-p.idle:
			if !c.IsClosed() {
				return c, nil
			}
		default:
			c, err := pgx.ConnectConfig(ctx, p.cfg)
			if err != nil {
				<-p.slots
				return nil, fmt.Errorf("%w: %w", errNoConn, err)
			}
			return c, nil
		}
	}
}

// release returns c to the pool, or closes it when it is unusable.
func (p *pool) release(c *pgx.Conn) {
	if !c.IsClosed() && c.PgConn().TxStatus() == 'I' {
		p.idle <- c
	} else {
		_ = c.Close(context.Background())
	}
	<-p.slots
}

// close closes the idle connections. Call it after the last use.
func (p *pool) close() {
	for {
		select {
		case c := <-p.idle:
			_ = c.Close(context.Background())
		default:
			return
		}
	}
}
