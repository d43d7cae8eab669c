package bench

import (
	"bufio"
	"context"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	goredis "github.com/redis/go-redis/v9"
)

// StoreCounters are cumulative counters of the store server, sampled
// before and after a load phase.
type StoreCounters struct {
	// Bytes the store received (Redis: total_net_input_bytes) or wrote
	// (PostgreSQL: WAL bytes).
	Bytes int64
	// Commands the store ran (Redis: sum of INFO commandstats calls); 0
	// when unknown.
	Commands int64
	// CPU is the store server's CPU time (Redis: INFO cpu); 0 when unknown.
	CPU time.Duration
	// Reads are the read events of the store server on client connections
	// (Redis: total_reads_processed), about one per client round trip (a
	// pipeline is one); 0 when unknown.
	Reads int64
	// ByCommand breaks the traffic down: Redis commands by name
	// (commandstats, e.g. "evalsha"), PostgreSQL rows written in the run's
	// schema by operation and table ("update:groups", pg_stat_user_tables:
	// a backend reports its counts 1 to 10 s late, so rows written at the
	// end of a phase may show in the next one); nil when unknown.
	ByCommand map[string]int64
}

// Sub returns c − o; ByCommand keeps the commands whose count changed.
func (c StoreCounters) Sub(o StoreCounters) StoreCounters {
	d := StoreCounters{Bytes: c.Bytes - o.Bytes, Commands: c.Commands - o.Commands, CPU: c.CPU - o.CPU, Reads: c.Reads - o.Reads}
	for name, n := range c.ByCommand {
		if n != o.ByCommand[name] {
			if d.ByCommand == nil {
				d.ByCommand = map[string]int64{}
			}
			d.ByCommand[name] = n - o.ByCommand[name]
		}
	}
	return d
}

// storeProbe samples the counters of a store server and removes what a
// run left in it.
type storeProbe interface {
	// Metric names what Bytes and Commands count.
	Metric() string
	// Server is whose server the counters come from (StoreOwn,
	// StoreExternal, StoreShared; "" for none).
	Server() string
	Sample(ctx context.Context) (StoreCounters, error)
	// Cleanup removes the run's data and closes the probe.
	Cleanup(ctx context.Context) error
}

// noProbe is the memory store's probe: it writes nowhere.
type noProbe struct{}

func (noProbe) Metric() string                                { return "none (memory store)" }
func (noProbe) Server() string                                { return "" }
func (noProbe) Sample(context.Context) (StoreCounters, error) { return StoreCounters{}, nil }
func (noProbe) Cleanup(context.Context) error                 { return nil }

// redisProbe reads INFO of the Redis server the coordinator uses and
// deletes the run's keys (store.key-prefix) at the end. INFO counts every
// client of the server, the probe's own INFO calls included (two per
// sample): only on a server of the run's own (StoreOwn) are the figures
// the run's alone.
type redisProbe struct {
	client *goredis.Client
	prefix string
	server string
	// pid is the redis-server process (INFO server process_id): its CPU
	// comes from /proc when visible, else from INFO cpu.
	pid int
}

func newRedisProbe(srv storeServer, prefix string) *redisProbe {
	p := &redisProbe{client: goredis.NewClient(&goredis.Options{Addr: srv.addr}), prefix: prefix, server: srv.kind}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if info, err := p.client.Info(ctx, "server").Result(); err == nil {
		p.pid, _ = strconv.Atoi(parseInfo(info)["process_id"])
	}
	return p
}

func (p *redisProbe) Metric() string {
	return "Redis INFO: total_net_input_bytes, the sum of commandstats calls (server-wide deltas, " + serverNote(p.server) +
		"); redis-server CPU from /proc/<process_id>/stat (else INFO cpu)"
}

func (p *redisProbe) Server() string { return p.server }

// serverNote says in words whose traffic a server-wide counter holds.
func serverNote(kind string) string {
	switch kind {
	case StoreOwn:
		return "a throwaway server of this run: its traffic alone"
	case StoreShared:
		return "the shared server: every other client counts, not valid"
	}
	return "an external server: every other client counts"
}

