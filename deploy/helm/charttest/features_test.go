package charttest

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"testing"

	corev1 "k8s.io/api/core/v1"

	"github.com/redis-stream-coordinator/coordinator/config"
)

// container is the coordinator container of m.
func container(m manifests) corev1.Container { return m.deployment.Spec.Template.Spec.Containers[0] }

// envOf maps the container's variables by name; a name set twice fails t.
func envOf(t *testing.T, m manifests) map[string]corev1.EnvVar {
	t.Helper()
	env := map[string]corev1.EnvVar{}
	for _, e := range container(m).Env {
		if _, dup := env[e.Name]; dup {
			t.Errorf("%s is set twice", e.Name)
		}
		env[e.Name] = e
	}
	return env
}

// fromSecret reports whether e reads key of Secret name.
func fromSecret(e corev1.EnvVar, name, key string) bool {
	return e.ValueFrom != nil && e.ValueFrom.SecretKeyRef != nil && e.ValueFrom.SecretKeyRef.Name == name && e.ValueFrom.SecretKeyRef.Key == key
}

// volume returns the pod volume and the container mount called name.
func volume(m manifests, name string) (*corev1.Volume, *corev1.VolumeMount) {
	var v *corev1.Volume
	for i, vol := range m.deployment.Spec.Template.Spec.Volumes {
		if vol.Name == name {
			v = &m.deployment.Spec.Template.Spec.Volumes[i]
		}
	}
	for _, mount := range container(m).VolumeMounts {
		if mount.Name == name {
			return v, &mount
		}
	}
	return v, nil
}

// The GitOps path: with auth.existingSecret the chart renders no Secret
// and needs no cluster, so two renders (two Argo CD syncs, two `helm
// template` runs) are byte for byte the same, credentials included.
func TestExistingSecretRendersAreIdentical(t *testing.T) {
	const values = "auth: {existingSecret: coordinator-credentials}"
	first, err := helmTemplate(values)
	if err != nil {
		t.Fatal(err)
	}
	second, err := helmTemplate(values)
	if err != nil {
		t.Fatal(err)
	}
	if !maps.Equal(first.files, second.files) || first.notes != second.notes {
		t.Error("two renders with auth.existingSecret differ")
	}
	m := render(t, values)
	if m.secret != nil {
		t.Errorf("a Secret %s is rendered beside auth.existingSecret", m.secret.Name)
	}
	env := envOf(t, m)
	if !fromSecret(env["COORDINATOR_ADMIN_PASSWORD"], "coordinator-credentials", "admin-password") ||
		!fromSecret(env["COORDINATOR_TOKEN_SECRET"], "coordinator-credentials", "token-secret") {
		t.Errorf("credentials %+v, %+v: want the existing Secret's keys", env["COORDINATOR_ADMIN_PASSWORD"], env["COORDINATOR_TOKEN_SECRET"])
	}
}

// Without it the chart's Secret is kept by helm (resource-policy keep), and
// a render without a cluster, as `helm template` and GitOps tools do,
// generates new credentials each time: why the README sends GitOps to
// auth.existingSecret.
func TestGeneratedSecretIsKeptAndNewPerTemplateRender(t *testing.T) {
	first, second := render(t, ""), render(t, "")
	if first.secret == nil || second.secret == nil {
		t.Fatal("no Secret rendered")
	}
	if p := first.secret.Annotations["helm.sh/resource-policy"]; p != "keep" {
		t.Errorf("helm.sh/resource-policy %q: want keep", p)
	}
	if string(first.secret.Data["admin-password"]) == string(second.secret.Data["admin-password"]) {
		t.Error("two renders without a cluster generated the same admin password")
	}
}

