package httpapi

import (
	"encoding/json"
	"errors"
	"fmt"
	"go/ast"
	"go/parser"
	"go/token"
	"log/slog"
	"maps"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// declared lists the names of the package-level declarations in dir's
// non-test files (kind token.CONST or token.VAR) that keep returns true
// for, and the values of those that are string literals.
func declared(t *testing.T, dir string, kind token.Token, keep func(name string, spec *ast.ValueSpec) bool) ([]string, map[string]string) {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(dir, "*.go"))
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	values := map[string]string{}
	for _, file := range files {
		if strings.HasSuffix(file, "_test.go") {
			continue
		}
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, 0)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range f.Decls {
			gd, ok := d.(*ast.GenDecl)
			if !ok || gd.Tok != kind {
				continue
			}
			var typ ast.Expr // an iota block's type carries on
			for _, s := range gd.Specs {
				vs := s.(*ast.ValueSpec)
				if vs.Type != nil {
					typ = vs.Type
				} else if len(vs.Values) > 0 {
					typ = nil
				}
				if vs.Type == nil && typ != nil {
					vs = &ast.ValueSpec{Names: vs.Names, Type: typ, Values: vs.Values}
				}
				for i, n := range vs.Names {
					if !n.IsExported() || !keep(n.Name, vs) {
						continue
					}
					names = append(names, n.Name)
					if i < len(vs.Values) {
						if lit, ok := vs.Values[i].(*ast.BasicLit); ok && lit.Kind == token.STRING {
							values[n.Name] = strings.Trim(lit.Value, "`\"")
						}
					}
				}
			}
		}
	}
	slices.Sort(names)
	return names, values
}

// ofType keeps the declarations of type name.
func ofType(name string) func(string, *ast.ValueSpec) bool {
	return func(_ string, vs *ast.ValueSpec) bool {
		id, ok := vs.Type.(*ast.Ident)
		return ok && id.Name == name
	}
}

// errVar keeps the Err* variables.
func errVar(name string, _ *ast.ValueSpec) bool { return strings.HasPrefix(name, "Err") }

// sameNames fails unless the test's list of a package's declarations
// (have) names exactly those the package declares (want): a new one needs
// a row in outcomes and an entry here.
func sameNames[V any](t *testing.T, what string, want []string, have map[string]V) {
	t.Helper()
	if got := slices.Sorted(maps.Keys(have)); !slices.Equal(got, want) {
		t.Errorf("%s: the test knows %v, the code declares %v: give every new one its row in outcomes and its entry here", what, got, want)
	}
}

// The errors of the runtime's contract, the store and the cluster, by
// name, and what each is answered with (its code).
var (
	contractErrors = map[string]error{
		"ErrTerminating":    contract.ErrTerminating,
		"ErrStateConflict":  contract.ErrStateConflict,
		"ErrOutcomeUnknown": contract.ErrOutcomeUnknown,
		"ErrInternal":       contract.ErrInternal,
		"ErrProvisioning":   contract.ErrProvisioning,
		"ErrDataPlane":      contract.ErrDataPlane,
		"ErrShed":           contract.ErrShed,
		"ErrNotStored":      contract.ErrNotStored,
	}
	storeErrors = map[string]error{
		"ErrNotOwner":      persistence.ErrNotOwner,
		"ErrIdentityInUse": persistence.ErrIdentityInUse,
		"ErrNotRegistered": persistence.ErrNotRegistered,
		"ErrOutsideStore":  persistence.ErrOutsideStore,
		"ErrNotFound":      persistence.ErrNotFound,
		"ErrAlreadyExists": persistence.ErrAlreadyExists,
		"ErrConflict":      persistence.ErrConflict,
		"ErrUnavailable":   persistence.ErrUnavailable,
		"ErrCorrupt":       persistence.ErrCorrupt,
		"ErrLockTimeout":   persistence.ErrLockTimeout,
	}
	clusterErrors = map[string]error{
		"ErrNotServing": cluster.ErrNotServing,
	}
	storeOutcomes = map[string]persistence.Outcome{
		"Written": persistence.Written, "Refused": persistence.Refused, "Stale": persistence.Stale,
		"Busy": persistence.Busy, "Unavailable": persistence.Unavailable, "Corrupt": persistence.Corrupt,
		"Deposed": persistence.Deposed, "Canceled": persistence.Canceled, "Unknown": persistence.Unknown,
	}
)

