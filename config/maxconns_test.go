package config

import (
	"strings"
	"testing"
)

// coordinator.server.max-connections-per-address (issue 42 item 10): 1024
// by default, set from the file or COORDINATOR_SERVER_MAX_CONNECTIONS_PER_ADDRESS,
// 0 is no cap and a negative value is refused naming the key.
func TestMaxConnectionsPerAddress(t *testing.T) {
	if n := mustParse(t, "").Server.MaxConnectionsPerAddress; n != 1024 {
		t.Errorf("default %d, want 1024", n)
	}
	if n := mustParse(t, "coordinator:\n  server:\n    max-connections-per-address: 0\n").Server.MaxConnectionsPerAddress; n != 0 {
		t.Errorf("file 0: %d", n)
	}
	c := mustParse(t, "", env(map[string]string{"COORDINATOR_SERVER_MAX_CONNECTIONS_PER_ADDRESS": "16"}))
	if n := c.Server.MaxConnectionsPerAddress; n != 16 {
		t.Errorf("environment 16: %d", n)
	}
	if err := c.Validate(); err != nil {
		t.Errorf("16: %v", err)
	}
	c.Server.MaxConnectionsPerAddress = 0
	if err := c.Validate(); err != nil {
		t.Errorf("0 (no cap): %v", err)
	}
	c.Server.MaxConnectionsPerAddress = -1
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "coordinator.server.max-connections-per-address: must not be negative") {
		t.Errorf("-1: %v", err)
	}
}