// The metrics credential reaches both ends from the same Secret keys: the
// coordinator's monitoring.metrics-auth variables and the ServiceMonitor's
// authorization or basicAuth.
func TestMetricsAuth(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		env          map[string][2]string // variable -> Secret, key
		endpoint     string               // in the ServiceMonitor endpoint
		absent       string
	}{
		{"bearer", "metricsAuth: {bearerToken: {secretName: metrics, key: token}}",
			map[string][2]string{"COORDINATOR_MONITORING_METRICS_AUTH_BEARER_TOKEN": {"metrics", "token"}},
			"authorization:map[credentials:map[key:token name:metrics] type:Bearer]", "basicAuth"},
		{"basic", "metricsAuth: {basicAuth: {secretName: scrape, usernameKey: user, passwordKey: pass}}",
			map[string][2]string{"COORDINATOR_MONITORING_METRICS_AUTH_USERNAME": {"scrape", "user"}, "COORDINATOR_MONITORING_METRICS_AUTH_PASSWORD": {"scrape", "pass"}},
			"basicAuth:map[password:map[key:pass name:scrape] username:map[key:user name:scrape]]", "authorization"},
		{"both: the ServiceMonitor sends the bearer token", "metricsAuth: {bearerToken: {secretName: metrics}, basicAuth: {secretName: scrape}}",
			map[string][2]string{
				"COORDINATOR_MONITORING_METRICS_AUTH_BEARER_TOKEN": {"metrics", "token"},
				"COORDINATOR_MONITORING_METRICS_AUTH_USERNAME":     {"scrape", "username"},
				"COORDINATOR_MONITORING_METRICS_AUTH_PASSWORD":     {"scrape", "password"},
			},
			"authorization:map[credentials:map[key:token name:metrics] type:Bearer]", "basicAuth"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := render(t, "serviceMonitor: {enabled: true}\n"+tc.values)
			env := envOf(t, m)
			for name, ref := range tc.env {
				if !fromSecret(env[name], ref[0], ref[1]) {
					t.Errorf("%s %+v: want Secret %s key %s", name, env[name], ref[0], ref[1])
				}
			}
			cfg := checkConfig(t, m)
			if ma := cfg.Monitoring.MetricsAuth; ma.BearerToken == "" && ma.Username == "" {
				t.Errorf("the coordinator's metrics-auth is empty: %+v", ma)
			}
			endpoints, _ := dig(m.monitoring["ServiceMonitor"], "spec", "endpoints").([]any)
			if len(endpoints) != 1 {
				t.Fatalf("ServiceMonitor endpoints %v", endpoints)
			}
			got := fmt.Sprint(endpoints[0])
			if !strings.Contains(got, tc.endpoint) || strings.Contains(got, tc.absent) {
				t.Errorf("ServiceMonitor endpoint %s\nwant %s and no %s", got, tc.endpoint, tc.absent)
			}
		})
	}
}

// service is the Service's DNS name in the test release.
const service = "coord-redis-stream-coordinator.streams.svc"

