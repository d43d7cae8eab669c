package deploy

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/redis-stream-coordinator/coordinator/config"
)

// The stack's coordinator configuration loads, uses the Redis store, and
// gives Grafana's user (the datasource's) only the READ role.
func TestStackCoordinatorConfig(t *testing.T) {
	t.Setenv("COORDINATOR_GRAFANA_USER", "grafana")
	cfg, err := config.Load("coordinator/coordinator.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Store.Type != config.StoreRedis || !cfg.RedisRequired() {
		t.Errorf("store %q, Redis required %v: the stack runs on Redis", cfg.Store.Type, cfg.RedisRequired())
	}
	i := slices.IndexFunc(cfg.API.Users, func(u config.User) bool { return u.Username == "grafana" })
	if i < 0 || !slices.Equal(cfg.API.Users[i].Roles, []string{"READ"}) {
		t.Errorf("users %+v: want grafana with roles [READ]", cfg.API.Users)
	}
}

// The coordinator container starts: with the image's environment (the
// Dockerfile's ENV, listening on every interface) and the compose file's
// defaults, the stack's configuration passes the insecure-defaults check,
// and its operator login is the README's.
func TestStackCoordinatorStartsInTheImage(t *testing.T) {
	dockerfile, err := os.ReadFile("../Dockerfile")
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, m := range regexp.MustCompile(`(?m)^ENV (\w+)=(\S*)$`).FindAllStringSubmatch(string(dockerfile), -1) {
		env[m[1]] = m[2]
	}
	if env["COORDINATOR_SERVER_ADDRESS"] != ":8080" {
		t.Fatalf("Dockerfile ENV %v: want COORDINATOR_SERVER_ADDRESS=:8080", env)
	}
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
	// ${NAME:-default} as compose expands it with NAME unset.
	unset := regexp.MustCompile(`\$\{\w+:-([^}]*)\}`)
	for k, v := range compose.Services["coordinator"].Environment {
		env[k] = unset.ReplaceAllString(v, "$1")
	}
	for k, v := range env {
		t.Setenv(k, v)
	}
	cfg, err := config.Load("coordinator/coordinator.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.Server.Address != ":8080" || cfg.API.TokenSecret == "" {
		t.Errorf("address %q, token secret set %v", cfg.Server.Address, cfg.API.TokenSecret != "")
	}
	// One set of credentials: the README's admin / password logs in to the
	// stack too, with the right to create and scale groups.
	i := slices.IndexFunc(cfg.API.Users, func(u config.User) bool { return u.Username == "admin" })
	if i < 0 || cfg.API.Users[i].Password != "password" || !slices.Contains(cfg.API.Users[i].Roles, "WRITE") {
		t.Errorf("users %+v: want admin / password with WRITE, as the README says", cfg.API.Users)
	}
}

// The compose file runs the four services, the coordinator from the
// repository's Dockerfile with the stack's configuration.
func TestComposeFile(t *testing.T) {
	raw, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var compose struct {
		Services map[string]struct {
			Build   struct{ Context, Dockerfile string } `yaml:"build"`
			Command []string                             `yaml:"command"`
			Volumes []string                             `yaml:"volumes"`
		} `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatal(err)
	}
	for _, s := range []string{"redis", "coordinator", "prometheus", "grafana"} {
		if _, ok := compose.Services[s]; !ok {
			t.Errorf("service %s missing", s)
		}
	}
	c := compose.Services["coordinator"]
	if !fileExists(c.Build.Context + "/" + c.Build.Dockerfile) {
		t.Errorf("coordinator build %+v: no Dockerfile", c.Build)
	}
	for _, v := range slices.Concat(c.Volumes, compose.Services["prometheus"].Volumes, compose.Services["grafana"].Volumes) {
		if src, _, _ := strings.Cut(v, ":"); !fileExists(src) {
			t.Errorf("volume %s: no such file in deploy/", v)
		}
	}
}

// fileExists reports whether path exists.
func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// The Docker build context leaves out what git ignores (bin/ is ~50 MB
// after make demo) and the git data.
func TestDockerignore(t *testing.T) {
	ignore, err := os.ReadFile("../.dockerignore")
	if err != nil {
		t.Fatal(err)
	}
	gitignore, err := os.ReadFile("../.gitignore")
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(string(ignore), "\n")
	for _, p := range append(strings.Fields(string(gitignore)), ".git") {
		if !slices.ContainsFunc(lines, func(l string) bool { return l != "" && strings.HasPrefix(p, l) }) {
			t.Errorf(".dockerignore lacks %s", p)
		}
	}
}
