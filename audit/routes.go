package audit

import (
	"strings"

	"github.com/redis-stream-coordinator/coordinator/contract"
)

// mutation is one audited route, relative to the base path. Wildcard
// segments name the Target field they bind.
type mutation struct {
	method   string
	template string
	action   Action
}

const (
	paramStreamPrefix  = "streamPrefix"
	paramConsumerGroup = "consumerGroup"
	paramReshardingID  = "reshardingId"
)

var mutations = []mutation{
	{"POST", contract.StreamTemplate, CreateStream},
	{"POST", contract.StreamScale, ScaleStream},
	{"POST", contract.GroupTemplate, CreateGroup},
	{"DELETE", contract.GroupTemplate, DeleteGroup},
	{"POST", contract.GroupScale, ScaleGroup},
	{"POST", contract.GroupRollback, RollbackMigration},
	{"POST", contract.GroupOffsetsReset, ResetOffsets},
	{"POST", contract.GroupRedrive, RedriveDeadLetters},
	{"POST", contract.GroupDeleteDead, DeleteDeadLetters},
	{"POST", contract.GroupPause, PauseShards},
	{"POST", contract.GroupResume, ResumeShards},
	{"POST", "/auth/login", Login},
}

// Routes maps the audited routes of docs/protocol.md §9.1 under a base path.
type Routes struct {
	// BasePath is coordinator.api.base-path; blank means contract.BasePath.
	BasePath string
}

// Target is an audited request's route and path parameters.
type Target struct {
	Action Action
	// Route is the template including the base path, parameters in braces
	// (contract.BasePath + contract.StreamScale), as Spring and OpenAPI
	// write it.
	Route        string
	StreamPrefix string
	// ConsumerGroup is "" for stream-level actions.
	ConsumerGroup string
	// ReshardingID is "" except for ROLLBACK_MIGRATION.
	ReshardingID string
}

// ActionFor returns the action of a route template (base path included).
// Wildcard segments may be written httprouter-style (:name, *name) or
// OpenAPI-style ({name}) with any name; only their positions matter.
func (rt Routes) ActionFor(method, route string) (Action, bool) {
	segs, ok := rt.relative(route)
	if !ok {
		return "", false
	}
	for _, m := range mutations {
		if m.method == method && sameShape(segments(m.template), segs) {
			return m.action, true
		}
	}
	return "", false
}

// Match resolves a request path (r.URL.Path) to an audited route, binding
// its parameters. Parameters must be non-empty single segments.
func (rt Routes) Match(method, path string) (Target, bool) {
	segs, ok := rt.relative(path)
	if !ok {
		return Target{}, false
	}
	for _, m := range mutations {
		if m.method != method {
			continue
		}
		if t, ok := bind(segments(m.template), segs); ok {
			t.Action = m.action
			t.Route = rt.basePath() + m.template
			return t, true
		}
	}
	return Target{}, false
}

func (rt Routes) basePath() string { return contract.CleanBasePath(rt.BasePath) }

// relative returns the segments of path below the base path.
func (rt Routes) relative(path string) ([]string, bool) {
	rest, ok := strings.CutPrefix(path, rt.basePath()+"/")
	if !ok {
		return nil, false
	}
	return strings.Split(rest, "/"), true
}

func segments(template string) []string {
	return strings.Split(strings.TrimPrefix(template, "/"), "/")
}

// wildcard returns the parameter name of a template segment.
func wildcard(seg string) (string, bool) {
	if name, ok := strings.CutPrefix(seg, ":"); ok {
		return name, true
	}
	if name, ok := strings.CutPrefix(seg, "*"); ok {
		return name, true
	}
	if inner, ok := strings.CutPrefix(seg, "{"); ok {
		return strings.CutSuffix(inner, "}")
	}
	return "", false
}

// sameShape reports whether two templates have the same literals and
// wildcard positions.
func sameShape(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		_, wa := wildcard(a[i])
		_, wb := wildcard(b[i])
		if wa != wb || (!wa && a[i] != b[i]) {
			return false
		}
	}
	return true
}

// bind matches concrete path segments against a template.
func bind(template, segs []string) (Target, bool) {
	var t Target
	if len(template) != len(segs) {
		return t, false
	}
	for i, seg := range template {
		name, isParam := wildcard(seg)
		switch {
		case !isParam:
			if seg != segs[i] {
				return t, false
			}
		case segs[i] == "":
			return t, false
		case name == paramStreamPrefix:
			t.StreamPrefix = segs[i]
		case name == paramConsumerGroup:
			t.ConsumerGroup = segs[i]
		case name == paramReshardingID:
			t.ReshardingID = segs[i]
		}
	}
	return t, true
}
