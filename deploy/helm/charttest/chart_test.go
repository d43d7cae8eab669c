// Package charttest renders the Helm chart deploy/helm/redis-stream-coordinator
// as `helm template` and `helm install` do (the values validated against
// values.schema.json by the same Helm function, then the templates and
// NOTES.txt rendered with no cluster for lookup to read) for several value
// sets, decodes every manifest strictly into the Kubernetes API types and
// checks the properties an operator relies on, and that the settings the
// chart refuses are refused with a message saying why. It is a module of
// its own so that the coordinator's module does not depend on Helm and
// client-go.
package charttest

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"helm.sh/helm/v3/pkg/chart/loader"
	"helm.sh/helm/v3/pkg/chartutil"
	"helm.sh/helm/v3/pkg/engine"
	appsv1 "k8s.io/api/apps/v1"
	autoscalingv2 "k8s.io/api/autoscaling/v2"
	corev1 "k8s.io/api/core/v1"
	networkingv1 "k8s.io/api/networking/v1"
	policyv1 "k8s.io/api/policy/v1"
	"sigs.k8s.io/yaml"

	"github.com/redis-stream-coordinator/coordinator/config"
)

const chartDir = "../redis-stream-coordinator"

// manifests are the decoded objects of one rendering.
type manifests struct {
	deployment    *appsv1.Deployment
	service       *corev1.Service
	configMap     *corev1.ConfigMap
	secret        *corev1.Secret
	pdb           *policyv1.PodDisruptionBudget
	hpa           *autoscalingv2.HorizontalPodAutoscaler
	networkPolicy *networkingv1.NetworkPolicy
	ingress       *networkingv1.Ingress
	// monitoring are the monitoring.coreos.com objects by kind.
	monitoring map[string]map[string]any
	// scaledObjects are the keda.sh ScaledObjects, in rendering order.
	scaledObjects []map[string]any
	// notes is the rendered NOTES.txt.
	notes string
}

// rendering is the output of helmTemplate: the manifests by template file
// and NOTES.txt.
type rendering struct {
	files map[string]string
	notes string
}

// helmTemplate renders the chart with values over its defaults as
// `helm template coord <chart> --namespace streams -f values` does (Helm's
// install action client-only, which this module cannot import: its provenance package
// needs golang.org/x/crypto/openpgp, gone from the x/crypto the coordinator
// requires). The steps are the action's: the chart's kubeVersion against
// the default capabilities, then chartutil.ToRenderValuesWithSchemaValidation
// with validation on, the function install, upgrade and template call to
// check the values against values.schema.json, then the engine without a
// cluster (lookup finds nothing, as under `helm template`).
func helmTemplate(values string) (rendering, error) {
	chrt, err := loader.Load(chartDir)
	if err != nil {
		return rendering{}, err
	}
	vals, err := chartutil.ReadValues([]byte(values))
	if err != nil {
		return rendering{}, err
	}
	// As `helm template --kube-version 1.30.0`: the oldest release the chart
	// supports (a test binary's default capabilities say v1.20).
	kube, err := chartutil.ParseKubeVersion("v1.30.0")
	if err != nil {
		return rendering{}, err
	}
	caps := chartutil.DefaultCapabilities.Copy()
	caps.KubeVersion = *kube
	if !chartutil.IsCompatibleRange(chrt.Metadata.KubeVersion, caps.KubeVersion.String()) {
		return rendering{}, fmt.Errorf("chart requires kubeVersion %s, capabilities have %s", chrt.Metadata.KubeVersion, caps.KubeVersion)
	}
	top, err := chartutil.ToRenderValuesWithSchemaValidation(chrt, vals, chartutil.ReleaseOptions{Name: "coord", Namespace: "streams", Revision: 1, IsInstall: true}, caps, false)
	if err != nil {
		return rendering{}, err
	}
	files, err := engine.Render(chrt, top)
	if err != nil {
		return rendering{}, err
	}
	r := rendering{files: map[string]string{}}
	for name, text := range files {
		switch {
		case strings.HasSuffix(name, "/NOTES.txt"):
			r.notes = text
		case strings.HasSuffix(name, ".tpl"):
		default:
			r.files[name] = text
		}
	}
	return r, nil
}

// render renders the chart and decodes every manifest strictly (an unknown
// field is an error).
func render(t *testing.T, values string) manifests {
	t.Helper()
	r, err := helmTemplate(values)
	if err != nil {
		t.Fatal(err)
	}
	m := manifests{monitoring: map[string]map[string]any{}, notes: r.notes}
	for name, text := range r.files {
		for _, doc := range strings.Split(text, "\n---") {
			if strings.TrimSpace(doc) == "" {
				continue
			}
			decode(t, name, doc, &m)
		}
	}
	if m.deployment == nil || m.configMap == nil || m.service == nil {
		t.Fatalf("no Deployment, ConfigMap or Service in %v", r.files)
	}
	return m
}

