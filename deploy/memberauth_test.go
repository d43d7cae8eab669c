package deploy

import (
	"bytes"
	"context"
	"net"
	"net/http"
	"os"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"go.yaml.in/yaml/v4"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/config"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/freeport"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/testredis"
)

// composeEnvironment returns the environment of each service of
// docker-compose.yml with ${NAME:-default} expanded as compose does with
// NAME unset.
func composeEnvironment(t *testing.T) map[string]map[string]string {
	t.Helper()
	raw, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Environment map[string]string `yaml:"environment"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatal(err)
	}
	unset := regexp.MustCompile(`\$\{\w+:-([^}]*)\}`)
	out := map[string]map[string]string{}
	for name, s := range compose.Services {
		out[name] = map[string]string{}
		for k, v := range s.Environment {
			out[name][k] = unset.ReplaceAllString(v, "$1")
		}
	}
	return out
}

// userOf returns the configured user called name.
func userOf(cfg *config.Config, name string) (config.User, bool) {
	i := slices.IndexFunc(cfg.API.Users, func(u config.User) bool { return u.Username == name })
	if i < 0 {
		return config.User{}, false
	}
	return cfg.API.Users[i], true
}

// The stack authenticates its members: with the compose file's
// environment the coordinator's configuration turns
// authenticate-member-api on and has a user with the MEMBER role only,
// whose name and password are what every sample consumer logs in with;
// the operator user the group job and the producer use is kept (not left
// out as a repeat of the admin pair) and may not heartbeat.
func TestStackAuthenticatesMembers(t *testing.T) {
	env := composeEnvironment(t)
	for k, v := range env["coordinator"] {
		t.Setenv(k, v)
	}
	cfg, err := config.Load("coordinator/coordinator.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.API.AuthenticateMemberAPI {
		t.Error("the stack's coordinator does not authenticate members (api.authenticate-member-api)")
	}
	consumers := 0
	for name, e := range env {
		if !strings.HasPrefix(name, "consumer") {
			continue
		}
		consumers++
		u, ok := userOf(cfg, e["COORDINATOR_USER"])
		if !ok || !slices.Equal(u.Roles, []string{"MEMBER"}) || u.Password != e["COORDINATOR_PASSWORD"] || u.Password == "" {
			t.Errorf("%s logs in as %q: want the configured user with roles [MEMBER] and its password; users %v", name, e["COORDINATOR_USER"], cfg.API.Users)
		}
	}
	if consumers < 2 {
		t.Errorf("%d sample consumers in the compose file", consumers)
	}
	producer := env["producer"]
	u, ok := userOf(cfg, producer["COORDINATOR_USER"])
	if !ok || u.Password != producer["COORDINATOR_PASSWORD"] || slices.Contains(u.Roles, "MEMBER") {
		t.Errorf("the producer logs in as %q: want a configured user without MEMBER; users %v", producer["COORDINATOR_USER"], cfg.API.Users)
	}
	if u.Username == cfg.API.AdminUsername && u.Password == cfg.API.AdminPassword {
		t.Errorf("user %s repeats the admin pair: the coordinator would leave it out", u.Username)
	}
}

// makeDemo returns the Makefile's demo recipe and the member credentials
// it gives the sample consumers (DEMO_MEMBER_USER, DEMO_MEMBER_PASSWORD).
func makeDemo(t *testing.T) (recipe, user, password string) {
	t.Helper()
	raw, err := os.ReadFile("../Makefile")
	if err != nil {
		t.Fatal(err)
	}
	m := regexp.MustCompile(`(?ms)^demo:\n(.*?)\n\n`).FindSubmatch(append(raw, '\n', '\n'))
	if m == nil {
		t.Fatal("no demo target in the Makefile")
	}
	value := func(name string) string {
		v := regexp.MustCompile(`(?m)^` + name + ` \?= (\S+)$`).FindSubmatch(raw)
		if v == nil {
			t.Fatalf("the Makefile sets no %s", name)
		}
		return string(v[1])
	}
	return string(m[1]), value("DEMO_MEMBER_USER"), value("DEMO_MEMBER_PASSWORD")
}

// make demo runs the stack's configuration with the local Redis, as the
// compose file does in containers: a coordinator started as its recipe
// starts it (deploy/coordinator/coordinator.yaml, the demo's environment)
// lets the admin create the demo group and Grafana's user read, refuses a
// heartbeat without credentials (401), and lets a member that logs in as
// the demo's MEMBER user, as the sample consumers do, join and read every
// shard, then leave.
func TestDemoCoordinatorAuthenticatesMembers(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a coordinator process and Redis")
	}
	recipe, memberUser, memberPassword := makeDemo(t)
	for _, want := range []string{
		"coordinator -config deploy/coordinator/coordinator.yaml",
		"COORDINATOR_MEMBER_USER='$(DEMO_MEMBER_USER)' COORDINATOR_MEMBER_PASSWORD='$(DEMO_MEMBER_PASSWORD)'",
		`export COORDINATOR_USER="$$COORDINATOR_MEMBER_USER" COORDINATOR_PASSWORD="$$COORDINATOR_MEMBER_PASSWORD"`,
	} {
		if !strings.Contains(recipe, want) {
			t.Errorf("the demo recipe lacks %s:\n%s", want, recipe)
		}
	}
	if strings.Index(recipe, "COORDINATOR_USER=\"$$COORDINATOR_MEMBER_USER\"") > strings.Index(recipe, "bin/demo/sample-consumer") {
		t.Error("the demo starts a sample consumer before it gives it the member credentials")
	}

	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	dir := t.TempDir()
	bin, err := coordproc.Build(ctx, dir, "coordinator")
	if err != nil {
		t.Fatal(err)
	}
	rs := testredis.Start(t)
	redisHost, redisPort, _ := net.SplitHostPort(rs.Addr)
	port, err := freeport.Loopback()
	if err != nil {
		t.Fatal(err)
	}
	root := "http://127.0.0.1:" + strconv.Itoa(port)
	base := root + contract.BasePath
	var out lockedBuffer
	cmd := exec.Command(bin, "-config", "coordinator/coordinator.yaml", "-log-format", "text")
	cmd.Env = append(os.Environ(), "REDIS_HOST="+redisHost, "REDIS_PORT="+redisPort,
		"COORDINATOR_STREAMS_PROVISIONING_ENABLED=true", "COORDINATOR_SERVER_ADDRESS=127.0.0.1:"+strconv.Itoa(port),
		"COORDINATOR_STORE_KEY_PREFIX=demo:coord", "COORDINATOR_MEMBER_USER="+memberUser, "COORDINATOR_MEMBER_PASSWORD="+memberPassword)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	defer func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
			<-exited
		}
		if t.Failed() {
			t.Logf("coordinator output:\n%s", out.String())
		}
	}()
	eventually.True(t, "the coordinator is ready", func() bool {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("the coordinator exited: %v\n%s", err, out.String())
		default:
		}
		res, err := http.Get(root + "/readyz")
		if err != nil {
			return false
		}
		res.Body.Close()
		return res.StatusCode == http.StatusOK
	})

	admin := client.NewCoordinator(base, client.WithBasicAuth("admin", "password"))
	if _, err := admin.CreateGroup(ctx, "demo", "demo-workers", 4, "make-demo"); err != nil {
		t.Fatalf("admin / password creates the demo group: %v", err)
	}
	if _, err := client.NewCoordinator(base, client.WithBasicAuth("grafana", "grafana-password")).Groups(ctx); err != nil {
		t.Errorf("Grafana's user reads the groups: %v", err)
	}
	res, err := http.Post(base+contract.HeartbeatPath("demo", "demo-workers", "anonymous"), "application/json",
		strings.NewReader(`{"protocolVersion":1,"requestId":"r-1","memberId":"anonymous","memberName":"demo-workers","memberEpoch":0,"metadataVersion":0,"runtimeConsumerCapacity":{"runtimeMaxConcurrency":1,"availableConcurrency":1},"ownedShards":[]}`))
	if err != nil {
		t.Fatal(err)
	}
	res.Body.Close()
	if res.StatusCode != http.StatusUnauthorized {
		t.Errorf("a heartbeat without credentials: %d, want 401", res.StatusCode)
	}

	m, err := client.NewMember(client.MemberConfig{
		Coordinator:  client.NewCoordinator(base, client.WithBearerLogin(memberUser, memberPassword)),
		StreamPrefix: "demo", Group: "demo-workers", MemberID: "consumer-1",
	})
	if err != nil {
		t.Fatal(err)
	}
	mctx, stop := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Run(mctx) }()
	eventually.True(t, "the member reads the 4 shards", func() bool { return len(m.Owned()) == 4 })
	stop()
	if err := <-done; err != nil {
		t.Errorf("the member: %v", err)
	}
	if strings.Contains(out.String(), "configured API user ignored") {
		t.Errorf("the coordinator left a configured user out:\n%s", out.String())
	}
}

// lockedBuffer is a bytes.Buffer that a process writes to while the test
// reads it.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
