package console_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/redis/go-redis/v9"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/audit"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/membersim"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
	"github.com/redis-stream-coordinator/coordinator/monitoring"
	"github.com/redis-stream-coordinator/coordinator/security"
	"github.com/redis-stream-coordinator/coordinator/streams"
)

// The browser test drives the console in a real headless Chromium against
// the real HTTP API (actor system, memory store, security with audit) and
// the shared Redis for the message explorer.

const (
	adminUser     = "admin"
	adminPassword = "console-secret"
	// ScreenshotsEnv names a folder to keep the screenshots in; default a
	// temporary folder of the test.
	ScreenshotsEnv = "CONSOLE_SCREENSHOTS"
	// waitTimeout bounds every wait on a condition of the page.
	waitTimeout = 30 * time.Second
)

// chromium returns the browser to run, skipping the test when there is none
// (failing it on CI, which must install Debian's chromium: .ci/run).
func chromium(t *testing.T) string {
	t.Helper()
	if p := os.Getenv("CHROMIUM"); p != "" {
		return p
	}
	for _, name := range []string{"/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	if os.Getenv("CI") == "true" {
		t.Fatal("chromium is not installed; .ci/run installs Debian's chromium package")
	}
	t.Skip("chromium is not installed (apt-get install chromium, or set CHROMIUM to a Chrome binary): skipping the console browser test")
	return ""
}

// server starts a coordinator (internal/testkit/coordtest: memory store,
// a cluster node advertising console-test.local, the event loop on) with
// security (user admin), audit history and the data plane over rdb (none
// when nil); settings get a long lease so that members may pause.
func server(t *testing.T, rdb redis.UniversalClient) *httptest.Server {
	t.Helper()
	settings := group.DefaultSettings()
	settings.MemberLeaseTTL = time.Minute
	settings.HeartbeatInterval = 300 * time.Millisecond
	users, err := security.NewUsers(security.Options{AdminUsername: adminUser, AdminPassword: adminPassword,
		TokenSecret: "console-browser-test-secret", TokenTTL: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	recent := audit.NewMemorySink(httpapi.RecentMutationsLimit, 1000)
	return coordtest.Start(t, coordtest.Options{ID: "console-test", Cluster: true, AdvertiseURL: "http://console-test.local:8080",
		Settings: settings,
		Actors: func(o *actors.Options) {
			o.TickEnabled, o.TickInterval = true, 500*time.Millisecond
			if rdb != nil { // live offset resets need Redis
				o.Positions = streams.NewResetPositions(streams.NewOperator(rdb))
			}
		},
		API: func(o *httpapi.Options) {
			o.Security = &httpapi.Security{Users: users, Audit: recent, History: recent}
			if rdb != nil {
				o.DataPlane = monitoring.NewReader(streams.NewObserver(rdb), nil, time.Second)
				o.Streams = streams.NewOperator(rdb)
			}
		},
	}).HTTP
}

// members heartbeat in the background every 250 ms to the API at base
// (through c) until the test ends, except while paused; a member killed
// stops reading at once and never heartbeats again, as a process killed
// with SIGKILL.
type members struct {
	paused atomic.Bool
	killed map[string]*atomic.Bool
	wg     sync.WaitGroup
}

// kill kills member id.
func (ms *members) kill(id string) { ms.killed[id].Store(true) }

func startMembers(t *testing.T, c *http.Client, base string, key group.Key, ids ...string) *members {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	ms := &members{killed: map[string]*atomic.Bool{}}
	oracle := membersim.NewOracle()
	for _, id := range ids {
		m := membersim.New(id, oracle)
		killed := &atomic.Bool{}
		ms.killed[id] = killed
		ms.wg.Go(func() {
			tick := time.NewTicker(250 * time.Millisecond)
			defer tick.Stop()
			for {
				if killed.Load() {
					m.StopReading()
					return
				}
				if !ms.paused.Load() {
					_, _ = membersim.Heartbeat(ctx, c, base, key, m)
				}
				select {
				case <-ctx.Done():
					return
				case <-tick.C:
				}
			}
		})
	}
	t.Cleanup(func() {
		cancel()
		ms.wg.Wait()
		if o := oracle.Overlaps(); len(o) > 0 {
			t.Errorf("shards read by two members at once: %v", o)
		}
	})
	return ms
}

// browser is one tab of a headless Chromium, with the console messages
// that count as failures.
type browser struct {
	t     *testing.T
	ctx   context.Context
	shots string
	n     int

	mu     sync.Mutex
	errors []string
}

func newBrowser(t *testing.T) *browser {
	t.Helper()
	exe := chromium(t)
	opts := append(chromedp.DefaultExecAllocatorOptions[:],
		chromedp.ExecPath(exe),
		chromedp.Headless, chromedp.NoSandbox, chromedp.DisableGPU, chromedp.NoFirstRun,
		chromedp.Flag("disable-quic", true),
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1400, 1000),
	)
	actx, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancelTab := chromedp.NewContext(actx)
	b := &browser{t: t, ctx: ctx, shots: os.Getenv(ScreenshotsEnv)}
	if b.shots == "" {
		b.shots = t.TempDir()
	} else if err := os.MkdirAll(b.shots, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := chromedp.Do(ctx); err != nil { // starts the browser
		cancelTab()
		cancelAlloc()
		t.Fatalf("starting %s: %v", exe, err)
	}
	// Every console error, uncaught exception and browser log error fails
	// the test, except the network log lines of the API errors the test
	// provokes on purpose (the page shows those itself).
	listening := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		msgs := chromedp.Console(ctx)
		close(listening)
		for m, err := range msgs {
			if err != nil {
				return
			}
			if (m.Type == chromedp.ConsoleError || m.IsException()) && m.Source != "network" {
				b.mu.Lock()
				b.errors = append(b.errors, fmt.Sprintf("%s (%s:%d)", m, m.URL, m.Line))
				b.mu.Unlock()
			}
		}
	}()
	<-listening
	t.Cleanup(func() {
		b.checkConsole()
		cancelTab()
		cancelAlloc()
		<-done
	})
	return b
}

// checkConsole fails the test with the console errors seen so far.
func (b *browser) checkConsole() {
	b.t.Helper()
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, e := range b.errors {
		b.t.Errorf("browser console: %s", e)
	}
	b.errors = nil
}

// do runs steps, failing the test on the first error.
func (b *browser) do(what string, steps ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout)
	defer cancel()
	if err := chromedp.Do(ctx, steps...); err != nil {
		b.shot("failed")
		b.t.Fatalf("%s: %v", what, err)
	}
}