func (p *redisProbe) Sample(ctx context.Context) (StoreCounters, error) {
	info, err := p.client.Info(ctx, "stats", "cpu").Result()
	if err != nil {
		return StoreCounters{}, err
	}
	cmds, err := p.client.Info(ctx, "commandstats").Result()
	if err != nil {
		return StoreCounters{}, err
	}
	fields := parseInfo(info)
	bytes, err := strconv.ParseInt(fields["total_net_input_bytes"], 10, 64)
	if err != nil {
		return StoreCounters{}, fmt.Errorf("INFO stats: total_net_input_bytes: %w", err)
	}
	reads, _ := strconv.ParseInt(fields["total_reads_processed"], 10, 64) // Redis ≥ 6
	c := StoreCounters{Bytes: bytes, Reads: reads, ByCommand: commandCalls(cmds)}
	for _, n := range c.ByCommand {
		c.Commands += n
	}
	if cpu, ok := redisServerCPU(p.pid); ok {
		c.CPU = cpu
		return c, nil
	}
	var cpu float64
	for _, k := range []string{"used_cpu_user", "used_cpu_sys"} {
		v, err := strconv.ParseFloat(fields[k], 64)
		if err != nil {
			return StoreCounters{}, fmt.Errorf("INFO cpu: %s: %w", k, err)
		}
		cpu += v
	}
	c.CPU = time.Duration(cpu * float64(time.Second))
	return c, nil
}

func (p *redisProbe) Cleanup(ctx context.Context) error {
	defer p.client.Close()
	iter := p.client.Scan(ctx, 0, p.prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
	}
	if err := iter.Err(); err != nil {
		return err
	}
	for len(keys) > 0 {
		n := min(len(keys), 500)
		if err := p.client.Unlink(ctx, keys[:n]...).Err(); err != nil {
			return err
		}
		keys = keys[n:]
	}
	return nil
}

// Version returns the server's redis_version.
func (p *redisProbe) Version(ctx context.Context) string {
	info, err := p.client.Info(ctx, "server").Result()
	if err != nil {
		return "unavailable: " + err.Error()
	}
	return parseInfo(info)["redis_version"]
}

// parseInfo parses the key:value lines of an INFO answer.
func parseInfo(info string) map[string]string {
	out := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(info))
	for sc.Scan() {
		if k, v, ok := strings.Cut(strings.TrimSpace(sc.Text()), ":"); ok && !strings.HasPrefix(k, "#") {
			out[k] = v
		}
	}
	return out
}

// dataPlaneCommands are the Redis commands (commandstats names) with which
// a coordinator reads the streams rather than its stored state: the lag
// refresher's XINFO STREAM, XINFO GROUPS and MEMORY USAGE of every shard
// and its dead-letter counts (XLEN, XRANGE). Goal P2a leaves them out.
var dataPlaneCommands = []string{"xinfo|stream", "xinfo|groups", "memory|usage", "xlen", "xrange"}

// lagReads are the commands the lag refresher sends for every shard
// (streams.Observer.Offsets), by commandstats name: the words before the
// stream key.
var lagReads = map[string][2]string{
	"xinfo|stream": {"xinfo", "stream"}, "xinfo|groups": {"xinfo", "groups"}, "memory|usage": {"memory", "usage"},
}

// lagReadBytes estimates the bytes Redis received for the lag refresher's
// reads among calls (commandstats name → count): each command's count times
// its mean size in RESP over keys, the stream keys the refresher reads.
func lagReadBytes(calls map[string]int64, keys []string) int64 {
	if len(keys) == 0 {
		return 0
	}
	var total float64
	for name, words := range lagReads {
		if calls[name] == 0 {
			continue
		}
		sum := 0
		for _, k := range keys {
			sum += respLen(words[0], words[1], k)
		}
		total += float64(calls[name]) * float64(sum) / float64(len(keys))
	}
	return int64(total)
}

// respLen is the size of a command in RESP, as total_net_input_bytes
// counts it: *<n> then $<len> and every argument, each line ending in CRLF.
func respLen(args ...string) int {
	n := len(strconv.Itoa(len(args))) + 3
	for _, a := range args {
		n += len(strconv.Itoa(len(a))) + 3 + len(a) + 2
	}
	return n
}

