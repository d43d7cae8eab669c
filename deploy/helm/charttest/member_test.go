package charttest

import (
	"slices"
	"strings"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/config"
)

// login is what a configured user logs in with: its password and roles.
type login struct {
	password string
	roles    []string
}

// principals returns the users of cfg that the coordinator keeps, by
// name, and fails t when one would be left out: a user repeating the
// admin-username/admin-password pair, or with a blank password (the
// coordinator logs "configured API user ignored"). With no users the admin
// pair is the one principal, with every role.
func principals(t *testing.T, cfg *config.Config) map[string]login {
	t.Helper()
	if len(cfg.API.Users) == 0 {
		return map[string]login{cfg.API.AdminUsername: {cfg.API.AdminPassword, []string{"ADMIN", "MEMBER", "MONITOR", "READ", "WRITE"}}}
	}
	out := map[string]login{}
	for _, u := range cfg.API.Users {
		if u.Password == "" || u.Username == cfg.API.AdminUsername && u.Password == cfg.API.AdminPassword {
			t.Errorf("the coordinator would leave user %q out (blank password, or the admin pair %q)", u.Username, cfg.API.AdminUsername)
			continue
		}
		out[u.Username] = login{u.Password, u.Roles}
	}
	return out
}

// logsIn reports whether username logs in with password, and its roles.
func logsIn(users map[string]login, username, password string) ([]string, bool) {
	l, ok := users[username]
	return l.roles, ok && l.password == password
}

// By default the chart turns member authentication on and makes the
// members' credential: the Secret's member-password (generated, or
// auth.memberPassword), the user auth.memberUsername with the role MEMBER
// whose password is that key, and the admin as a user with the role ADMIN
// (a users list replaces the admin pair), both kept by the coordinator;
// the notes say how to read the members' password.
func TestMemberAuthIsOnByDefault(t *testing.T) {
	for name, values := range map[string]string{
		"generated":       "",
		"given password":  "auth: {memberPassword: given-member-pw, memberUsername: consumers}",
		"existing secret": "auth: {existingSecret: coordinator-credentials}",
	} {
		t.Run(name, func(t *testing.T) {
			m := render(t, values)
			cfg := checkConfig(t, m)
			if !cfg.API.AuthenticateMemberAPI {
				t.Error("api.authenticate-member-api is off")
			}
			memberName := "member"
			if name == "given password" {
				memberName = "consumers"
			}
			secretName := "coord-redis-stream-coordinator-auth"
			if name == "existing secret" {
				secretName = "coordinator-credentials"
			} else {
				pw := string(m.secret.Data["member-password"])
				if name == "given password" && pw != "given-member-pw" || len(pw) < 12 {
					t.Errorf("Secret member-password %q: want the given or a generated password", pw)
				}
			}
			env := envOf(t, m)
			if !fromSecret(env["COORDINATOR_MEMBER_PASSWORD"], secretName, "member-password") {
				t.Errorf("COORDINATOR_MEMBER_PASSWORD %+v: want the key member-password of %s", env["COORDINATOR_MEMBER_PASSWORD"], secretName)
			}
			// checkConfig reads a variable from a Secret as "<NAME>-value".
			accounts := principals(t, cfg)
			if roles, ok := logsIn(accounts, memberName, "COORDINATOR_MEMBER_PASSWORD-value"); !ok || !slices.Equal(roles, []string{"MEMBER"}) {
				t.Errorf("%s logs in %v with roles %v: want the role MEMBER", memberName, ok, roles)
			}
			if roles, ok := logsIn(accounts, "admin", "COORDINATOR_ADMIN_PASSWORD-value"); !ok || !slices.Contains(roles, "ADMIN") {
				t.Errorf("admin logs in %v with roles %v: want the role ADMIN with the Secret's admin-password", ok, roles)
			}
			if len(cfg.API.Users) != 2 {
				t.Errorf("users %+v: want the admin and the members' user", cfg.API.Users)
			}
			if !strings.Contains(m.notes, "member-password") || !strings.Contains(m.notes, `"`+memberName+`"`) {
				t.Errorf("the notes do not say how members log in:\n%s", m.notes)
			}
		})
	}
}

