package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/redis-stream-coordinator/coordinator/client"
	"github.com/redis-stream-coordinator/coordinator/contract"
)

// settings are what login stores.
type settings struct {
	Server   string `json:"server"`
	Username string `json:"username"`
	Token    string `json:"token"`
}

// configPath is $XDG_CONFIG_HOME/coordctl/config.json (os.UserConfigDir);
// COORDCTL_CONFIG overrides it.
func configPath(env func(string) string) (string, error) {
	if p := env("COORDCTL_CONFIG"); p != "" {
		return p, nil
	}
	dir, err := os.UserConfigDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(dir, "coordctl", "config.json"), nil
}

func loadSettings(path string) (settings, error) {
	var s settings
	raw, err := os.ReadFile(path) // #nosec G304 G703 -- the user's own settings file (COORDCTL_CONFIG or the user config dir)
	if errors.Is(err, os.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(raw, &s); err != nil {
		return s, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

// saveSettings writes s to path readable by its owner only (the directory
// 0700, the file 0600, also when it existed with other modes).
func saveSettings(path string, s settings) error {
	// #nosec G703 -- path is the user's own settings file (COORDCTL_CONFIG or the user config dir), as in loadSettings
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return err
	}
	raw, err := json.MarshalIndent(s, "", "  ")
	if err != nil {
		return err
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil { // #nosec G703 -- see MkdirAll above
		return err
	}
	return os.Chmod(path, 0o600) // #nosec G703 -- see MkdirAll above
}

// serverRoot is the coordinator's URL as login stores it: without
// trailing slashes and without the API's default base path.
func serverRoot(server string) string {
	return strings.TrimRight(strings.TrimSuffix(strings.TrimRight(server, "/"), contract.BasePath), "/")
}

// apiBase is the API's base URL at server: server itself when it names a
// path (a coordinator with another api.base-path), else server with the
// default base path.
func apiBase(server string) (string, error) {
	root := serverRoot(server)
	u, err := url.Parse(root)
	if err != nil || u.Scheme == "" || u.Host == "" {
		return "", usageErrorf("server %q: want a URL such as http://127.0.0.1:8080", server)
	}
	if u.Path != "" {
		return root, nil
	}
	return root + contract.BasePath, nil
}

// stored returns the settings file's path, the settings it holds and the
// server to call: --server, else COORDCTL_SERVER, else the stored one.
func (c *call) stored() (path string, s settings, server string, err error) {
	if path, err = configPath(c.env); err != nil {
		return "", settings{}, "", err
	}
	if s, err = loadSettings(path); err != nil {
		return "", settings{}, "", err
	}
	return path, s, cmpOr(c.server, cmpOr(c.env("COORDCTL_SERVER"), s.Server)), nil
}

// httpTimeout bounds one API call.
const httpTimeout = 30 * time.Second

// connect returns a connection to server's API with the given options.
func connect(server string, opts ...client.CoordinatorOption) (*client.Coordinator, error) {
	base, err := apiBase(server)
	if err != nil {
		return nil, err
	}
	opts = append([]client.CoordinatorOption{client.WithHTTPClient(&http.Client{Timeout: httpTimeout})}, opts...)
	return client.NewCoordinator(base, opts...), nil
}

// client returns the API connection of the stored login, overridden by
// --server, COORDCTL_SERVER and COORDCTL_TOKEN.
func (c *call) client() (*client.Coordinator, error) {
	_, s, server, err := c.stored()
	if err != nil {
		return nil, err
	}
	token := cmpOr(c.env("COORDCTL_TOKEN"), s.Token)
	if server == "" || token == "" {
		return nil, &exitError{exitAuth, "not logged in: run coordctl login --server URL --username NAME"}
	}
	return connect(server, client.WithBearerToken(token))
}
