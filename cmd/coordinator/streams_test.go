package main

import (
	"log/slog"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordtest"
)

// TestDataPlaneFollowsConfig: provisioning only with
// streams.provisioning-enabled; the drain check and the data-plane reads
// whenever Redis is configured.
func TestDataPlaneFollowsConfig(t *testing.T) {
	for _, tc := range []struct {
		name, yaml          string
		provisioning, redis bool
	}{
		{"memory store", "coordinator: {}\n", false, false},
		{"redis store", "coordinator:\n  store: {type: redis}\n", false, true},
		{"provisioning", "coordinator:\n  streams: {provisioning-enabled: true}\n", true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := loadConfig(t, tc.yaml)
			back, _ := openRunBackend(t, cfg)
			o := actorOptions(cfg, back, slog.New(slog.DiscardHandler))
			if (o.Provisioner != nil) != tc.provisioning || (o.Drains != nil) != tc.redis || o.Settings.DrainCheck != tc.redis ||
				(dataPlane(cfg, back.redis) != nil) != tc.redis {
				t.Errorf("provisioner %v, drains %v, drain check %v, data plane %v", o.Provisioner, o.Drains, o.Settings.DrainCheck, dataPlane(cfg, back.redis))
			}
			// The actors accept the options (coordtest fails the test
			// otherwise) and stop.
			coordtest.Start(t, coordtest.Options{Backend: storeOf(t, back), Settings: o.Settings,
				Actors: func(ao *actors.Options) { *ao = o }}).Stop()
		})
	}
}
