package bench

import (
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/coordproc"

	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Scenario names (Options.Scenarios).
const (
	ScenarioCeiling  = "ceiling"
	ScenarioSteady   = "steady"
	ScenarioBaseline = "baseline"
	ScenarioChurn    = "churn"
	ScenarioStore    = "store"
	// ScenarioMulti: after steady, Coordinators coordinator processes on
	// the same store form a cluster, and every heartbeat goes to one of
	// them at random (goal P8a), then to the group's owner (goal P8e).
	ScenarioMulti = "multi"
	// ScenarioPeer is the hand-rolled Redis lease scheme (peerLeases).
	ScenarioPeer = "peer"
	// ScenarioAssignor runs the assignor's Go benchmarks (goal P5).
	ScenarioAssignor = "assignor"
	// ScenarioHeap runs BenchmarkHeapPerMember (goal P6a) and
	// BenchmarkHeapPerGroup (goal P11f).
	ScenarioHeap = "heap"
	// ScenarioCluster: Coordinators coordinators, ClusterSize groups on a
	// stream prefix each, the members following the owners; a rolling
	// restart and a SIGKILL under load (goals P8b–d).
	ScenarioCluster = "cluster"
	// ScenarioGroups is the many-group run, ManyGroups × ManyMembers
	// scraped every ScrapeInterval (goal P6b; not in the default suite).
	ScenarioGroups = "groups"
	// ScenarioScrape is the scrape amplification run: ScrapeGroups groups
	// of ScrapeShards shards on one coordinator, heartbeats with and
	// without rounds of ScrapeClients concurrent /metrics scrapes (goals
	// P9a–c; not in the default suite).
	ScenarioScrape = "scrape"
	// ScenarioDataPlane runs client.Consumer and a plain go-redis loop on
	// the same DataPlaneEntries entries, alternating, DataPlaneRounds
	// times each (goals P12a–b).
	ScenarioDataPlane = "dataplane"
	// ScenarioWork runs a count-assigned and a work-assigned group side by
	// side under skewed traffic with a backlog (goals P10a–d, bench/work.go).
	ScenarioWork = "work"
	// ScenarioFleet creates FleetGroups groups of FleetShards shards with
	// defaults.max-groups set, leaves them idle on three coordinators,
	// then runs FleetMembers owner-directed members in each and SIGTERMs
	// one coordinator (goals P11a–e, bench/fleetscale.go).
	ScenarioFleet = "fleet"
	// ScenarioScaling steps the load of a group read by client.Consumer
	// members of known capacity and follows the scaling signal, beside
	// idle groups (goals P13a–d, bench/scaling.go).
	ScenarioScaling = "scaling"
	// ScenarioSinks runs the fenced Redis and PostgreSQL sinks against a
	// plain client.Consumer on the same entries, and zombie cycles (goals
	// P14a–c, bench/sinks.go).
	ScenarioSinks = "sinks"
)

// Scenarios lists every scenario in the order a run executes them.
var Scenarios = []string{ScenarioCeiling, ScenarioSteady, ScenarioBaseline, ScenarioMulti, ScenarioStore, ScenarioPeer,
	ScenarioDataPlane, ScenarioSinks, ScenarioWork, ScenarioCluster, ScenarioFleet, ScenarioScaling, ScenarioChurn, ScenarioAssignor, ScenarioHeap, ScenarioGroups, ScenarioScrape}

// DefaultScenarios are those of make bench.
var DefaultScenarios = []string{ScenarioCeiling, ScenarioSteady, ScenarioBaseline, ScenarioMulti, ScenarioStore, ScenarioPeer,
	ScenarioDataPlane, ScenarioSinks, ScenarioWork, ScenarioCluster, ScenarioFleet, ScenarioScaling, ScenarioChurn, ScenarioAssignor, ScenarioHeap}

// Release policies of the churn members.
const (
	// ReleasePrompt: a member that stopped reading shards reports them in
	// a heartbeat sent at once (as KIP-848 consumers do).
	ReleasePrompt = "prompt"
	// ReleaseInterval: the report waits for the next scheduled heartbeat
	// (the shipped Python client and Spring starter, docs/protocol.md §4.9).
	ReleaseInterval = "interval"
)

// Options configure a run.
type Options struct {
	// Name names the output files: <OutDir>/<date>-<Name>.json.
	Name   string
	OutDir string
	// Scenarios to run, a subset of Scenarios.
	Scenarios []string
	// Store is the store of ceiling, steady, baseline and churn: memory,
	// redis or jdbc. The store scenario runs all three.
	Store string

	// FleetGroups, FleetShards and FleetMembers (per group) size the
	// fleet scenario.
	FleetGroups, FleetShards, FleetMembers int
	// Groups, Members (per group) and Shards (per group) of ceiling,
	// steady, baseline and store.
	Groups, Members, Shards int
	// Interval is coordination.heartbeat-interval and the churn members'
	// interval; LeaseTTL is coordination.member-lease-ttl.
	Interval, LeaseTTL time.Duration
	// SetupLeaseTTL is the lease TTL while the members of ceiling, steady,
	// baseline and store join (a join storm of thousands of members takes
	// longer than LeaseTTL: every join runs the assignor) and during the
	// baseline. On Redis and PostgreSQL the coordinator then restarts with
	// LeaseTTL and every member process restarts (a join replay, which
	// rewrites its lease) before steady is measured; the memory store
	// forgets everything on a restart, so there every phase runs with
	// SetupLeaseTTL.
	SetupLeaseTTL time.Duration
	// PassBudget is the expected time per member of a closed-loop pass
	// while members join (a pass over n members takes n × PassBudget at
	// the coordinator's join throughput, ~1.5 ms at 1,000–2,500 joins and
	// acknowledgements per second): the setup lease is at least two passes
	// and the settle timeout at least ten (Runner.setupTTL, settleTimeout).
	PassBudget time.Duration
	// WaveMembers is how many members join per wave during setup (whole
	// groups when a group is smaller): see session.settle.
	WaveMembers int
	// Duration of every measured load phase.
	Duration time.Duration
	// SettleTimeout bounds the wait for members to settle (join, churn steps).
	SettleTimeout time.Duration
	// Connections is the HTTP connection pool size and the number of
	// closed-loop workers.
	Connections int
	// OpenRate is the offered rate of the open-loop phases (requests/s);
	// 0 means OpenFraction × the ceiling's closed-loop throughput when the
	// ceiling ran, else members/Interval.
	OpenRate     float64
	OpenFraction float64

	// Coordinators is the number of coordinator processes of the multi and
	// cluster scenarios.
	Coordinators int
	// MultiDuration is the length of multi/closed (goal P8a asks for a
	// phase that crosses the end of the setup leases) and of
	// multi-owner/closed (goal P8e).
	MultiDuration time.Duration
	// ClusterSize is the cluster scenario's groups × members × shards.
	ClusterSize Size
	// StoreList are the stores of the store scenario; empty: PostgreSQL
	// only when steady runs on Redis in the same run (P7 then compares it
	// with steady/closed), else memory, Redis and PostgreSQL.
	StoreList []string
	// ManyGroups × ManyMembers members of ManyShards shards each are the
	// groups scenario; ScrapeInterval is how often it scrapes
	// /actuator/prometheus meanwhile.
	ManyGroups, ManyMembers, ManyShards int
	ScrapeInterval                      time.Duration
	// ManyReferences are the sizes the groups scenario measures first, each
	// in its own session and with the same setup lease as the many-group
	// run, so that goal P6c compares throughputs of one run.
	ManyReferences []Size

	// ScrapeGroups groups of ScrapeShards shards, one member each, are the
	// scrape scenario; ScrapeClients scrapes run at once in each round,
	// rounds starting every ScrapeInterval. Its open loops run at OpenRate,
	// or at the members' own rate (ScrapeGroups ÷ Interval) when 0.
	ScrapeGroups, ScrapeShards, ScrapeClients int

	// DataPlaneEntries are the entries the dataplane scenario writes and
	// each of its runs consumes; DataPlaneRounds how many runs of each loop
	// it makes.
	DataPlaneEntries, DataPlaneRounds int

	// ChurnMembers and ChurnShards size the churn group.
	ChurnMembers, ChurnShards int
	// Releases are the churn members' release policies (ReleasePrompt,
	// ReleaseInterval): the churn scenario runs once for each.
	Releases []string

	// RedisAddr is host:port of an external Redis and PostgresURL the URL
	// of an external PostgreSQL; empty (the default) starts a throwaway
	// server of the run's own, so that the store counters are the run's
	// alone, or falls back to the shared server with a warning when it
	// cannot start (see startStores).
	RedisAddr, PostgresURL string
	// CoordinatorBin is a prebuilt coordinator; empty builds ./cmd/coordinator.
	CoordinatorBin string
	// Profile is the length of the coordinator CPU profile taken during
	// every closed loop (0: none); when set, heap profiles are also saved
	// at the two steps of the coordinator heap figure (Runner.heapProfile).
	Profile time.Duration
	// AssignorBenchtime is go test's -benchtime for the assignor benchmarks.
	AssignorBenchtime string

	// Log receives progress lines and the final tables.
	Log io.Writer
}

// Size is groups × members per group × shards per group.
type Size struct{ Groups, Members, Shards int }

// String is the form ParseSizes reads: GxMxS.
func (z Size) String() string { return fmt.Sprintf("%dx%dx%d", z.Groups, z.Members, z.Shards) }

// ParseSizes reads a comma-separated list of GxMxS sizes ("" is none).
func ParseSizes(s string) ([]Size, error) {
	var out []Size
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f == "" {
			continue
		}
		var z Size
		if n, err := fmt.Sscanf(f, "%dx%dx%d", &z.Groups, &z.Members, &z.Shards); err != nil || n != 3 {
			return nil, fmt.Errorf("size %q: want groups x members x shards, e.g. 10x1000x1000", f)
		}
		if z.String() != f {
			return nil, fmt.Errorf("size %q: want groups x members x shards, e.g. 10x1000x1000", f)
		}
		out = append(out, z)
	}
	return out, nil
}