// decode decodes one manifest of file name strictly into its field of m.
func decode(t *testing.T, name, doc string, m *manifests) {
	t.Helper()
	raw, err := yaml.YAMLToJSON([]byte(doc))
	if err != nil {
		t.Fatalf("%s: %v\n%s", name, err, doc)
	}
	var head struct{ APIVersion, Kind string }
	if err := json.Unmarshal(raw, &head); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	var into any
	switch head.APIVersion + "/" + head.Kind {
	case "apps/v1/Deployment":
		into = fresh(&m.deployment)
	case "v1/Service":
		into = fresh(&m.service)
	case "v1/ConfigMap":
		into = fresh(&m.configMap)
	case "v1/Secret":
		into = fresh(&m.secret)
	case "policy/v1/PodDisruptionBudget":
		into = fresh(&m.pdb)
	case "autoscaling/v2/HorizontalPodAutoscaler":
		into = fresh(&m.hpa)
	case "networking.k8s.io/v1/NetworkPolicy":
		into = fresh(&m.networkPolicy)
	case "networking.k8s.io/v1/Ingress":
		into = fresh(&m.ingress)
	case "monitoring.coreos.com/v1/ServiceMonitor", "monitoring.coreos.com/v1/PrometheusRule":
		obj := map[string]any{}
		m.monitoring[head.Kind] = obj
		into = &obj
	case "keda.sh/v1alpha1/ScaledObject":
		m.scaledObjects = append(m.scaledObjects, map[string]any{})
		into = &m.scaledObjects[len(m.scaledObjects)-1]
	default:
		t.Fatalf("%s: unexpected object %s %s", name, head.APIVersion, head.Kind)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(into); err != nil {
		t.Fatalf("%s: %s does not decode strictly: %v\n%s", name, head.Kind, err, doc)
	}
}

// fresh sets *field to a new zero T and returns it to decode into.
func fresh[T any](field **T) any {
	*field = new(T)
	return *field
}

// The value sets: the defaults, a highly available install with its own
// Secret and the Prometheus Operator resources, and a single coordinator
// with given credentials and a Redis password.
var valueSets = map[string]string{
	"default": "",
	"ha": `
replicaCount: 5
auth: {existingSecret: coordinator-credentials}
serviceMonitor: {enabled: true, labels: {release: prometheus}}
prometheusRule: {enabled: true}
resources: {requests: {cpu: 500m, memory: 256Mi}, limits: {memory: 1Gi}}
terminationGracePeriodSeconds: 90
config:
  coordination: {member-lease-ttl: 15s}
`,
	"single": `
replicaCount: 1
auth: {adminPassword: s3cret-admin, tokenSecret: s3cret-token, memberPassword: s3cret-member}
redis: {host: redis.cache, passwordSecret: {name: redis-auth, key: password}}
`,
}

func TestChartRendersValidManifests(t *testing.T) {
	for name, values := range valueSets {
		t.Run(name, func(t *testing.T) {
			m := render(t, values)
			checkDeployment(t, name, m)
			checkCredentials(t, name, m)
			if cfg := checkConfig(t, m); cfg.Store.Type != config.StoreRedis || cfg.Redis.Host == "" {
				t.Errorf("store %q, redis host %q: want the Redis store", cfg.Store.Type, cfg.Redis.Host)
			}
			checkService(t, m)
			checkDisruptionBudget(t, name, m)
			checkMonitoring(t, name, m)
		})
	}
}

func checkDeployment(t *testing.T, set string, m manifests) {
	d := m.deployment
	if d == nil {
		t.Fatal("no Deployment")
	}
	want := map[string]int32{"default": 3, "ha": 5, "single": 1}[set]
	if d.Spec.Replicas == nil || *d.Spec.Replicas != want {
		t.Errorf("replicas %v, want %d", d.Spec.Replicas, want)
	}
	pod := d.Spec.Template.Spec
	if len(pod.Containers) != 1 {
		t.Fatalf("containers: %d", len(pod.Containers))
	}
	c := pod.Containers[0]
	if p := c.LivenessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/healthz" {
		t.Errorf("liveness probe %+v: want GET /healthz", p)
	}
	if p := c.ReadinessProbe; p == nil || p.HTTPGet == nil || p.HTTPGet.Path != "/readyz" {
		t.Errorf("readiness probe %+v: want GET /readyz", p)
	}
	// The handover: traffic drains during preStop, then SIGTERM has the rest
	// of the grace period.
	if c.Lifecycle == nil || c.Lifecycle.PreStop == nil || c.Lifecycle.PreStop.Sleep == nil || c.Lifecycle.PreStop.Sleep.Seconds < 1 {
		t.Errorf("preStop %+v: want a sleep", c.Lifecycle)
	} else if g := pod.TerminationGracePeriodSeconds; g == nil || *g < c.Lifecycle.PreStop.Sleep.Seconds+30 {
		t.Errorf("terminationGracePeriodSeconds %v: want at least preStop + 30 s for the handover", g)
	}
	if c.Resources.Requests.Cpu().IsZero() || c.Resources.Requests.Memory().IsZero() {
		t.Errorf("resource requests %v: want cpu and memory", c.Resources.Requests)
	}
	sc, psc := c.SecurityContext, pod.SecurityContext
	if sc == nil || psc == nil || psc.RunAsNonRoot == nil || !*psc.RunAsNonRoot || psc.RunAsUser == nil || *psc.RunAsUser == 0 ||
		sc.ReadOnlyRootFilesystem == nil || !*sc.ReadOnlyRootFilesystem || sc.AllowPrivilegeEscalation == nil || *sc.AllowPrivilegeEscalation ||
		sc.Capabilities == nil || !slices.Contains(sc.Capabilities.Drop, "ALL") {
		t.Errorf("security context: pod %+v, container %+v: want non-root, read-only root, no escalation, no capabilities", psc, sc)
	}
	env := map[string]corev1.EnvVar{}
	for _, e := range c.Env {
		env[e.Name] = e
	}
	if e := env["POD_IP"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "status.podIP" {
		t.Errorf("POD_IP %+v: want the downward API's status.podIP", e)
	}
	if e := env["COORDINATOR_CLUSTER_ADVERTISE_URL"]; e.Value != "http://$(POD_IP):8080" {
		t.Errorf("COORDINATOR_CLUSTER_ADVERTISE_URL %+v: want http://$(POD_IP):8080", e)
	}
	if e := env["COORDINATOR_ID"]; e.ValueFrom == nil || e.ValueFrom.FieldRef == nil || e.ValueFrom.FieldRef.FieldPath != "metadata.name" {
		t.Errorf("COORDINATOR_ID %+v: want the pod name", e)
	}
	if env["COORDINATOR_SERVER_ADDRESS"].Value != ":8080" || c.Ports[0].ContainerPort != 8080 {
		t.Errorf("address %q, port %d", env["COORDINATOR_SERVER_ADDRESS"].Value, c.Ports[0].ContainerPort)
	}
	if !slices.Equal(c.Args, []string{"-config", "/etc/coordinator/coordinator.yaml"}) || len(pod.Volumes) != 1 || pod.Volumes[0].ConfigMap == nil ||
		m.configMap == nil || pod.Volumes[0].ConfigMap.Name != m.configMap.Name {
		t.Errorf("args %v, volumes %+v: want the ConfigMap's coordinator.yaml", c.Args, pod.Volumes)
	}
	if d.Spec.Selector == nil || !matches(d.Spec.Selector.MatchLabels, d.Spec.Template.Labels) {
		t.Errorf("selector %v does not select the pods %v", d.Spec.Selector, d.Spec.Template.Labels)
	}
}

// checkCredentials: the passwords come from a Secret, never as a literal
// value, and a Secret the chart creates holds no default password.
func checkCredentials(t *testing.T, set string, m manifests) {
	secretName := ""
	for _, e := range m.deployment.Spec.Template.Spec.Containers[0].Env {
		name := strings.ToLower(e.Name)
		if !strings.Contains(name, "password") && !strings.Contains(name, "secret") && !strings.Contains(name, "token") {
			continue
		}
		if e.Value != "" || e.ValueFrom == nil || e.ValueFrom.SecretKeyRef == nil {
			t.Errorf("%s: want a secretKeyRef, got %+v", e.Name, e)
			continue
		}
		if e.Name == "COORDINATOR_ADMIN_PASSWORD" || e.Name == "COORDINATOR_TOKEN_SECRET" {
			secretName = e.ValueFrom.SecretKeyRef.Name
		}
	}
	text := m.configMap.Data["coordinator.yaml"]
	if strings.Contains(text, "token:") {
		t.Errorf("the ConfigMap holds a credential:\n%s", text)
	}
	// The users' passwords are placeholders of variables from a Secret.
	for _, line := range strings.Split(text, "\n") {
		if _, v, ok := strings.Cut(line, "password:"); ok && !placeholder.MatchString(strings.TrimSpace(v)) {
			t.Errorf("the ConfigMap holds a credential: %s", strings.TrimSpace(line))
		}
	}
	switch set {
	case "ha":
		if m.secret != nil || secretName != "coordinator-credentials" {
			t.Errorf("existing secret: chart Secret %v, env from %q", m.secret != nil, secretName)
		}
		return
	case "single":
		if string(m.secret.Data["admin-password"]) != "s3cret-admin" || string(m.secret.Data["token-secret"]) != "s3cret-token" ||
			string(m.secret.Data["member-password"]) != "s3cret-member" {
			t.Errorf("given credentials: %v", m.secret.Data)
		}
	}
	if m.secret == nil || m.secret.Name != secretName {
		t.Fatalf("Secret %v, env from %q", m.secret, secretName)
	}
	for _, key := range []string{"admin-password", "token-secret", "member-password"} {
		v := string(m.secret.Data[key])
		if len(v) < 12 || v == "password" || v == key {
			t.Errorf("Secret %s: %q is no generated or given credential", key, v)
		}
	}
}

// placeholder is a ${VARIABLE} placeholder without a default.
var placeholder = regexp.MustCompile(`^\$\{[A-Za-z_][A-Za-z0-9_]*\}$`)

// checkConfig: the mounted tree, with the container's environment, is a
// valid coordinator configuration as the coordinator loads it, which also
// refuses a COORDINATOR_ variable that names no key. A variable from a
// Secret or the downward API reads as "<NAME>-value".
func checkConfig(t *testing.T, m manifests) *config.Config {
	t.Helper()
	var environ []string
	for _, e := range m.deployment.Spec.Template.Spec.Containers[0].Env {
		v := e.Value
		if e.ValueFrom != nil {
			v = e.Name + "-value"
		}
		environ = append(environ, e.Name+"="+v)
	}
	text := m.configMap.Data["coordinator.yaml"]
	cfg, err := config.Parse([]byte(text), config.WithEnviron(environ))
	if err == nil {
		err = cfg.Validate()
	}
	if err != nil {
		t.Fatalf("coordinator.yaml: %v\n%s\nenvironment %q", err, text, environ)
	}
	return cfg
}

func checkService(t *testing.T, m manifests) {
	s := m.service
	if s == nil || len(s.Spec.Ports) != 1 || s.Spec.Ports[0].TargetPort.StrVal != "http" || !matches(s.Spec.Selector, m.deployment.Spec.Template.Labels) {
		t.Errorf("Service %+v: want port http selecting the pods", s)
	}
}

func checkDisruptionBudget(t *testing.T, set string, m manifests) {
	if set == "single" {
		if m.pdb != nil {
			t.Error("a PodDisruptionBudget for one replica would block every node drain")
		}
		return
	}
	p := m.pdb
	if p == nil || p.Spec.MaxUnavailable == nil || p.Spec.MaxUnavailable.IntValue() != 1 || p.Spec.Selector == nil ||
		!matches(p.Spec.Selector.MatchLabels, m.deployment.Spec.Template.Labels) {
		t.Errorf("PodDisruptionBudget %+v: want maxUnavailable 1 over the pods", p)
	}
}

// checkMonitoring: the ServiceMonitor scrapes the Service's port, and the
// PrometheusRule carries deploy/prometheus/alerts.yml.
func checkMonitoring(t *testing.T, set string, m manifests) {
	if set != "ha" {
		if len(m.monitoring) != 0 {
			t.Errorf("monitoring objects %v rendered without being enabled", m.monitoring)
		}
		return
	}
	sm := m.monitoring["ServiceMonitor"]
	if got := fmt.Sprint(dig(sm, "spec", "endpoints")); !strings.Contains(got, "port:http") || !strings.Contains(got, "/actuator/prometheus") {
		t.Errorf("ServiceMonitor endpoints %s", got)
	}
	rule := m.monitoring["PrometheusRule"]
	var want map[string]any
	raw, err := os.ReadFile(filepath.Join("..", "..", "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if err := yaml.Unmarshal(raw, &want); err != nil {
		t.Fatal(err)
	}
	gotRules, _ := json.Marshal(dig(rule, "spec", "groups"))
	wantRules, _ := json.Marshal(want["groups"])
	if !bytes.Equal(gotRules, wantRules) {
		t.Errorf("PrometheusRule groups differ from deploy/prometheus/alerts.yml (copy it to the chart's files/alerts.yml)")
	}
}

// dig returns the value at path in nested maps.
func dig(v any, path ...string) any {
	for _, p := range path {
		m, _ := v.(map[string]any)
		v = m[p]
	}
	return v
}

// matches reports whether selector selects labels.
func matches(selector, labels map[string]string) bool {
	if len(selector) == 0 {
		return false
	}
	for k, v := range selector {
		if labels[k] != v {
			return false
		}
	}
	return true
}

// The chart's copy of the alert rules is the repository's.
func TestAlertsCopyIsCurrent(t *testing.T) {
	a, err := os.ReadFile(filepath.Join(chartDir, "files", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "..", "prometheus", "alerts.yml"))
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Error("deploy/helm/redis-stream-coordinator/files/alerts.yml differs from deploy/prometheus/alerts.yml: copy it")
	}
}