// TLS from a Secret: the pair (and CA) mounted, server.tls and cluster.tls
// pointing at them, the advertised URL, probes, ports and scrape in https.
func TestTLS(t *testing.T) {
	for _, tc := range []struct {
		name, values string
		// clientAuth is the coordinator's server.tls.client-auth; peerPair
		// whether cluster.tls carries the pair as a client certificate.
		// serverName is cluster.tls.server-name, the name peers are
		// verified for.
		clientAuth string
		peerPair   bool
		caKey      string
		serverName string
	}{
		{"one replica", "replicaCount: 1\ntls: {enabled: true, secretName: coord-tls}", config.ClientAuthNone, false, "ca.crt", service},
		{"replicas verifying each other by the Service's name", "tls: {enabled: true, secretName: coord-tls}", config.ClientAuthNone, false, "ca.crt", service},
		{"replicas verifying each other by a name of one's own", "tls: {enabled: true, secretName: coord-tls, peerServerName: coordinators.example}",
			config.ClientAuthNone, false, "ca.crt", "coordinators.example"},
		{"replicas with certificates naming the pod IPs, client certificates requested",
			`tls: {enabled: true, secretName: coord-tls, certificateNamesPodIPs: true, clientAuth: request, minVersion: "1.3", caKey: root.pem}`,
			config.ClientAuthRequest, true, "root.pem", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := render(t, tc.values+"\nserviceMonitor: {enabled: true}")
			c := container(m)
			vol, mount := volume(m, "tls")
			if vol == nil || vol.Secret == nil || vol.Secret.SecretName != "coord-tls" || mount == nil || !mount.ReadOnly {
				t.Fatalf("tls volume %+v mounted %+v: want Secret coord-tls, read-only", vol, mount)
			}
			items := map[string]string{}
			for _, it := range vol.Secret.Items {
				items[it.Key] = it.Path
			}
			if want := map[string]string{"tls.crt": "tls.crt", "tls.key": "tls.key", tc.caKey: "ca.crt"}; !maps.Equal(items, want) {
				t.Errorf("Secret items %v, want %v", items, want)
			}
			dir := mount.MountPath
			if dir == "/etc/coordinator" || strings.HasPrefix(dir, "/etc/coordinator/") {
				t.Errorf("TLS mounted at %s, inside the ConfigMap's mount", dir)
			}
			cfg := checkConfig(t, m)
			st := cfg.Server.TLS
			if !st.Enabled() || st.CertFile != dir+"/tls.crt" || st.KeyFile != dir+"/tls.key" || st.ClientAuth != tc.clientAuth {
				t.Errorf("server.tls %+v: want the pair under %s, client-auth %s", st, dir, tc.clientAuth)
			}
			if tc.clientAuth == config.ClientAuthRequest && st.ClientCAFile != dir+"/ca.crt" {
				t.Errorf("server.tls.client-ca-file %q: want the mounted CA", st.ClientCAFile)
			}
			ct := cfg.Cluster.TLS
			if ct.CAFile != dir+"/ca.crt" || (ct.CertFile != "") != tc.peerPair || (tc.peerPair && (ct.CertFile != st.CertFile || ct.KeyFile != st.KeyFile)) {
				t.Errorf("cluster.tls %+v: want ca-file %s/ca.crt, the pair as client certificate: %v", ct, dir, tc.peerPair)
			}
			if ct.ServerName != tc.serverName {
				t.Errorf("cluster.tls.server-name %q, want %q", ct.ServerName, tc.serverName)
			}
			if !strings.HasPrefix(cfg.Cluster.AdvertiseURL, "https://$(POD_IP):") {
				t.Errorf("advertise URL %q: want https://$(POD_IP):8080", cfg.Cluster.AdvertiseURL)
			}
			for name, p := range map[string]*corev1.Probe{"liveness": c.LivenessProbe, "readiness": c.ReadinessProbe} {
				if p == nil || p.HTTPGet == nil || p.HTTPGet.Scheme != corev1.URISchemeHTTPS || p.HTTPGet.Port.StrVal != "https" {
					t.Errorf("%s probe %+v: want HTTPS on port https", name, p)
				}
			}
			if c.Ports[0].Name != "https" || m.service.Spec.Ports[0].Name != "https" || m.service.Spec.Ports[0].TargetPort.StrVal != "https" {
				t.Errorf("container port %q, Service port %+v: want https", c.Ports[0].Name, m.service.Spec.Ports[0])
			}
			ep := fmt.Sprint(dig(m.monitoring["ServiceMonitor"], "spec", "endpoints"))
			for _, want := range []string{"scheme:https", "port:https", "serverName:" + service, "ca:map[secret:map[key:" + tc.caKey + " name:coord-tls]]"} {
				if !strings.Contains(ep, want) {
					t.Errorf("ServiceMonitor endpoints %s lack %s", ep, want)
				}
			}
		})
	}

	// Without a CA key peers verify against the system roots; a
	// ServiceMonitor tlsConfig of one's own replaces the derived one.
	m := render(t, "replicaCount: 1\ntls: {enabled: true, secretName: public-tls, caKey: \"\"}\nserviceMonitor: {enabled: true, tlsConfig: {serverName: coordinator.example.com}}")
	if cfg := checkConfig(t, m); cfg.Cluster.TLS.CAFile != "" {
		t.Errorf("cluster.tls.ca-file %q without caKey: want empty (system roots)", cfg.Cluster.TLS.CAFile)
	}
	vol, _ := volume(m, "tls")
	if len(vol.Secret.Items) != 2 {
		t.Errorf("Secret items %v: want tls.crt and tls.key only", vol.Secret.Items)
	}
	if got := fmt.Sprint(dig(m.monitoring["ServiceMonitor"], "spec", "endpoints")); !strings.Contains(got, "tlsConfig:map[serverName:coordinator.example.com]") {
		t.Errorf("ServiceMonitor endpoints %s: want the given tlsConfig", got)
	}

	// TLS off: plain HTTP everywhere, no TLS volume.
	m = render(t, "")
	if vol, _ := volume(m, "tls"); vol != nil || container(m).ReadinessProbe.HTTPGet.Scheme == corev1.URISchemeHTTPS {
		t.Error("TLS volume or HTTPS probe without tls.enabled")
	}
}

