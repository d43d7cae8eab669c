package deploy

import (
	"os"
	"strings"
	"testing"

	"go.yaml.in/yaml/v4"

	"github.com/redis-stream-coordinator/coordinator/config"
)

// The compose file's demo: a job creating the group the samples use, the
// sample producer and at least two sample consumers built from
// deploy/samples/Dockerfile, each with its own member id, started after the
// group exists; the coordinator provisions the shard streams.
func TestComposeDemo(t *testing.T) {
	raw, err := os.ReadFile("docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	type service struct {
		Image       string                               `yaml:"image"`
		Build       struct{ Context, Dockerfile string } `yaml:"build"`
		Entrypoint  []string                             `yaml:"entrypoint"`
		Command     []string                             `yaml:"command"`
		Environment map[string]string                    `yaml:"environment"`
		DependsOn   map[string]struct {
			Condition string `yaml:"condition"`
		} `yaml:"depends_on"`
	}
	var compose struct {
		Services map[string]yaml.Node `yaml:"services"`
	}
	if err := yaml.Unmarshal(raw, &compose); err != nil {
		t.Fatal(err)
	}
	svc := func(name string) (service, bool) {
		n, ok := compose.Services[name]
		var s service
		if ok {
			// depends_on may be a list; only the map form matters here.
			_ = n.Decode(&s)
		}
		return s, ok
	}
	job, ok := svc("create-group")
	if !ok {
		t.Fatal("service create-group missing")
	}
	script := strings.Join(job.Command, " ")
	if !strings.Contains(script, "/coord/v1/streams/demo/groups/demo-workers") || !strings.Contains(script, "-X POST") {
		t.Errorf("create-group does not create demo/demo-workers: %s", script)
	}
	consumers := map[string]bool{}
	for name := range compose.Services {
		s, _ := svc(name)
		if len(s.Entrypoint) == 0 || !strings.Contains(s.Entrypoint[0], "sample-") {
			continue
		}
		bin := s.Entrypoint[0][strings.LastIndex(s.Entrypoint[0], "/")+1:]
		if !fileExists("../cmd/" + bin) {
			t.Errorf("%s runs %s: no ../cmd/%s", name, bin, bin)
		}
		if !fileExists(s.Build.Context + "/" + s.Build.Dockerfile) {
			t.Errorf("%s build %+v: no Dockerfile", name, s.Build)
		}
		if s.Environment["STREAM_PREFIX"] != "demo" || s.Environment["CONSUMER_GROUP"] != "demo-workers" || s.Environment["REDIS_ADDR"] != "redis:6379" {
			t.Errorf("%s environment %v", name, s.Environment)
		}
		if s.DependsOn["create-group"].Condition != "service_completed_successfully" {
			t.Errorf("%s does not wait for create-group: %+v", name, s.DependsOn)
		}
		if bin == "sample-consumer" {
			if id := s.Environment["MEMBER_ID"]; id == "" || consumers[id] {
				t.Errorf("%s member id %q missing or shared", name, id)
			} else {
				consumers[id] = true
			}
		}
	}
	if _, ok := svc("producer"); !ok || len(consumers) < 2 {
		t.Errorf("producer present %v, consumers %v: want a producer and 2+ consumers", ok, consumers)
	}
	coord, _ := svc("coordinator")
	t.Setenv("COORDINATOR_STREAMS_PROVISIONING_ENABLED", coord.Environment["COORDINATOR_STREAMS_PROVISIONING_ENABLED"])
	cfg, err := config.Load("coordinator/coordinator.yaml")
	if err != nil {
		t.Fatal(err)
	}
	if !cfg.Streams.ProvisioningEnabled {
		t.Error("the stack's coordinator does not provision streams: the producer's NOMKSTREAM writes would fail")
	}
}
