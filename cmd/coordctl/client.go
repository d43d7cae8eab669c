package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Exit codes (see the package documentation).
const (
	exitOK          = 0
	exitFailure     = 1
	exitUsage       = 2
	exitAuth        = 3
	exitNotFound    = 4
	exitConflict    = 5
	exitUnavailable = 6
)

// exitError is an error with the exit code it ends coordctl with.
type exitError struct {
	code int
	msg  string
}

func (e *exitError) Error() string { return e.msg }

func usageErrorf(format string, args ...any) error {
	return &exitError{exitUsage, fmt.Sprintf(format, args...)}
}

// apiError is a coordinator error answer.
type apiError struct {
	Status    int
	ErrorCode string `json:"errorCode"`
	Message   string `json:"message"`
}

func (e *apiError) Error() string {
	if e.ErrorCode == "" {
		return fmt.Sprintf("HTTP %d", e.Status)
	}
	return fmt.Sprintf("%s (HTTP %d): %s", e.ErrorCode, e.Status, e.Message)
}

// exitCode maps an error to coordctl's exit code.
func exitCode(err error) int {
	if xe, ok := errors.AsType[*exitError](err); ok {
		return xe.code
	}
	if ae, ok := errors.AsType[*apiError](err); ok {
		switch ae.Status {
		case http.StatusUnauthorized, http.StatusForbidden:
			return exitAuth
		case http.StatusNotFound:
			return exitNotFound
		case http.StatusConflict, http.StatusUnprocessableEntity:
			return exitConflict
		case http.StatusServiceUnavailable, http.StatusTooManyRequests:
			return exitUnavailable
		}
	}
	return exitFailure
}

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

// basePath is the base path of the coordinator's API.
const basePath = "/coord/v1"

// client calls one coordinator's API under basePath.
type client struct {
	server string // scheme://host:port
	token  string
	http   *http.Client
}

// newClient calls the coordinator at server: its URL with or without the
// API's base path (http://host:8080 or http://host:8080/coord/v1).
func newClient(server, token string) *client {
	root := strings.TrimRight(strings.TrimSuffix(strings.TrimRight(server, "/"), basePath), "/")
	return &client{server: root, token: token, http: &http.Client{Timeout: 30 * time.Second}}
}

// pathOf joins escaped path segments under the API's base path.
func pathOf(segments ...string) string {
	var b strings.Builder
	b.WriteString(basePath)
	for _, s := range segments {
		b.WriteString("/")
		b.WriteString(url.PathEscape(s))
	}
	return b.String()
}

// do sends one request (body nil: none) and decodes a 2xx JSON answer into
// out (when non-nil); other answers are *apiError.
func (c *client) do(ctx context.Context, method, path string, query url.Values, body, out any) error {
	var rd io.Reader
	if body != nil {
		raw, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(raw)
	}
	u := c.server + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	// #nosec G704 -- the server URL is the operator's own (--server, COORDCTL_SERVER or the settings file)
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return &exitError{exitUsage, fmt.Sprintf("server %q: %v", c.server, err)}
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	resp, err := c.http.Do(req) // #nosec G704 -- see NewRequestWithContext above
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &apiError{Status: resp.StatusCode}
		_ = json.Unmarshal(raw, e)
		return e
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(raw, out); err != nil {
		return fmt.Errorf("%s %s: decoding the answer: %w", method, path, err)
	}
	return nil
}