// A Redis CA from a Secret: mounted, and its directory added to the ones
// Go reads its roots from (the coordinator has no Redis CA key).
func TestRedisCA(t *testing.T) {
	m := render(t, "redis: {tls: true, tlsCA: {secretName: redis-ca, key: ca.pem}}")
	vol, mount := volume(m, "redis-ca")
	if vol == nil || vol.Secret == nil || vol.Secret.SecretName != "redis-ca" || len(vol.Secret.Items) != 1 ||
		vol.Secret.Items[0] != (corev1.KeyToPath{Key: "ca.pem", Path: "ca.crt"}) || mount == nil {
		t.Fatalf("redis-ca volume %+v, mount %+v", vol, mount)
	}
	dirs := strings.Split(envOf(t, m)["SSL_CERT_DIR"].Value, ":")
	if !slices.Contains(dirs, mount.MountPath) || !slices.Contains(dirs, "/etc/ssl/certs") {
		t.Errorf("SSL_CERT_DIR %v: want %s and the system's /etc/ssl/certs", dirs, mount.MountPath)
	}
	if cfg := checkConfig(t, m); !cfg.Redis.TLS {
		t.Error("redis.tls off")
	}
	if _, ok := envOf(t, render(t, ""))["SSL_CERT_DIR"]; ok {
		t.Error("SSL_CERT_DIR set without redis.tlsCA")
	}
}

// GOMEMLIMIT is goMemLimitPercent of the memory limit, in bytes.
func TestGoMemLimit(t *testing.T) {
	for values, want := range map[string]string{
		"":                                      "483183820", // 90 % of 512Mi
		"resources: {limits: {memory: 1Gi}}":    "966367641",
		"resources: {limits: {memory: 1.5G}}":   "1350000000",
		"resources: {limits: {memory: 1e9}}":    "900000000", // a plain number of bytes
		"resources: {limits: {memory: 2000Ki}}": "1843200",
		"resources: {limits: {memory: 1Gi}}\ngoMemLimitPercent: 80": "858993459",
		"goMemLimitPercent: 0": "",
		"resources: {requests: {cpu: 100m, memory: 128Mi}, limits: null}": "",
		"extraEnv: [{name: GOMEMLIMIT, value: 300MiB}]":                   "300MiB",
	} {
		env := envOf(t, render(t, values))
		if got := env["GOMEMLIMIT"].Value; got != want {
			t.Errorf("values %q: GOMEMLIMIT %q, want %q", values, got, want)
		}
	}
}

// NOTES.txt says how to reach the API and the console and how to read the
// admin password, and warns when the credentials are generated.
func TestNotes(t *testing.T) {
	notes := render(t, "").notes
	for _, want := range []string{
		"http://" + service + ":8080/coord/v1",
		"kubectl --namespace streams port-forward service/coord-redis-stream-coordinator 8080:8080",
		"http://127.0.0.1:8080/console/",
		`Sign in as "admin"`,
		"get secret coord-redis-stream-coordinator-auth -o jsonpath='{.data.admin-password}' | base64 -d",
		"`helm template` and GitOps tools generate new ones on every render",
	} {
		if !strings.Contains(notes, want) {
			t.Errorf("NOTES lack %q:\n%s", want, notes)
		}
	}
	notes = render(t, "auth: {existingSecret: creds}\nreplicaCount: 1\ntls: {enabled: true, secretName: coord-tls}\ningress: {enabled: true, hosts: [{host: coord.example.com, paths: [{path: /}]}], tls: [{secretName: x, hosts: [coord.example.com]}]}").notes
	for _, want := range []string{"get secret creds -o jsonpath", "https://127.0.0.1:8080/console/", "https://coord.example.com/"} {
		if !strings.Contains(notes, want) {
			t.Errorf("NOTES lack %q:\n%s", want, notes)
		}
	}
	if strings.Contains(notes, "generate new ones") {
		t.Errorf("NOTES warn about generated credentials with auth.existingSecret:\n%s", notes)
	}
}