// Users of config.api.users are kept: the chart adds the members' user
// (not the admin, which was no principal beside them before either),
// unless a user of that name is configured, and then sets no
// COORDINATOR_MEMBER_PASSWORD (a variable no placeholder reads stops the
// coordinator).
func TestMemberAuthWithConfiguredUsers(t *testing.T) {
	const ops = `
config: {api: {users: [{username: ops, password: '${OPS_PASSWORD}', roles: [WRITE]}]}}
extraEnv: [{name: OPS_PASSWORD, valueFrom: {secretKeyRef: {name: users, key: ops}}}]`
	m := render(t, ops)
	accounts := principals(t, checkConfig(t, m))
	if _, ok := logsIn(accounts, "ops", "OPS_PASSWORD-value"); !ok {
		t.Error("the configured user ops does not log in")
	}
	if roles, ok := logsIn(accounts, "member", "COORDINATOR_MEMBER_PASSWORD-value"); !ok || !slices.Equal(roles, []string{"MEMBER"}) {
		t.Errorf("member logs in %v with roles %v: want MEMBER", ok, roles)
	}
	if _, ok := logsIn(accounts, "admin", "COORDINATOR_ADMIN_PASSWORD-value"); ok {
		t.Error("the chart added its admin to configured users")
	}

	const own = `
config: {api: {users: [{username: member, password: '${MY_MEMBER_PASSWORD}', grants: [{stream: orders, group: billing, operations: [heartbeat], member-id-prefix: billing-}]}]}}
extraEnv: [{name: MY_MEMBER_PASSWORD, valueFrom: {secretKeyRef: {name: users, key: member}}}]`
	m = render(t, own)
	cfg := checkConfig(t, m)
	if len(cfg.API.Users) != 1 || cfg.API.Users[0].Password != "MY_MEMBER_PASSWORD-value" {
		t.Errorf("users %+v: want only the configured member", cfg.API.Users)
	}
	if _, ok := envOf(t, m)["COORDINATOR_MEMBER_PASSWORD"]; ok {
		t.Error("COORDINATOR_MEMBER_PASSWORD is set while no user reads it")
	}
	if strings.Contains(m.notes, "member-password") {
		t.Errorf("the notes send members to the Secret's member-password, which no user has:\n%s", m.notes)
	}
}

// Member authentication can be turned off, with the coordinator's own
// allowance for a non-loopback address: the chart then adds no user (the
// admin pair is the principal, as before) and sets no member password.
func TestMemberAuthOff(t *testing.T) {
	m := render(t, "config: {api: {authenticate-member-api: false, allow-anonymous-members: true}}")
	cfg := checkConfig(t, m)
	if cfg.API.AuthenticateMemberAPI || len(cfg.API.Users) != 0 || cfg.API.AdminUsername != "admin" {
		t.Errorf("member auth %v, users %+v, admin %q: want off, none, admin", cfg.API.AuthenticateMemberAPI, cfg.API.Users, cfg.API.AdminUsername)
	}
	if _, ok := envOf(t, m)["COORDINATOR_MEMBER_PASSWORD"]; ok {
		t.Error("COORDINATOR_MEMBER_PASSWORD is set with member authentication off")
	}
	if roles, ok := logsIn(principals(t, cfg), "admin", "COORDINATOR_ADMIN_PASSWORD-value"); !ok || !slices.Contains(roles, "MEMBER") {
		t.Errorf("admin logs in %v with roles %v: want the admin pair with every role", ok, roles)
	}
	if !strings.Contains(m.notes, "Members do not authenticate") {
		t.Errorf("the notes do not warn that members are anonymous:\n%s", m.notes)
	}
}

// The members' user is not the admin.
func TestMemberUsernameIsNotTheAdmin(t *testing.T) {
	_, err := helmTemplate("auth: {memberUsername: admin}")
	if err == nil || !strings.Contains(err.Error(), "refused: auth.memberUsername \"admin\" is auth.adminUsername") {
		t.Errorf("render: %v, want the refusal", err)
	}
}