// waitFor polls the JavaScript condition expr until it is true.
func (b *browser) waitFor(what, expr string) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, waitTimeout+5*time.Second)
	defer cancel()
	_, err := chromedp.Run(ctx, chromedp.Poll[bool]("!!("+expr+")",
		chromedp.WithPollingInterval(100*time.Millisecond), chromedp.WithPollingTimeout(waitTimeout)))
	if err != nil {
		b.shot("failed")
		body, _ := chromedp.Run(b.ctx, chromedp.Evaluate[string](`document.querySelector("main").innerText`))
		b.t.Fatalf("waiting until %s (%s): %v\npage:\n%s", what, expr, err, body)
	}
}

// eval returns the value of expr.
func eval[T any](b *browser, expr string) T {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[T](expr))
	if err != nil {
		b.t.Fatalf("evaluating %s: %v", expr, err)
	}
	return v
}

// shot writes a full-page PNG named NN-name.png and logs its path.
func (b *browser) shot(name string) {
	b.t.Helper()
	png, err := chromedp.Run(b.ctx, chromedp.FullScreenshot(100))
	if err != nil {
		b.t.Logf("screenshot %s: %v", name, err)
		return
	}
	b.n++
	path := filepath.Join(b.shots, fmt.Sprintf("%02d-%s.png", b.n, name))
	if err := os.WriteFile(path, png, 0o644); err != nil {
		b.t.Fatal(err)
	}
	b.t.Logf("screenshot: %s", path)
}

