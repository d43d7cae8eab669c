package console_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// statusColours are the backgrounds style.css gives the status badges, as
// the browser computes them.
var statusColours = map[string]string{
	"OK":      "rgb(218, 251, 225)",
	"PAUSED":  "rgb(221, 244, 255)",
	"STOPPED": "rgb(207, 34, 46)",
}

// coordinatorProcess starts the coordinator binary (cmd/coordinator, as
// built from this tree) storing its groups in the shared Redis under
// prefix, with the admin's password adminPassword: its lag refresher evaluates the
// consumption status every second, which the in-process server of the
// other browser tests does not run.
func coordinatorProcess(t *testing.T, prefix string) *coordproc.Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin, err := coordproc.Build(ctx, dir, "coordinator")
	if err != nil {
		t.Fatal(err)
	}
	srv, err := coordproc.StartServer(ctx, bin, dir, "console-status", coordproc.ServerConfig{
		Store: coordproc.StoreRedis, KeyPrefix: prefix + ":coord", RedisAddr: testredis.SharedAddr,
		Interval: 300 * time.Millisecond, LeaseTTL: 3 * time.Second, OffsetCacheTTL: time.Second,
		Env: []string{"COORDINATOR_ADMIN_PASSWORD=" + adminPassword, "COORDINATOR_TOKEN_SECRET=console-status-test-secret"},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Stop() })
	return srv
}

