package main

import (
	"fmt"
	"log/slog"
	"strings"

	"github.com/redis-stream-coordinator/coordinator/config"
	"github.com/redis-stream-coordinator/coordinator/console"
)

// logConsole logs, at start, where the web console is (on the advertised
// URL root, whatever api.base-path is) and how to log in to it, without
// any password but the public default's.
func logConsole(logger *slog.Logger, cfg *config.Config, root string) {
	logger.Info("web console", "url", strings.TrimRight(root, "/")+console.Path, "login", loginHint(cfg))
}

// loginHint says who may log in to the console and where the password is
// set.
func loginHint(cfg *config.Config) string {
	if n := len(cfg.API.Users); n > 0 {
		return fmt.Sprintf("a user of api.users (%d configured), with its password", n)
	}
	hint := fmt.Sprintf("user %s (api.admin-username) with the password of api.admin-password (COORDINATOR_ADMIN_PASSWORD)", cfg.API.AdminUsername)
	if cfg.API.AdminPassword == config.DefaultAdminPassword {
		hint += fmt.Sprintf(": still the default %q, accepted on a loopback address only; set your own", config.DefaultAdminPassword)
	}
	return hint
}