// commandCalls reads calls=N of every cmdstat_<name> line of INFO
// commandstats, by name.
func commandCalls(info string) map[string]int64 {
	calls := map[string]int64{}
	for k, v := range parseInfo(info) {
		name, ok := strings.CutPrefix(k, "cmdstat_")
		if !ok {
			continue
		}
		for field := range strings.SplitSeq(v, ",") {
			if n, ok := strings.CutPrefix(field, "calls="); ok {
				calls[name], _ = strconv.ParseInt(n, 10, 64)
			}
		}
	}
	return calls
}

// pgProbe gives the coordinator a schema of its own (the coordinator's
// URL gets search_path=<schema>) and reads the WAL insert position: the
// bytes PostgreSQL wrote to its log, server-wide (the run's alone on a
// server of its own, StoreOwn). Cleanup drops the schema.
type pgProbe struct {
	conn   *pgx.Conn
	schema string
	server string
}

func newPGProbe(ctx context.Context, srv storeServer, schema string) (*pgProbe, error) {
	conn, err := pgx.Connect(ctx, srv.addr)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+pgx.Identifier{schema}.Sanitize()); err != nil {
		conn.Close(ctx)
		return nil, fmt.Errorf("postgres: create schema: %w", err)
	}
	return &pgProbe{conn: conn, schema: schema, server: srv.kind}, nil
}

// withSearchPath returns dsn with search_path set to schema.
func withSearchPath(dsn, schema string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil {
		return "", fmt.Errorf("postgres URL: %w", err)
	}
	q := u.Query()
	q.Set("search_path", schema)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

func (p *pgProbe) Metric() string {
	return "PostgreSQL WAL bytes (pg_current_wal_insert_lsn delta, server-wide, " + serverNote(p.server) + ")"
}

func (p *pgProbe) Server() string { return p.server }

func (p *pgProbe) Sample(ctx context.Context) (StoreCounters, error) {
	var lsn string
	if err := p.conn.QueryRow(ctx, "SELECT pg_current_wal_insert_lsn()::text").Scan(&lsn); err != nil {
		return StoreCounters{}, err
	}
	n, err := parseLSN(lsn)
	if err != nil {
		return StoreCounters{}, err
	}
	c := StoreCounters{Bytes: n, ByCommand: map[string]int64{}}
	rows, err := p.conn.Query(ctx, "SELECT relname, n_tup_ins, n_tup_upd, n_tup_del FROM pg_stat_user_tables WHERE schemaname = $1", p.schema)
	if err != nil {
		return StoreCounters{}, err
	}
	defer rows.Close()
	for rows.Next() {
		var table string
		var ins, upd, del int64
		if err := rows.Scan(&table, &ins, &upd, &del); err != nil {
			return StoreCounters{}, err
		}
		c.ByCommand["insert:"+table], c.ByCommand["update:"+table], c.ByCommand["delete:"+table] = ins, upd, del
	}
	return c, rows.Err()
}

func (p *pgProbe) Cleanup(ctx context.Context) error {
	defer p.conn.Close(ctx)
	_, err := p.conn.Exec(ctx, "DROP SCHEMA "+pgx.Identifier{p.schema}.Sanitize()+" CASCADE")
	return err
}

// Version returns the server's version string.
func (p *pgProbe) Version(ctx context.Context) string {
	var v string
	if err := p.conn.QueryRow(ctx, "SHOW server_version").Scan(&v); err != nil {
		return "unavailable: " + err.Error()
	}
	return v
}

// parseLSN converts a log sequence number "X/Y" (hex) to a byte position.
func parseLSN(s string) (int64, error) {
	hi, lo, ok := strings.Cut(s, "/")
	h, err1 := strconv.ParseUint(hi, 16, 32)
	l, err2 := strconv.ParseUint(lo, 16, 32)
	if !ok || err1 != nil || err2 != nil {
		return 0, fmt.Errorf("invalid LSN %q", s)
	}
	return int64(h<<32 | l), nil
}