// The groups list and the group page lead with the consumption status,
// coloured and named: a shard whose entries wait with no member is
// STOPPED, and so is its group; a paused shard is PAUSED, and shown paused
// after a reload. The group page's timeline lists the moves of the
// members' joins and of the pause with their cause, newest first, and
// filters them by shard. A killed member is shown ended once its lease
// ran out; a group that does not exist is said to be not found.
func TestConsoleStatusAndHistory(t *testing.T) {
	b := newBrowser(t)
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	srv := coordinatorProcess(t, prefix)
	key := group.Key{StreamPrefix: prefix, ConsumerGroup: "workers"}
	// Shard 0 holds 25 entries no consumer has read: no Redis consumer
	// group exists, so the whole stream is its backlog.
	for i := range 25 {
		if err := rdb.XAdd(t.Context(), &redis.XAddArgs{Stream: prefix + ":0", Values: []string{"payload", fmt.Sprintf("order-%d", i)}}).Err(); err != nil {
			t.Fatal(err)
		}
	}

	logIn(b, srv.Root)
	b.do("create a group", fill(`#create-form input[name=streamPrefix]`, prefix), fill(`#create-form input[name=consumerGroup]`, "workers"),
		fill(`#create-form input[name=initialShardCount]`, "4"), chromedp.Click(chromedp.CSS(`#create-form button[type=submit]`)))
	rowSel := `tr[data-group=` + js(prefix+"/workers") + `]`
	// badge is the expression of the status badge inside sel: its text
	// and its background, "STOPPED rgb(…)".
	badge := func(sel string) string {
		return `(() => { const e = document.querySelector(` + js(sel+` .status`) + `); ` +
			`return e ? e.textContent + " " + getComputedStyle(e).backgroundColor : ""; })()`
	}
	is := func(sel, status string) string { return badge(sel) + ` === ` + js(status+" "+statusColours[status]) }

	// No member: shard 0 is STOPPED, the others OK, the group STOPPED.
	b.waitFor("the group is listed STOPPED", is(rowSel+` td.group-status`, "STOPPED")+` && `+
		text("#groups-status-summary")+`.includes("1 group: 1 STOPPED") && `+text("#groups-page-info")+` === "Page 1 of 1: 1–1 of 1"`)
	b.shot("status-groups")
	b.do("open the group", chromedp.Click(chromedp.CSS(rowSel+` a`)), chromedp.WaitVisible(chromedp.CSS("#group-view")))
	gridStatus := func(i int) string { return fmt.Sprintf(`#assignment-grid tr[data-shard="%d"] td.shard-status`, i) }
	b.waitFor("the group and shard 0 are STOPPED, the others OK", is("#group-status", "STOPPED")+` && `+
		is(gridStatus(0), "STOPPED")+` && `+is(gridStatus(1), "OK")+` && `+is(gridStatus(2), "OK")+` && `+is(gridStatus(3), "OK")+` && `+
		is(`#shard-status tr[data-shard-status="0"]`, "STOPPED")+` && `+
		text(`#shard-status tr[data-shard-status="0"] td.lag`)+`.endsWith("→ 25") && `+
		text("#status-info")+`.startsWith("Shards: 1 STOPPED, 3 OK.") && `+
		text("#group-lag-age")+` !== "–" && `+
		`/^Desired members: \d+ \(recommended now \d+; 0 hold shards; at most the 4 shards\)\. Ingest /.test(`+text("#scaling-info")+`)`)
	b.shot("status-stopped")

	// Two members join: the timeline says why each shard moved to its
	// owner: a join.
	ms := startMembers(t, http.DefaultClient, srv.Base, key, "member-a", "member-b")
	b.waitFor("both members own two shards each", `document.querySelectorAll("#assignment-grid td.cell.owned").length === 4 && `+
		`document.querySelectorAll("#assignment-grid td.cell.pending, #assignment-grid td.cell.releasing, #assignment-grid td.cell.revoking").length === 0 && `+
		`document.querySelectorAll("#assignment-grid thead th").length === 4`)
	// movedToOwner holds when the newest move of every shard in the
	// timeline has cause want and ends at the owner the grid shows.
	movedToOwner := func(want string, shards ...int) string {
		conds := make([]string, len(shards))
		for i, s := range shards {
			conds[i] = fmt.Sprintf(`(() => { const owner = document.querySelector('#assignment-grid tr[data-shard="%d"] td.cell.owned')?.dataset.member; `+
				`const m = document.querySelector('#history li[data-history-shard="%d"]'); `+
				`return owner && m && m.dataset.cause === %s && m.textContent.endsWith("→ " + owner); })()`, s, s, js(want))
		}
		return strings.Join(conds, " && ")
	}
	b.waitFor("the timeline shows each shard's join", movedToOwner("join", 0, 1, 2, 3)+` && `+
		`document.querySelector("#history li.event")?.dataset.cause === "join" && `+
		text("#history li.event .cause")+` === "join"`)
	b.shot("history-joins")

	// Pausing shard 1 takes it from its owner: PAUSED in the grid, the
	// pause on top of the timeline, and both still there after a reload.
	b.do("pause shard 1", fill(`input[name=pauseShards]`, "1"), chromedp.Click(chromedp.CSS(`#pause-form button[type=submit]`)))
	pausedShown := is(gridStatus(1), "PAUSED") + ` && document.querySelector('#assignment-grid tr[data-shard="1"]').classList.contains("paused") && ` +
		`document.querySelectorAll('#assignment-grid tr[data-shard="1"] td.cell.owned, #assignment-grid tr[data-shard="1"] td.cell.pending').length === 0 && ` +
		text("#group-paused") + ` === "1" && ` + text("#paused-shards") + `.startsWith("Paused: 1") && ` +
		text(`#shard-offsets tr[data-shard-offset="1"] td.owners`) + ` === "paused"`
	pauseOnTop := `(() => { const e = document.querySelector("#history li.event"); const m = e?.querySelector("li[data-history-shard]"); ` +
		`return e?.dataset.cause === "pause" && e.querySelectorAll("li[data-history-shard]").length === 1 && ` +
		`m.dataset.historyShard === "1" && /^:1 member-[ab] → nobody$/.test(m.textContent); })()`
	b.waitFor("shard 1 is PAUSED and its pause tops the timeline", pausedShown+` && `+pauseOnTop)
	b.shot("status-paused")
	b.do("reload the page", chromedp.Reload(), chromedp.WaitVisible(chromedp.CSS("#group-view")))
	b.waitFor("shard 1 is still shown PAUSED", pausedShown+` && `+pauseOnTop)

	// The filter asks for shard 1's moves only: its pause, then its join.
	b.do("show shard 1's moves", chromedp.SetValue(chromedp.CSS(`select[name=historyShard]`), "1"))
	b.waitFor("only shard 1's moves are listed", `(() => { const ms = [...document.querySelectorAll("#history li[data-history-shard]")]; `+
		`return ms.length >= 2 && ms.every(m => m.dataset.historyShard === "1") && ms[0].dataset.cause === "pause" && `+
		`ms[ms.length - 1].dataset.cause === "join" && /^:1 nobody → member-[ab]$/.test(ms[ms.length - 1].textContent); })() && `+
		text("#history-info")+`.includes("of shard 1")`)
	b.shot("history-shard-1")

	// member-b is killed: once its lease (3 s) has run out it is shown
	// ended, never as a current reader, and the timeline says its shards
	// (one or two of the three not paused, by the order the members joined
	// in) moved to member-a because its lease expired.
	b.do("show every shard's moves", chromedp.SetValue(chromedp.CSS(`select[name=historyShard]`), "all"))
	ms.kill("member-b")
	b.waitFor("member-b's shards moved to member-a for its expired lease", `(() => { `+
		`const e = document.querySelector("#history li.event"); const ms = [...(e?.querySelectorAll("li[data-history-shard]") ?? [])]; `+
		`return e?.dataset.cause === "lease-expired" && ms.length >= 1 && ms.every(m => /^:\d member-b → member-a$/.test(m.textContent)); })() && `+
		`[...document.querySelectorAll('#assignment-grid td.cell[data-member="member-b"]')].every(c => !/\bC\b/.test(c.textContent)) && `+
		`document.querySelectorAll('#assignment-grid td.cell.owned[data-member="member-a"]').length === 3 && `+
		`document.querySelector('#members tr[data-member="member-b"]')?.classList.contains("ended") && `+
		text(`#members tr[data-member="member-b"] td.current`)+`.startsWith("none (lease ended")`)
	if v := eval[string](b, `document.querySelector("select[name=historyShard]").selectedOptions[0]?.textContent ?? ""`); v != "every shard" {
		t.Errorf("the history filter shows %q, want every shard", v)
	}
	b.shot("member-expired")

	// Back on the list, the group's row names its paused shard.
	b.do("back to the groups", chromedp.Click(chromedp.CSS(`header a.brand`)), chromedp.WaitVisible(chromedp.CSS(rowSel)))
	b.waitFor("the row shows the paused shard", text(rowSel+` td.paused-shards`)+` === "1"`)

	// A group that does not exist: the page says so and stops refreshing.
	b.do("open a group that does not exist", run(`location.hash = `+js("#/group/"+prefix+"/missing")))
	b.waitFor("the page says it is not found", text("#error")+`.startsWith("Not found, no longer refreshed") && `+text("#error")+`.includes("HTTP 404")`)
	b.checkConsole()
}