// The NetworkPolicy admits the other coordinators and the given peers to
// the API port; with egress rules it also lets the coordinators reach each
// other and DNS. The Ingress routes to the Service's port.
func TestNetworkPolicyAndIngress(t *testing.T) {
	m := render(t, `
networkPolicy:
  enabled: true
  from: [{namespaceSelector: {matchLabels: {kubernetes.io/metadata.name: consumers}}}]
  egress: [{to: [{podSelector: {matchLabels: {app: redis}}}], ports: [{port: 6379}]}]
ingress: {enabled: true, className: nginx, hosts: [{host: coord.example.com, paths: [{path: /}]}]}`)
	np := m.networkPolicy
	if np == nil || !matches(np.Spec.PodSelector.MatchLabels, m.deployment.Spec.Template.Labels) {
		t.Fatalf("NetworkPolicy %+v: want one selecting the coordinators", np)
	}
	if len(np.Spec.Ingress) != 1 || len(np.Spec.Ingress[0].From) != 2 || np.Spec.Ingress[0].From[0].PodSelector == nil ||
		!matches(np.Spec.Ingress[0].From[0].PodSelector.MatchLabels, m.deployment.Spec.Template.Labels) ||
		np.Spec.Ingress[0].From[1].NamespaceSelector == nil || np.Spec.Ingress[0].Ports[0].Port.StrVal != container(m).Ports[0].Name {
		t.Errorf("ingress rules %+v: want the coordinators and the consumers' namespace on the API port", np.Spec.Ingress)
	}
	if !slices.Contains(np.Spec.PolicyTypes, "Egress") || len(np.Spec.Egress) != 3 {
		t.Errorf("egress %+v (%v): want the coordinators, DNS and the Redis rule", np.Spec.Egress, np.Spec.PolicyTypes)
	}
	ing := m.ingress
	if ing == nil || len(ing.Spec.Rules) != 1 || ing.Spec.Rules[0].Host != "coord.example.com" || *ing.Spec.IngressClassName != "nginx" {
		t.Fatalf("Ingress %+v", ing)
	}
	if b := ing.Spec.Rules[0].HTTP.Paths[0].Backend.Service; b == nil || b.Name != m.service.Name || b.Port.Name != m.service.Spec.Ports[0].Name {
		t.Errorf("Ingress backend %+v: want the Service's port", b)
	}

	// Without egress rules egress is not restricted.
	if np := render(t, "networkPolicy: {enabled: true}").networkPolicy; slices.Contains(np.Spec.PolicyTypes, "Egress") {
		t.Errorf("policy types %v without egress rules", np.Spec.PolicyTypes)
	}
}

// With autoscaling the HPA owns the replica count (the Deployment sets
// none) and the disruption budget follows minReplicas.
func TestAutoscaling(t *testing.T) {
	m := render(t, "autoscaling: {enabled: true, minReplicas: 2, maxReplicas: 5, targetMemoryUtilizationPercentage: 80}")
	if m.deployment.Spec.Replicas != nil {
		t.Errorf("Deployment replicas %d beside the HPA", *m.deployment.Spec.Replicas)
	}
	h := m.hpa
	if h == nil || *h.Spec.MinReplicas != 2 || h.Spec.MaxReplicas != 5 || h.Spec.ScaleTargetRef.Name != m.deployment.Name || len(h.Spec.Metrics) != 2 {
		t.Fatalf("HPA %+v", h)
	}
	if m.pdb == nil {
		t.Error("no PodDisruptionBudget with minReplicas 2")
	}
	if m := render(t, "replicaCount: 5\nautoscaling: {enabled: true, minReplicas: 1, maxReplicas: 3}"); m.pdb != nil {
		t.Error("a PodDisruptionBudget with minReplicas 1 would block drains when the HPA scales to 1")
	}
}
