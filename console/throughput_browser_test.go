package console_test

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// logIn opens the console at url and logs in as the admin.
func logIn(b *browser, url string) {
	b.t.Helper()
	b.do("open the console", chromedp.Navigate(url+"/console"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.do("log in", fill(`input[name=username]`, adminUser), fill(`input[name=password]`, adminPassword),
		chromedp.Click(chromedp.CSS(`#login-form button[type=submit]`)), chromedp.WaitVisible(chromedp.CSS("#groups-view")))
}

// text is the expression of the text of the first element matching sel
// ("" when there is none).
func text(sel string) string { return `(document.querySelector(` + js(sel) + `)?.textContent ?? "")` }

// The group page shows the group's rates, lag, lag as time and lag trend;
// the dead letters are grouped by error and paged, selected a page or an
// error at a time; the message explorer seeks by id and by time and shows
// the payload once.
func TestConsoleThroughputAndDeadLetterPages(t *testing.T) {
	b := newBrowser(t)
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	srv := server(t, rdb)
	ctx := t.Context()

	// Shard 0 holds 30 entries a second apart, the first two hours old,
	// none read: the lag is 30 and the lag as time two hours. Their ids are
	// whole seconds, as a time picked in the page is.
	first := time.Now().Add(-2 * time.Hour).Truncate(time.Second).UnixMilli()
	id := func(i int) string { return fmt.Sprintf("%d-0", first+int64(i)*1000) }
	for i := range 30 {
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: prefix + ":0", ID: id(i), Values: []string{"payload", fmt.Sprintf("order-%d", i), "kind", "test"}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	for i := range 2 {
		if err := rdb.XGroupCreateMkStream(ctx, fmt.Sprintf("%s:%d", prefix, i), "workers", "0").Err(); err != nil {
			t.Fatal(err)
		}
	}

	logIn(b, srv.URL)
	b.do("create a group", fill(`#create-form input[name=streamPrefix]`, prefix), fill(`#create-form input[name=consumerGroup]`, "workers"),
		fill(`#create-form input[name=initialShardCount]`, "2"), chromedp.Click(chromedp.CSS(`#create-form button[type=submit]`)))
	rowSel := `tr[data-group=` + js(prefix+"/workers") + `]`
	b.waitFor("the group is listed", `document.querySelector(`+js(rowSel+` a`)+`)`)
	b.do("open the group", chromedp.Click(chromedp.CSS(rowSel+` a`)), chromedp.WaitVisible(chromedp.CSS("#group-view")))

	// Rates are known from the second read of the offsets on.
	shardAge := func(i int) string {
		return text(fmt.Sprintf(`#shard-offsets tr[data-shard-offset="%d"] td.lag-age`, i))
	}
	b.waitFor("the throughput shows lag, lag as time and rates", text("#total-lag")+` === "30" && `+
		text("#lag-age")+`.startsWith("2 h ") && /^\d+\.\d+\/s$/.test(`+text("#produced-rate")+`) && `+
		`/^\d+\.\d+\/s$/.test(`+text("#consumed-rate")+`) && `+
		shardAge(0)+`.startsWith("2 h ") && `+shardAge(1)+` === "0.0 s" && `+
		`/^\d+\.\d+\/s$/.test(`+text(`#shard-offsets tr[data-shard-offset="0"] td.produced`)+`)`)
	// Ten entries more: the produced rate and the lag trend show them.
	for i := 30; i < 40; i++ {
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: prefix + ":0", ID: id(i), Values: []string{"payload", fmt.Sprintf("order-%d", i), "kind", "test"}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	b.waitFor("the produced rate rises", text("#produced-rate")+` !== "0.00/s" && `+text("#total-lag")+` === "40"`)
	b.waitFor("the lag trend draws a line up to 40", `document.querySelector("#lag-trend svg polyline") && `+
		text("#lag-trend-legend")+`.includes("now 40") && `+text("#lag-trend-legend")+`.includes("min 30") && `+
		`/Averages over these .*: produced \d+\.\d+\/s, consumed \d+\.\d+\/s\./.test(`+text("#lag-trend-legend")+`)`)
	b.shot("group-throughput")

	// 45 dead letters of three errors: 25, 15 and 5.
	dlq := contract.DeadLetterStream(prefix)
	t.Cleanup(func() { rdb.Del(ctx, dlq) })
	causes := []struct {
		err string
		n   int
	}{{"invalid amount", 15}, {"shipping label rejected", 5}, {"timeout calling billing", 25}}
	for _, c := range causes {
		for i := range c.n {
			if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: dlq, Values: contract.DeadLetterFields(prefix+":0", id(i), "workers", 5, c.err,
				map[string]any{"payload": fmt.Sprintf("dead-%d", i)})}).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	rows := `document.querySelectorAll("#dead-letters tr[data-dead-letter]")`
	headers := `[...document.querySelectorAll("#dead-letters tr.error-group")].map(r => r.textContent).join(" | ")`
	pageShows := func(page string, n int, groups ...string) string {
		cond := fmt.Sprintf(`%s.startsWith(%s) && %s.length === %d`, text("#dl-page-info"), js(page), rows, n)
		for _, g := range groups {
			cond += fmt.Sprintf(` && %s.includes(%s)`, headers, js(g))
		}
		return cond
	}
	b.do("open the dead letters", chromedp.Click(chromedp.CSS("#dead-letters-link")), chromedp.WaitVisible(chromedp.CSS("#dead-letters-view")))
	b.waitFor("page 1: 20 of the largest error", pageShows("Page 1 of 3: 1–20 of 45", 20, "timeout calling billing — 25 dead letters"))
	b.shot("dead-letters-page-1")
	// The list is re-rendered at every refresh: a box is clicked in one
	// script, so that no refresh replaces it between finding and clicking.
	b.do("select the page", run(`document.querySelector("#dl-select-page").click()`))
	b.waitFor("the page is selected", text("#dl-page-info")+`.endsWith("; 20 selected") && [...document.querySelectorAll("#dead-letters tr[data-dead-letter] input")].every(c => c.checked)`)
	b.do("next page", chromedp.Click(chromedp.CSS("#dl-next")))
	b.waitFor("page 2: the rest of the first error, then the second", pageShows("Page 2 of 3: 21–40 of 45", 20,
		"timeout calling billing — 25 dead letters (continued)", "invalid amount — 15 dead letters")+
		` && document.querySelectorAll("#dead-letters tr[data-dead-letter] input:checked").length === 0`)
	b.do("next page", chromedp.Click(chromedp.CSS("#dl-next")))
	b.waitFor("page 3, the last", pageShows("Page 3 of 3: 41–45 of 45", 5, "shipping label rejected — 5 dead letters")+
		` && document.querySelector("#dl-next").disabled`)
	b.do("select one error", run(`document.querySelector('#dead-letters tr[data-error-group="shipping label rejected"] input').click()`))
	b.waitFor("its five are selected too", text("#dl-page-info")+`.endsWith("; 25 selected")`)
	b.do("clear the selection", chromedp.Click(chromedp.CSS("#dl-clear")))
	b.waitFor("nothing is selected", text("#dl-page-info")+`.endsWith("; 0 selected")`)
	b.do("select the error again and delete its dead letters",
		run(`document.querySelector('#dead-letters tr[data-error-group="shipping label rejected"] input').click()`),
		chromedp.Click(chromedp.CSS("#delete-dead-letters")))
	b.waitFor("five are deleted, two pages remain", `document.querySelectorAll('#dead-letter-outcome tr[data-outcome]').length === 5 && `+
		`[...document.querySelectorAll('#dead-letter-outcome tr[data-outcome]')].every(r => r.textContent.includes("DELETED")) && `+
		pageShows("Page 2 of 2: 21–40 of 40", 20))
	b.do("jump to the first error", run(`document.querySelector('#dead-letter-errors button[data-error-link="timeout calling billing"]').click()`))
	b.waitFor("page 1 again", pageShows("Page 1 of 2", 20, "timeout calling billing — 25 dead letters"))

	// Messages of shard 0, sought by id and by time.
	b.do("open the messages of shard 0", run(`location.hash = `+js("#/messages/"+prefix+"/workers/0")), chromedp.WaitVisible(chromedp.CSS("#messages-view")))
	firstRecord := func(payload string) string {
		return text(`#records tr[data-record] td:nth-child(3)`) + ` === ` + js(payload)
	}
	b.waitFor("the newest first", firstRecord("order-39")+` && `+text(`#records tr[data-record] td:nth-child(4)`)+` === '{"kind":"test"}'`)
	b.do("seek entry 10 oldest first", chromedp.SetValue(chromedp.CSS(`select[name=direction]`), "FORWARD"),
		fill(`input[name=seekId]`, id(10)), chromedp.Click(chromedp.CSS(`#seek-id-form button[type=submit]`)))
	b.waitFor("entries 10 to 19", firstRecord("order-10")+` && `+text("#page-info")+`.includes("from `+id(10)+` on: page 1, 10 record")`)
	b.do("next page", chromedp.Click(chromedp.CSS("#next-page")))
	b.waitFor("entries 20 to 29", firstRecord("order-20"))
	b.do("newest first from the same id", chromedp.SetValue(chromedp.CSS(`select[name=direction]`), "BACKWARD"))
	b.waitFor("entries 10 back to 1", firstRecord("order-10")+` && `+text(`#records tr[data-record]:last-child td:nth-child(3)`)+` === "order-1"`)
	b.do("seek the time of entry 25", chromedp.SetValue(chromedp.CSS(`select[name=direction]`), "FORWARD"),
		run(fmt.Sprintf(`document.querySelector("input[name=seekTime]").value = (() => { const d = new Date(%d); `+
			`return new Date(d - d.getTimezoneOffset() * 60000).toISOString().slice(0, 19); })()`, first+25_000)),
		chromedp.Click(chromedp.CSS(`#seek-time-form button[type=submit]`)))
	b.waitFor("entries from 25", firstRecord("order-25")+` && `+text("#page-info")+`.includes("from `+id(25)+` on")`)
	if v := eval[string](b, `document.querySelector("input[name=seekId]").value`); v != id(25) {
		t.Errorf("the time sought shows as id %q, want %s", v, id(25))
	}
	b.shot("messages-sought")
	if body := eval[string](b, `document.querySelector("#records").textContent`); strings.Count(body, "order-25") != 1 {
		t.Errorf("the payload order-25 shows %d times", strings.Count(body, "order-25"))
	}
	b.checkConsole()
}
