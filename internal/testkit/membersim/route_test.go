package membersim

import (
	"net/http"
	"testing"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// TestRouteFollowsOwner walks one member through the answers that make it
// follow an owner, move with it, and fall back to any coordinator.
func TestRouteFollowsOwner(t *testing.T) {
	const a, b = "http://127.0.0.1:1001", "http://127.0.0.1:1002"
	named := func(owner string) http.Header { return http.Header{contract.OwnerHeader: {owner}} }
	var r Route
	steps := []struct {
		name string
		do   func()
		want string
	}{
		{"new member", func() {}, ""},
		{"OK from a naming b", func() { r.Answered(a, contract.StatusOK, named(b)) }, b},
		{"OK from b naming b", func() { r.Answered(b, contract.StatusOK, named(b)) }, b},
		{"no answer", r.Failed, ""},
		{"FENCED from a naming a", func() { r.Answered(a, contract.StatusFencedMemberEpoch, named(a)) }, a},
		{"RETRY from a naming b: the group moved", func() { r.Answered(a, contract.StatusRetry, named(b)) }, b},
		{"RETRY from b naming b", func() { r.Answered(b, contract.StatusRetry, named(b)) }, ""},
		{"OK from a naming a", func() { r.Answered(a, contract.StatusOK, named(a)) }, a},
		{"RETRY from a naming none", func() { r.Answered(a, contract.StatusRetry, nil) }, ""},
		{"OK from b naming a", func() { r.Answered(b, contract.StatusOK, named(a)) }, a},
		{"OK from a naming none", func() { r.Answered(a, contract.StatusOK, http.Header{}) }, ""},
	}
	for _, s := range steps {
		s.do()
		if got := r.Target(Follow); got != s.want {
			t.Fatalf("%s: follows %q, want %q", s.name, got, s.want)
		}
		if got := r.Target(Spread); got != "" {
			t.Fatalf("%s: spread targets %q, want any coordinator", s.name, got)
		}
	}
}

func TestParseRouting(t *testing.T) {
	for _, s := range []string{"spread", "follow"} {
		if r, err := ParseRouting(s); err != nil || string(r) != s {
			t.Errorf("ParseRouting(%q) = %q, %v", s, r, err)
		}
	}
	if _, err := ParseRouting("random"); err == nil {
		t.Error("ParseRouting(random) accepted")
	}
}