// outcomesElsewhere are the store outcomes without a row of their own,
// and why.
var outcomesElsewhere = map[persistence.Outcome]string{
	persistence.Written:  "no failure",
	persistence.Refused:  "a domain error (its code's row) or a runtime failure outside the store (its error's row)",
	persistence.Canceled: "context.Canceled's row",
}

// codesElsewhere are the error codes the outcomes do not produce, and
// who answers them.
var codesElsewhere = map[contract.Code]string{
	contract.CodeNotFound:             "the router: no route",
	contract.CodeMethodNotAllowed:     "the router: no such method",
	contract.CodeUnauthorized:         "authentication (security.go)",
	contract.CodeForbidden:            "authorization (security.go)",
	contract.CodeRateLimitExceeded:    "the rate limits (ratelimit.go)",
	contract.CodeNotACoordinator:      "a batch whose mark does not hold (forward_batch.go)",
	contract.CodeUnsupportedMediaType: "a state-changing body not declared JSON (csrf.go)",
}

// heartbeatRetries are the rows whose outcome a heartbeat is answered
// RETRY for (the member keeps its lease and sends it again, never FENCED):
// the cluster refusals, an owner that did not answer, a heartbeat shed or
// not stored, and a deposed owner. Every other row's heartbeat gets the
// row's error answer.
var heartbeatRetries = map[any]bool{
	errLeaving: true, cluster.ErrNotServing: true, notOwnerKey: true, errOwnerUnreachable: true,
	contract.ErrShed: true, contract.ErrNotStored: true, persistence.Deposed: true,
}

// representative returns an error of a row's key class.
func representative(t *testing.T, key any) error {
	t.Helper()
	switch k := key.(type) {
	case contract.Code:
		return group.Errorf(k, "a domain refusal")
	case *cluster.NotOwnerError:
		return fmt.Errorf("acquire: %w", &cluster.NotOwnerError{Owner: persistence.Peer{ID: "c2", URL: "http://c2:8080"}})
	case persistence.Outcome:
		for _, e := range storeErrors {
			if persistence.Classify(e) == k {
				return fmt.Errorf("commit: %w", e)
			}
		}
		if k == persistence.Unknown {
			return errors.New("a failure of no known class")
		}
	case error:
		return fmt.Errorf("wrapped: %w", k)
	}
	t.Fatalf("no error of row key %v", key)
	return nil
}

