package main

import (
	"bufio"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"github.com/redis-stream-coordinator/coordinator/client"
)

func init() {
	register(command{
		name:     "login",
		synopsis: "--server URL --username NAME [--password-stdin]",
		summary:  "log in and keep the server and token for the other commands",
		help: `Exchanges a user name and password for a Bearer token (POST /auth/login)
and keeps the server URL, the user name and the token in
$XDG_CONFIG_HOME/coordctl/config.json (mode 0600; COORDCTL_CONFIG names
another file). The password is read from --password, else
COORDCTL_PASSWORD, else one line of stdin. COORDCTL_SERVER and
COORDCTL_TOKEN override the stored server and token in every command.`,
		minArgs: 0, maxArgs: 0,
		setup: func(fs *flag.FlagSet) func(*call) error {
			username := fs.String("username", "", "user `NAME` (default: the stored one)")
			password := fs.String("password", "", "the `PASSWORD` (visible to other local users: prefer stdin)")
			fromStdin := fs.Bool("password-stdin", false, "read the password from stdin")
			return func(c *call) error { return login(c, *username, *password, *fromStdin) }
		},
	})
}

// login exchanges a user name and password for a token and stores both
// with the server.
func login(c *call, username, password string, fromStdin bool) error {
	path, stored, server, err := c.stored()
	if err != nil {
		return err
	}
	username = cmpOr(username, stored.Username)
	if server == "" || username == "" {
		return usageErrorf("login: --server and --username are required")
	}
	if password == "" && !fromStdin {
		password = c.env("COORDCTL_PASSWORD")
	}
	if password == "" {
		line, err := bufio.NewReader(c.stdin).ReadString('\n')
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		password = strings.TrimRight(line, "\r\n")
	}
	if password == "" {
		return usageErrorf("login: no password (--password-stdin, COORDCTL_PASSWORD or --password)")
	}
	coord, err := connect(server)
	if err != nil {
		return err
	}
	answer, err := coord.Login(c.ctx, username, password)
	if ae, ok := errors.AsType[*client.APIError](err); ok && ae.StatusCode == http.StatusUnauthorized {
		return fmt.Errorf("login refused at %s as user %q: check the user name and password: %w", coord.BaseURL()+"/auth/login", username, err)
	}
	if err != nil {
		return err
	}
	root := serverRoot(server)
	if err := saveSettings(path, settings{Server: root, Username: username, Token: answer.AccessToken}); err != nil {
		return err
	}
	fmt.Fprintf(c.out, "Logged in to %s as %s (%s) until %s; token kept in %s\n", root, username,
		strings.Join(answer.Roles, ", "), answer.ExpiresAt.Format(time.RFC3339), path)
	return nil
}
