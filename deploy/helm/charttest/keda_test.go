package charttest

import (
	"strings"
	"testing"
)

// Off by default, the chart renders no ScaledObject. On, each scaledObjects
// entry is a KEDA ScaledObject scaling its Deployment to its group's
// desiredMembers: the metrics-api scaler reads the coordinators' scaling
// endpoint through the release's Service (base path and scheme followed),
// AverageValue 1 so that the replicas are desiredMembers.
func TestKedaScaledObjects(t *testing.T) {
	if m := render(t, ""); len(m.scaledObjects) != 0 {
		t.Fatalf("%d ScaledObjects by default", len(m.scaledObjects))
	}
	m := render(t, `
keda:
  enabled: true
  scaledObjects:
    - {name: billing-consumer, deployment: billing, streamPrefix: orders, consumerGroup: billing, maxReplicaCount: 16,
       authMode: basic, authenticationRef: coordinator-reader}
    - {name: audit-consumer, deployment: audit, streamPrefix: "orders:eu", consumerGroup: audit, minReplicaCount: 0, maxReplicaCount: 4}
`)
	if len(m.scaledObjects) != 2 {
		t.Fatalf("%d ScaledObjects, want 2", len(m.scaledObjects))
	}
	billing, audit := m.scaledObjects[0], m.scaledObjects[1]
	if dig(billing, "metadata", "name") != "billing-consumer" {
		billing, audit = audit, billing
	}
	for path, want := range map[string]any{
		"spec.scaleTargetRef.name": "billing",
		"spec.minReplicaCount":     float64(1),
		"spec.maxReplicaCount":     float64(16),
		"spec.pollingInterval":     float64(15),
		"spec.cooldownPeriod":      float64(300),
	} {
		if got := dig(billing, strings.Split(path, ".")...); got != want {
			t.Errorf("billing %s = %v, want %v", path, got, want)
		}
	}
	trigger := dig(billing, "spec", "triggers").([]any)[0]
	for path, want := range map[string]any{
		"type":                   "metrics-api",
		"metricType":             "AverageValue",
		"metadata.url":           "http://coord-redis-stream-coordinator.streams.svc:8080/coord/v1/streams/orders/groups/billing/scaling",
		"metadata.valueLocation": "desiredMembers",
		"metadata.targetValue":   "1",
		"metadata.authMode":      "basic",
		"authenticationRef.name": "coordinator-reader",
	} {
		if got := dig(trigger, strings.Split(path, ".")...); got != want {
			t.Errorf("billing trigger %s = %v, want %v", path, got, want)
		}
	}
	if got := dig(audit, "spec", "minReplicaCount"); got != float64(0) {
		t.Errorf("audit minReplicaCount %v, want 0 (scale to zero)", got)
	}
	auditTrigger := dig(audit, "spec", "triggers").([]any)[0]
	if got := dig(auditTrigger, "metadata", "url"); got != "http://coord-redis-stream-coordinator.streams.svc:8080/coord/v1/streams/orders%3Aeu/groups/audit/scaling" {
		t.Errorf("audit url %v", got)
	}
	if dig(auditTrigger, "authenticationRef") != nil {
		t.Error("authenticationRef without one configured")
	}

	m = render(t, `
tls: {enabled: true, secretName: coordinator-tls}
config: {api: {base-path: /streams-api/}}
keda: {enabled: true, scaledObjects: [{name: b, deployment: b, streamPrefix: p, consumerGroup: g, maxReplicaCount: 2}]}
`)
	if got := dig(dig(m.scaledObjects[0], "spec", "triggers").([]any)[0], "metadata", "url"); got != "https://coord-redis-stream-coordinator.streams.svc:8080/streams-api/streams/p/groups/g/scaling" {
		t.Errorf("url with TLS and a base path: %v", got)
	}
	if _, err := helmTemplate("keda: {enabled: true, scaledObjects: [{name: b, deployment: b, streamPrefix: p, consumerGroup: g}]}"); err == nil {
		t.Error("a ScaledObject without maxReplicaCount rendered")
	}
}