// Every outcome a request can end with has its row in the one table
// (outcomes): every domain error code, cluster refusal, store outcome and
// error of the runtime's contract, the store and the cluster. A new one
// without a row (or, for codes and store outcomes answered elsewhere, an
// entry saying so) fails. Each row is reached by an error of its class (no
// row hides another), and fail answers it with the row's status, code,
// Retry-After and X-Coordinator-Owner. failHeartbeat answers a heartbeat
// ending so the same way, except that a row with Retry-After gets 200 with
// status RETRY (group.RetryResponse, without Retry-After) and the row's
// X-Coordinator-Owner: the one place an outcome becomes RETRY.
func TestEveryOutcomeHasARow(t *testing.T) {
	names := func(dir string, kind token.Token, keep func(string, *ast.ValueSpec) bool) []string {
		n, _ := declared(t, dir, kind, keep)
		return n
	}
	sameNames(t, "contract errors", names("../contract", token.VAR, errVar), contractErrors)
	sameNames(t, "store errors", names("../persistence", token.VAR, errVar), storeErrors)
	sameNames(t, "cluster errors", names("../cluster", token.VAR, errVar), clusterErrors)
	sameNames(t, "store outcomes", names("../persistence", token.CONST, ofType("Outcome")), storeOutcomes)

	rowCodes := map[contract.Code]bool{}
	rowKeys := map[any]bool{}
	for _, row := range outcomes {
		rowCodes[row.code] = true
		rowKeys[row.key] = true
	}
	codeNames, codeValues := declared(t, "../contract", token.CONST, ofType("Code"))
	if len(codeNames) == 0 || len(codeValues) != len(codeNames) {
		t.Fatalf("error codes declared in package contract: %v, with values %v", codeNames, codeValues)
	}
	for _, name := range codeNames {
		code := contract.Code(codeValues[name])
		if !rowCodes[code] && codesElsewhere[code] == "" {
			t.Errorf("error code %s (%s) has no row in outcomes and is answered nowhere else", name, code)
		}
	}
	for _, o := range storeOutcomes {
		if !rowKeys[o] && outcomesElsewhere[o] == "" {
			t.Errorf("store outcome %d has no row in outcomes", o)
		}
	}
	for name, err := range mapsConcat(contractErrors, storeErrors, clusterErrors) {
		if o := answerFor(fmt.Errorf("x: %w", err)); o.code == "" || o.status == 0 {
			t.Errorf("%s: no answer", name)
		}
	}

	api := &API{log: slog.New(slog.DiscardHandler), settings: group.DefaultSettings()}
	for i, row := range outcomes {
		err := representative(t, row.key)
		got := answerFor(err)
		want := row.answer
		if want.message == "" {
			want.message = "a domain refusal"
		}
		if got != want {
			t.Errorf("row %d (%v): an error of its class is answered %+v", i, row.key, got)
			continue
		}
		wantOwner := map[ownerHint]string{ownerAsRouted: "http://routed:8080", ownerNamed: "http://c2:8080", ownerNone: ""}[row.owner]
		w := routed()
		api.fail(w, httptest.NewRequest(http.MethodGet, "/coord/v1/streams/s/groups/g", nil), err)
		if w.Code != row.status || !strings.Contains(w.Body.String(), `"errorCode":"`+string(row.code)+`"`) ||
			(w.Header().Get("Retry-After") == "1") != row.retryAfter || w.Header().Get(contract.OwnerHeader) != wantOwner {
			t.Errorf("row %d (%v): answered %d %v %s", i, row.key, w.Code, w.Header(), w.Body)
		}

		if row.retryAfter != heartbeatRetries[row.key] {
			t.Errorf("row %d (%v): retryAfter %v, but heartbeats ending so are answered RETRY: %v", i, row.key, row.retryAfter, heartbeatRetries[row.key])
		}
		hb := &contract.HeartbeatRequest{RequestID: "r1", MemberID: "m1", MemberEpoch: 3}
		w = routed()
		api.failHeartbeat(w, httptest.NewRequest(http.MethodPost, "/coord/v1/streams/s/groups/g/members/m1/heartbeat", nil), hb, err)
		var resp contract.HeartbeatResponse
		switch {
		case w.Header().Get(contract.OwnerHeader) != wantOwner:
			t.Errorf("heartbeat, row %d (%v): X-Coordinator-Owner %q, want %q", i, row.key, w.Header().Get(contract.OwnerHeader), wantOwner)
		case !row.retryAfter && (w.Code != row.status || !strings.Contains(w.Body.String(), `"errorCode":"`+string(row.code)+`"`)):
			t.Errorf("heartbeat, row %d (%v): answered %d %s, want the error answer", i, row.key, w.Code, w.Body)
		case !row.retryAfter:
		case w.Code != http.StatusOK || w.Header().Get("Retry-After") != "" || json.Unmarshal(w.Body.Bytes(), &resp) != nil ||
			!reflect.DeepEqual(resp, group.RetryResponse(api.settings, hb)):
			t.Errorf("heartbeat, row %d (%v): answered %d %v %s, want 200 RETRY", i, row.key, w.Code, w.Header(), w.Body)
		}
	}
}

// routed returns a recorder whose answer names the owner the edge routed
// the request to.
func routed() *httptest.ResponseRecorder {
	w := httptest.NewRecorder()
	w.Header().Set(contract.OwnerHeader, "http://routed:8080")
	return w
}

// mapsConcat merges maps.
func mapsConcat(ms ...map[string]error) map[string]error {
	all := map[string]error{}
	for _, m := range ms {
		maps.Copy(all, m)
	}
	return all
}