// runs reports whether scenario s is selected.
func (o *Options) runs(s string) bool { return slices.Contains(o.Scenarios, s) }

// validate reports every invalid option.
func (o *Options) validate() error {
	var errs []error
	check := func(ok bool, format string, args ...any) {
		if !ok {
			errs = append(errs, fmt.Errorf(format, args...))
		}
	}
	for _, s := range o.Scenarios {
		check(slices.Contains(Scenarios, s), "unknown scenario %q: want one of %v", s, Scenarios)
	}
	check(len(o.Scenarios) > 0, "no scenario selected")
	check(slices.Contains([]string{coordproc.StoreMemory, coordproc.StoreRedis, coordproc.StoreJDBC}, o.Store), "unknown store %q: want memory, redis or jdbc", o.Store)
	check(o.Groups >= 1 && o.Members >= 1 && o.Shards >= 1, "groups, members and shards must be positive")
	check(o.ChurnMembers >= 20 && o.ChurnShards >= 1, "churn needs at least 20 members and one shard")
	check(o.Interval > 0 && o.LeaseTTL > o.Interval && o.SetupLeaseTTL >= o.LeaseTTL,
		"interval must be positive and below the lease TTL, the setup lease TTL at least the lease TTL")
	check(o.Duration > 0 && o.SettleTimeout > 0, "duration and settle timeout must be positive")
	check(o.PassBudget >= 0 && o.WaveMembers >= 1, "pass budget must not be negative, wave must be positive")
	check(o.Connections >= 1, "connections must be positive")
	check(!o.runs(ScenarioMulti) || o.Coordinators >= 2, "multi needs at least 2 coordinators")
	check(!o.runs(ScenarioMulti) || o.Store != coordproc.StoreMemory, "multi needs a shared store (redis or jdbc)")
	check(!o.runs(ScenarioMulti) || o.MultiDuration > 0, "multi needs a positive duration")
	check(!o.runs(ScenarioCluster) || (o.Coordinators >= 2 && o.Store != coordproc.StoreMemory), "cluster needs at least 2 coordinators on a shared store (redis or jdbc)")
	check(!o.runs(ScenarioScrape) || (o.ScrapeGroups >= 1 && o.ScrapeShards >= 1 && o.ScrapeClients >= 1 && o.ScrapeInterval > 0),
		"scrape needs positive scrape groups, shards, clients and interval")
	check(!o.runs(ScenarioCluster) || (o.ClusterSize.Groups >= 1 && o.ClusterSize.Members >= 1 && o.ClusterSize.Shards >= 1), "cluster size %s must be positive", o.ClusterSize)
	for _, st := range o.StoreList {
		check(slices.Contains([]string{coordproc.StoreMemory, coordproc.StoreRedis, coordproc.StoreJDBC}, st), "unknown store %q in the store list", st)
	}
	check(!o.runs(ScenarioGroups) || (o.ManyGroups >= 1 && o.ManyMembers >= 1 && o.ManyShards >= 1 && o.ScrapeInterval > 0),
		"groups needs positive groups, members, shards and scrape interval")
	for _, z := range o.ManyReferences {
		check(z.Groups >= 1 && z.Members >= 1 && z.Shards >= 1, "reference size %s must be positive", z)
	}
	check(!o.runs(ScenarioFleet) || (o.FleetGroups >= 1 && o.FleetShards >= 1 && o.FleetMembers >= 1), "fleet needs positive groups, shards and members")
	check(!o.runs(ScenarioDataPlane) || (o.DataPlaneEntries >= 1 && o.DataPlaneRounds >= 1), "dataplane needs positive entries and rounds")
	check(o.OpenRate >= 0 && o.OpenFraction > 0, "open rate must not be negative, open fraction must be positive")
	for _, rel := range o.Releases {
		check(rel == ReleasePrompt || rel == ReleaseInterval, "unknown release %q: want prompt or interval", rel)
	}
	check(!o.runs(ScenarioChurn) || len(o.Releases) > 0, "churn needs a release policy")
	check(o.Name != "" && o.OutDir != "", "name and output directory are required")
	return errors.Join(errs...)
}