// fill replaces the value of the input sel with value, typed.
func fill(sel, value string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(chromedp.WaitVisible(chromedp.CSS(sel)),
		run(`document.querySelector(`+js(sel)+`).value = ""`), chromedp.SendKeys(chromedp.CSS(sel), value))
}

// run evaluates the script expr, ignoring its value.
func run(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, t *chromedp.Target) error {
		_, err := chromedp.Evaluate[any](expr)(ctx, t)
		return err
	})
}

// js quotes s as a JavaScript string.
func js(s string) string { return strconv.Quote(s) }

func TestConsoleInBrowser(t *testing.T) {
	b := newBrowser(t)
	rdb := testredis.Shared(t)
	prefix := testredis.Prefix(t, rdb)
	key := group.Key{StreamPrefix: prefix, ConsumerGroup: "workers"}
	srv := server(t, rdb)
	ctx := context.Background()
	for i := range 25 {
		if err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: prefix + ":0", Values: []string{"payload", fmt.Sprintf("order-%d", i)}}).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// The group's Redis consumer groups, from the start: shard 0's 25
	// entries are its whole lag.
	for i := range 4 {
		if err := rdb.XGroupCreateMkStream(ctx, fmt.Sprintf("%s:%d", prefix, i), "workers", "0").Err(); err != nil {
			t.Fatal(err)
		}
	}
	rowSel := `tr[data-group=` + js(prefix+"/workers") + `]`

	// Login: a wrong password shows the 401, the right one the groups.
	b.do("open the console", chromedp.Navigate(srv.URL+"/console"), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	b.do("wrong login", fill(`input[name=username]`, adminUser), fill(`input[name=password]`, "wrong"),
		chromedp.Click(chromedp.CSS(`#login-form button[type=submit]`)))
	b.waitFor("the login error shows", `document.querySelector("#login-form .form-error:not([hidden])")?.textContent.includes("HTTP 401 UNAUTHORIZED")`)
	b.shot("login-failed")
	b.do("login", fill(`input[name=password]`, adminPassword), chromedp.Click(chromedp.CSS(`#login-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#groups-view")))
	b.waitFor("the empty list shows", `document.querySelector("#groups-table td.empty")`)
	if href := eval[string](b, `location.href`); strings.Contains(href, "token") || !strings.HasSuffix(href, "#/groups") {
		t.Errorf("after login the URL is %s", href)
	}
	if tok := eval[string](b, `sessionStorage.getItem("coord.token") ?? ""`); tok == "" {
		t.Error("no token in sessionStorage after login")
	}

	// Create a group, then again: the second answer's error shows.
	b.do("create a group", fill(`#create-form input[name=streamPrefix]`, prefix), fill(`#create-form input[name=consumerGroup]`, "workers"),
		fill(`#create-form input[name=initialShardCount]`, "4"), fill(`#create-form input[name=reason]`, "browser test"),
		chromedp.Click(chromedp.CSS(`#create-form button[type=submit]`)))
	b.waitFor("the group is listed with its lag", `document.querySelector(`+js(rowSel+` td.shard-count`)+`)?.textContent === "4" && `+
		`document.querySelector(`+js(rowSel+` td.lag`)+`)?.textContent === "25"`)
	b.do("create it again", chromedp.Click(chromedp.CSS(`#create-form button[type=submit]`)))
	b.waitFor("the conflict shows", `document.querySelector("#create-form .form-error:not([hidden])")?.textContent.includes("409 GROUP_ALREADY_EXISTS")`)
	b.shot("groups")

	// Two members join: both appear and the grid fills, one owner a shard.
	ms := startMembers(t, srv.Client(), srv.URL+contract.BasePath, key, "member-a", "member-b")
	b.do("open the group", chromedp.Click(chromedp.CSS(rowSel+` a`)), chromedp.WaitVisible(chromedp.CSS("#group-view")))
	settled := func(shards int) string {
		return fmt.Sprintf(`document.querySelector("#group-state")?.textContent === "STABLE" && `+
			`document.querySelector("#group-shards")?.textContent === "%d" && `+
			`document.querySelectorAll("#members tr[data-member]").length === 2 && `+
			`document.querySelectorAll("#assignment-grid tr[data-shard]").length === %d && `+
			`document.querySelectorAll("#assignment-grid td.cell.owned").length === %d && `+
			`document.querySelectorAll("#assignment-grid td.cell.pending, #assignment-grid td.cell.releasing, #assignment-grid td.cell.revoking").length === 0`,
			shards, shards, shards)
	}
	b.waitFor("both members own two shards each", settled(4))
	b.waitFor("the members show their leases", `[...document.querySelectorAll("#members td.lease")].length === 2 && `+
		`[...document.querySelectorAll("#members td.lease")].every(td => td.textContent.startsWith("expires in"))`)
	if v := eval[string](b, `document.querySelector("#violations").textContent`); v != "No invariant violations." {
		t.Errorf("violations: %q", v)
	}
	b.shot("group-stable")

	// Scale 4 → 6 with the members paused (so the migration stays ACTIVE
	// with shards 4 and 5 pending), then roll it back.
	ms.paused.Store(true)
	b.do("scale to 6", fill(`#scale-form input[name=targetShardCount]`, "6"), chromedp.Click(chromedp.CSS(`#scale-form button[type=submit]`)))
	b.waitFor("the migration is active", `document.querySelector("#migrations tr[data-migration] .badge-active") && `+
		`document.querySelector("#group-shards")?.textContent === "6" && `+
		`document.querySelectorAll("#assignment-grid td.cell.pending").length === 2`)
	b.shot("scaled")
	// The migrations table re-renders at every refresh: click in one script.
	b.do("roll back", run(`document.querySelector("#migrations tr[data-migration] button").click()`))
	b.waitFor("the migration is rolled back", `document.querySelector("#migrations tr[data-migration] .badge-rolled_back") && `+
		`document.querySelector("#group-shards")?.textContent === "4" && `+
		`document.querySelector("#scale-form .ok:not([hidden])")?.textContent.includes("ROLLED_BACK")`)
	ms.paused.Store(false)
	b.waitFor("the group settles again", settled(4))
	b.waitFor("the audit events list the scale and the rollback", `["CREATE_GROUP", "SCALE_GROUP", "ROLLBACK_MIGRATION"].every(a => document.querySelector("#audit").textContent.includes(a))`)
	b.shot("rolled-back")

	// Shard positions: shard 0's lag is its 25 entries. A live reset to
	// the end pauses the shard, sets it and grants it again: the answer
	// shows DONE with the position before and after, and the lag column
	// follows. The pause form pauses and resumes a shard.
	lagOf := func(i int) string {
		return fmt.Sprintf(`document.querySelector('#shard-offsets tr[data-shard-offset="%d"] td.lag')?.textContent`, i)
	}
	b.waitFor("the lag column shows shard 0's backlog", lagOf(0)+` === "25"`)
	b.do("ask to reset shard 0 to the end", chromedp.SetValue(chromedp.CSS(`select[name=resetTo]`), "LATEST"),
		fill(`input[name=resetShards]`, "0"), chromedp.Click(chromedp.CSS(`#reset-form button[type=submit]`)),
		chromedp.WaitVisible(chromedp.CSS("#confirm-reset")))
	if q := eval[string](b, `document.querySelector("#reset-question").textContent`); !strings.Contains(q, "shards 0 to LATEST") {
		t.Errorf("confirmation question: %q", q)
	}
	b.do("confirm", chromedp.Click(chromedp.CSS("#confirm-reset")))
	b.waitFor("the live reset is DONE", `document.querySelector("#reset-state")?.textContent.includes("DONE")`)
	b.waitFor("the answer shows the lag after", `document.querySelector('#reset-result tr[data-reset-shard="0"] td.lag-after')?.textContent === "0"`)
	b.waitFor("the lag column follows", lagOf(0)+` === "0"`)
	b.waitFor("the reset is audited", `document.querySelector("#audit").textContent.includes("RESET_OFFSETS")`)
	b.shot("offset-reset")
	b.do("pause shard 1", fill(`input[name=pauseShards]`, "1"), chromedp.Click(chromedp.CSS(`#pause-form button[type=submit]`)))
	b.waitFor("shard 1 is paused", `document.querySelector("#paused-shards")?.textContent.startsWith("Paused: 1")`)
	b.do("resume shard 1", chromedp.Click(chromedp.CSS(`#resume-shards`)))
	b.waitFor("nothing is paused", `document.querySelector("#paused-shards")?.textContent.startsWith("Paused: none")`)

	// Dead letters as the Go client writes them, from shard 1: the group's
	// two are listed, another group's sharing the stream only when every
	// group's are asked for; one is redriven to its shard, the other
	// deleted.
	dlq := contract.DeadLetterStream(prefix)
	var deadIDs []string
	for i, e := range []string{"timeout calling billing", "invalid amount", "shipping label rejected"} {
		owner := "workers"
		if i == 2 {
			owner = "shipping"
		}
		id, err := rdb.XAdd(ctx, &redis.XAddArgs{Stream: dlq, Values: contract.DeadLetterFields(prefix+":1", fmt.Sprintf("%d-0", i+1), owner, 5, e,
			map[string]any{"payload": fmt.Sprintf("dead-%d", i)})}).Result()
		if err != nil {
			t.Fatal(err)
		}
		deadIDs = append(deadIDs, id)
	}
	listed := func(n int) string {
		return fmt.Sprintf(`document.querySelectorAll("#dead-letters tr[data-dead-letter]").length === %d`, n)
	}
	b.do("open the dead letters", chromedp.Click(chromedp.CSS("#dead-letters-link")), chromedp.WaitVisible(chromedp.CSS("#dead-letters-view")))
	b.waitFor("the group's two dead letters are listed", listed(2)+` && document.querySelector("#dead-letters").textContent.includes("invalid amount") && `+
		`!document.querySelector("#dead-letters").textContent.includes("shipping")`)
	b.do("show every group's", chromedp.Click(chromedp.CSS(`input[name=dlAllGroups]`)))
	b.waitFor("the other group's is listed too", listed(3)+` && document.querySelector('#dead-letters tr[data-dead-letter="`+deadIDs[2]+`"] td.group')?.textContent === "shipping"`)
	b.shot("dead-letters")
	b.do("back to the group's own", chromedp.Click(chromedp.CSS(`input[name=dlAllGroups]`)))
	b.waitFor("the group's two only", listed(2))
	row := func(id string) string { return `#dead-letters tr[data-dead-letter="` + id + `"]` }
	// The list is re-rendered at every refresh: a box is ticked in one
	// script, so that no refresh replaces it between finding and clicking.
	tick := func(id string) chromedp.Action[chromedp.Void] {
		return run(`document.querySelector(` + js(row(id)+` input[type=checkbox]`) + `).click()`)
	}
	b.do("redrive the first", tick(deadIDs[0]), chromedp.Click(chromedp.CSS("#redrive")))
	b.waitFor("it is redriven", `document.querySelector('#dead-letter-outcome tr[data-outcome="`+deadIDs[0]+`"]')?.textContent.includes("REDRIVEN") && `+
		listed(1))
	if n := rdb.XLen(ctx, prefix+":1").Val(); n != 1 {
		t.Errorf("shard 1 holds %d entries after the redrive, want 1", n)
	}
	b.do("delete the second", tick(deadIDs[1]), chromedp.Click(chromedp.CSS("#delete-dead-letters")))
	b.waitFor("it is deleted", `document.querySelector('#dead-letter-outcome tr[data-outcome="`+deadIDs[1]+`"]')?.textContent.includes("DELETED") && `+
		`document.querySelector("#dead-letters td.empty")`)
	b.do("back to the group", chromedp.Click(chromedp.CSS(`#dead-letters-view .crumbs a:nth-of-type(2)`)), chromedp.WaitVisible(chromedp.CSS("#group-view")))

	// Messages of shard 0, newest first, 10 a page: 10, 10, 5.
	b.do("open the messages of shard 0", chromedp.Click(chromedp.CSS(`#assignment-grid tr[data-shard="0"] a`)),
		chromedp.WaitVisible(chromedp.CSS("#messages-view")))
	page := func(n, records int, first string) string {
		return fmt.Sprintf(`document.querySelector("#page-info")?.textContent.includes("page %d, %d record") && `+
			`document.querySelector("#records tr[data-record] td:nth-child(3)")?.textContent === %s`, n, records, js(first))
	}
	b.waitFor("page 1", page(1, 10, "order-24"))
	b.shot("messages")
	b.do("next page", chromedp.Click(chromedp.CSS("#next-page")))
	b.waitFor("page 2", page(2, 10, "order-14"))
	b.do("next page", chromedp.Click(chromedp.CSS("#next-page")))
	b.waitFor("page 3, the last", page(3, 5, "order-4")+` && document.querySelector("#next-page").disabled`)
	b.do("previous page", chromedp.Click(chromedp.CSS("#prev-page")))
	b.waitFor("page 2 again", page(2, 10, "order-14"))
	b.do("oldest first", chromedp.SetValue(chromedp.CSS(`select[name=direction]`), "FORWARD"))
	b.waitFor("page 1 oldest first", page(1, 10, "order-0"))

	// The cluster page: this coordinator owns the group.
	b.do("open the cluster page", chromedp.Click(chromedp.CSS(`nav a[href="#/cluster"]`)), chromedp.WaitVisible(chromedp.CSS("#cluster-view")))
	b.waitFor("the group's owner and epoch show", `(() => { const r = document.querySelector('#cluster-groups tr[data-cluster-group=`+js(prefix+"/workers")+`]'); `+
		`return r && r.cells[2].textContent === "console-test" && Number(r.cells[3].textContent) >= 1 && r.cells[4].textContent === "console-test"; })() && `+
		`document.querySelector('#cluster-coordinators tr[data-coordinator="console-test"]')?.cells[1].textContent === "http://console-test.local:8080"`)
	b.shot("cluster")

	// Delete: refused while members live, done with force.
	b.do("back to the groups", chromedp.Click(chromedp.CSS(`header a.brand`)), chromedp.WaitVisible(chromedp.CSS(rowSel)))
	b.do("ask to delete", chromedp.Click(chromedp.CSS(rowSel+` button.danger`)), chromedp.WaitVisible(chromedp.CSS("#confirm-delete")),
		fill(`input[name=deleteReason]`, "browser test done"), chromedp.Click(chromedp.CSS("#confirm-delete")))
	b.waitFor("the refusal shows", `document.querySelector("#delete-confirm .form-error:not([hidden])")?.textContent.includes("409 GROUP_HAS_ACTIVE_MEMBERS")`)
	b.shot("delete-refused")
	b.do("force delete", chromedp.Click(chromedp.CSS(`input[name=force]`)), chromedp.Click(chromedp.CSS("#confirm-delete")))
	b.waitFor("the group is gone", `!document.querySelector(`+js(rowSel)+`) && document.querySelector("#groups-table td.empty")`)

	// Logout forgets the token.
	b.do("log out", chromedp.Click(chromedp.CSS("#logout")), chromedp.WaitVisible(chromedp.CSS("#login-form")))
	if tok := eval[string](b, `sessionStorage.getItem("coord.token") ?? ""`); tok != "" {
		t.Error("token kept after logout")
	}
	b.checkConsole()
}

// The console's files are open while every API route needs credentials.
func TestConsoleOpenWithSecurity(t *testing.T) {
	srv := server(t, nil)
	for path, want := range map[string]int{
		"/console/": http.StatusOK, "/console/app.js": http.StatusOK,
		contract.BasePath + "/monitoring/groups": http.StatusUnauthorized,
	} {
		resp, err := srv.Client().Get(srv.URL + path)
		if err != nil {
			t.Fatal(err)
		}
		_ = resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("GET %s: %d, want %d", path, resp.StatusCode, want)
		}
	}
}
