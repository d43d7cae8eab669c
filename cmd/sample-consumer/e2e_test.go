package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

const (
	e2ePrefix  = "e2e"
	e2eGroup   = "workers"
	e2eRecords = 8000
	e2eKeys    = 200
)

// TestDemoEndToEnd runs the demo as OS processes: a coordinator on a
// throwaway Redis with member authentication on, as the demo's
// configuration has it (an operator user and a MEMBER user), the sample
// producer writing 8,000 keyed records as the operator and sample
// consumers, logged in as the MEMBER user, that log every record they
// handle. During the run one
// consumer is SIGKILLed, one leaves (SIGTERM), one joins and the stream is
// scaled from 4 to 8 shards. It checks that every record was handled, that
// what the killed consumer left pending was reclaimed by another, that no
// shard was handled by two consumers at overlapping times, and that the
// records of a key were handled in order within each ownership interval.
func TestDemoEndToEnd(t *testing.T) {
	if testing.Short() {
		t.Skip("runs the demo processes (about 25 s)")
	}
	// The limit only turns a hang into a failure: on a loaded machine the
	// builds alone can take a minute.
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	rs := testredis.Start(t)
	rdb := redis.NewClient(&redis.Options{Addr: rs.Addr})
	defer rdb.Close()

	coordBin, err := coordproc.Build(ctx, dir, "coordinator")
	if err != nil {
		t.Fatal(err)
	}
	producerBin, consumerBin := buildSample(t, ctx, dir, "sample-producer"), buildSample(t, ctx, dir, "sample-consumer")
	t.Setenv("COORDINATOR_STREAMS_PROVISIONING_ENABLED", "true")
	srv, err := coordproc.StartServer(ctx, coordBin, dir, "coord", coordproc.ServerConfig{
		Store: coordproc.StoreRedis, KeyPrefix: "e2e-coord", RedisAddr: rs.Addr,
		Interval: 250 * time.Millisecond, LeaseTTL: 3 * time.Second, RebalanceTimeout: 30 * time.Second,
		Env: []string{
			"COORDINATOR_API_AUTHENTICATE_MEMBER_API=true",
			"COORDINATOR_API_USERS=[{username: operator, password: operator-pw, roles: [WRITE]}, {username: worker, password: worker-pw, roles: [MEMBER]}]",
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	coord := client.NewCoordinator(srv.Base, client.WithBasicAuth("operator", "operator-pw"))
	if _, err := coord.CreateGroup(ctx, e2ePrefix, e2eGroup, 4, "e2e"); err != nil {
		t.Fatal(err)
	}

	common := []string{"-coordinator", srv.Base, "-redis", rs.Addr, "-stream", e2ePrefix, "-group", e2eGroup}
	member := []string{"-user", "worker", "-password", "worker-pw"}
	procs := map[string]*exec.Cmd{}
	exited := map[string]chan error{}
	start := func(name, bin string, args ...string) {
		out, err := os.Create(filepath.Join(dir, name+".out"))
		if err != nil {
			t.Fatal(err)
		}
		cmd := exec.Command(bin, append(append([]string{}, common...), args...)...)
		cmd.Stdout, cmd.Stderr = out, out
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		out.Close()
		done := make(chan error, 1)
		procs[name], exited[name] = cmd, done
		go func() { done <- cmd.Wait() }()
	}
	defer func() {
		for name, cmd := range procs {
			_ = cmd.Process.Kill()
			<-exited[name]
			if t.Failed() {
				b, _ := os.ReadFile(filepath.Join(dir, name+".out"))
				t.Logf("%s output (tail):\n%s", name, tail(b, 1500))
			}
		}
	}()
	// c1 is slow (20 ms a record), so it has read entries pending when it is killed.
	consumer := func(name string) {
		work := "4ms"
		if name == "c1" {
			work = "20ms"
		}
		start(name, consumerBin, append([]string{"-member", name, "-workers", "2", "-work", work, "-lease", "3s",
			"-claim-min-idle", "1s", "-log", filepath.Join(dir, name+".jsonl")}, member...)...)
	}
	for _, c := range []string{"c1", "c2", "c3", "c4"} {
		consumer(c)
	}
	eventually.True(t, "4 consumers own the 4 shards", func() bool {
		g, err := coord.Group(ctx, e2ePrefix, e2eGroup)
		return err == nil && g.State == "STABLE" && len(g.CurrentAssignmentSummary) == 4
	})

	began := time.Now()
	start("producer", producerBin, "-count", fmt.Sprint(e2eRecords), "-rate", "1500", "-keys", fmt.Sprint(e2eKeys), "-refresh", "1s",
		"-user", "operator", "-password", "operator-pw")
	// The faults follow the producer's progress (it writes 1,500 records a
	// second when the machine keeps up). The count is what the faults need:
	// each comes after 1,000 or more records, and the new shards of the
	// scale get 2,000 (the producer refreshes its routing every second).
	written := func() int64 {
		var n int64
		for s := range 8 {
			l, err := rdb.XLen(ctx, fmt.Sprintf("%s:%d", e2ePrefix, s)).Result()
			if err != nil {
				t.Fatal(err)
			}
			n += l
		}
		return n
	}
	after := func(n int64) {
		eventually.True(t, fmt.Sprintf("the producer wrote %d records", n), func() bool { return written() >= n })
	}

	after(2500)
	_ = procs["c1"].Process.Kill()
	<-exited["c1"]
	exited["c1"] <- nil
	killedAt := time.Now()
	leftPending := map[string]bool{} // stream/id the killed consumer left unacknowledged
	for s := range 4 {
		key := fmt.Sprintf("%s:%d", e2ePrefix, s)
		pend, err := rdb.XPendingExt(ctx, &redis.XPendingExtArgs{Stream: key, Group: e2eGroup, Consumer: "c1", Start: "-", End: "+", Count: 100000}).Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range pend {
			leftPending[key+"/"+p.ID] = true
		}
	}

	after(4000)
	_ = procs["c2"].Process.Signal(syscall.SIGTERM)
	after(5000)
	consumer("c5")
	after(6000) // the last 2,000 records are written after the scale
	if err := coord.ScaleStream(ctx, e2ePrefix, 8, "e2e"); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited["producer"]:
		exited["producer"] <- err
		if err != nil {
			t.Fatalf("producer: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("producer did not finish")
	}
	select {
	case err := <-exited["c2"]:
		exited["c2"] <- err
		if err != nil {
			t.Errorf("c2 did not leave cleanly: %v", err)
		}
	case <-ctx.Done():
		t.Fatal("c2 did not exit after SIGTERM")
	}

	names := []string{"c1", "c2", "c3", "c4", "c5"}
	var logs map[string][]event
	eventually.True(t, "every record handled", func() bool {
		logs = readLogs(t, dir, names)
		return len(uniqueRecords(logs)) == e2eRecords
	})
	for _, c := range []string{"c3", "c4", "c5"} {
		_ = procs[c].Process.Signal(syscall.SIGTERM)
	}
	for _, c := range []string{"c3", "c4", "c5"} {
		if err := <-exited[c]; err != nil {
			t.Errorf("%s did not leave cleanly: %v", c, err)
		}
		exited[c] <- nil
	}
	logs = readLogs(t, dir, names)

	// Every record at least once.
	seen := uniqueRecords(logs)
	for k := range e2eKeys {
		for s := range e2eRecords / e2eKeys {
			if !seen[fmt.Sprintf("key-%d/%d", k, s)] {
				t.Errorf("record key-%d seq %d never handled", k, s)
			}
		}
	}

	// What the killed consumer left pending was handled again by another.
	reclaimed := 0
	for _, c := range names[1:] {
		for _, e := range logs[c] {
			if e.Ev == "rec" && leftPending[fmt.Sprintf("%s:%d/%s", e2ePrefix, e.Shard, e.ID)] && e.D >= 2 {
				reclaimed++
				delete(leftPending, fmt.Sprintf("%s:%d/%s", e2ePrefix, e.Shard, e.ID))
			}
		}
	}
	if len(leftPending) > 0 {
		t.Errorf("%d entries c1 left pending were never reclaimed: %v", len(leftPending), leftPending)
	}
	if reclaimed == 0 {
		t.Error("c1 left nothing pending when it was killed: the reclaim path was not exercised")
	}

	// Ownership intervals: one owner at a time per shard, records inside.
	type interval struct {
		owner      string
		start, end int64
	}
	byShard := map[int][]interval{}
	inOrder, outOfOrder, handoffInversions := 0, 0, 0
	for _, c := range names {
		open := map[int]int64{}
		lastSeq := map[int]map[string]int{} // shard -> key -> last first-delivery seq in this interval
		for _, e := range logs[c] {
			switch e.Ev {
			case "start":
				open[e.Shard] = e.T
				lastSeq[e.Shard] = map[string]int{}
			case "stop":
				byShard[e.Shard] = append(byShard[e.Shard], interval{c, open[e.Shard], e.T})
				delete(open, e.Shard)
			case "rec":
				if _, ok := open[e.Shard]; !ok {
					t.Errorf("%s handled %s:%d/%s outside its ownership of the shard", c, e2ePrefix, e.Shard, e.ID)
					continue
				}
				if e.D != 1 {
					continue
				}
				if last, ok := lastSeq[e.Shard][e.Key]; ok && e.Seq <= last {
					outOfOrder++
					t.Errorf("%s shard %d: %s seq %d after seq %d in one ownership interval", c, e.Shard, e.Key, e.Seq, last)
				} else {
					inOrder++
				}
				lastSeq[e.Shard][e.Key] = e.Seq
			}
		}
		end := time.Now().UnixNano()
		if c == "c1" {
			end = killedAt.UnixNano()
		} else if len(open) > 0 {
			t.Errorf("%s exited still owning %v", c, open)
		}
		for s, st := range open {
			byShard[s] = append(byShard[s], interval{c, st, end})
		}
	}
	for s, ivs := range byShard {
		sort.Slice(ivs, func(i, j int) bool { return ivs[i].start < ivs[j].start })
		var maxEnd int64
		var maxOwner string
		for _, iv := range ivs {
			if iv.start < maxEnd && iv.owner != maxOwner {
				t.Errorf("shard %d: %s owned it from %d while %s owned it until %d", s, iv.owner, iv.start, maxOwner, maxEnd)
			}
			if iv.end > maxEnd {
				maxEnd, maxOwner = iv.end, iv.owner
			}
		}
	}
	if len(byShard) != 8 {
		t.Errorf("shards handled: %d, want 8 after the scale", len(byShard))
	}

	// Per key, over all consumers in time order: inversions only happen
	// across handoffs (reclaims and key moves at the scale).
	var all []event
	for _, c := range names {
		all = append(all, logs[c]...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i].T < all[j].T })
	maxSeq := map[string]int{}
	var first, last int64
	total, redelivered := 0, 0
	for _, e := range all {
		if e.Ev != "rec" {
			continue
		}
		total++
		if e.D >= 2 {
			redelivered++
		}
		if first == 0 {
			first = e.T
		}
		last = e.T
		if m, ok := maxSeq[e.Key]; ok && e.Seq < m {
			handoffInversions++
		}
		maxSeq[e.Key] = max(maxSeq[e.Key], e.Seq)
	}
	secs := float64(last-began.UnixNano()) / 1e9
	t.Logf("records %d handled %d times (%d handled more than once); %d handlings were redeliveries (delivery count ≥ 2); %d of the %d entries c1 left pending reclaimed", e2eRecords, total, total-e2eRecords, redelivered, reclaimed, reclaimed+len(leftPending))
	t.Logf("end to end: %.0f records/s (%.1f s from the producer's start to the last record handled)", float64(e2eRecords)/secs, secs)
	t.Logf("order: %d first deliveries in order within ownership intervals, %d out of order; %d per-key inversions across handoffs", inOrder, outOfOrder, handoffInversions)
}

// event is one line of a consumer's record log.
type event struct {
	Ev    string `json:"ev"`
	Shard int    `json:"shard"`
	Key   string `json:"key"`
	Seq   int    `json:"seq"`
	ID    string `json:"id"`
	D     int64  `json:"d"`
	T     int64  `json:"t"`
}

func readLogs(t *testing.T, dir string, names []string) map[string][]event {
	out := map[string][]event{}
	for _, n := range names {
		f, err := os.Open(filepath.Join(dir, n+".jsonl"))
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			t.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var e event
			if json.Unmarshal(sc.Bytes(), &e) == nil { // a killed writer may leave half a line
				out[n] = append(out[n], e)
			}
		}
		f.Close()
	}
	return out
}

func uniqueRecords(logs map[string][]event) map[string]bool {
	seen := map[string]bool{}
	for _, evs := range logs {
		for _, e := range evs {
			if e.Ev == "rec" {
				seen[fmt.Sprintf("%s/%d", e.Key, e.Seq)] = true
			}
		}
	}
	return seen
}

func buildSample(t *testing.T, ctx context.Context, dir, name string) string {
	bin, err := coordproc.Build(ctx, dir, name)
	if err != nil {
		t.Fatal(err)
	}
	return bin
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
