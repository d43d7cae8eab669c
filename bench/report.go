package bench

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"os/exec"
	"runtime"
	"slices"
	"strings"
	"text/tabwriter"
	"time"
)

// Report is the JSON output of a run.
type Report struct {
	Name        string      `json:"name"`
	Date        time.Time   `json:"date"`
	Command     string      `json:"command"`
	Environment Environment `json:"environment"`
	Options     Options     `json:"options"`
	Phases      []Phase     `json:"phases"`
	Churn       []*Churn    `json:"churn,omitempty"`
	// Assignor maps a Go benchmark name (without the -GOMAXPROCS suffix)
	// to its ns/op.
	Assignor   map[string]float64 `json:"assignorNsPerOp,omitempty"`
	Violations int                `json:"doubleOwnershipViolations"`
	// ViolationSamples are the first violations the oracle found.
	ViolationSamples []string `json:"violationSamples,omitempty"`
	// HeapPerMember is BenchmarkHeapPerMember's B/member (domain state).
	HeapPerMember float64 `json:"heapBytesPerMemberDomain,omitempty"`
	// CoordinatorHeap is the coordinator's heap after GC, empty and with
	// the heartbeat scenario's members settled.
	CoordinatorHeap HeapFigure `json:"coordinatorHeap"`
	// Scrapes are the groups scenario's Prometheus scrapes.
	Scrapes Scrapes `json:"scrapes"`
	// SetupLeasesEnd is when (seconds from the start) the last member
	// lease granted with the setup TTL of the heartbeat scenario ends.
	SetupLeasesEnd float64 `json:"setupLeasesEndSeconds,omitempty"`
	// Scrape is the scrape scenario's figures (goals P9a–c).
	Scrape *ScrapeFigures `json:"scrape,omitempty"`
	// DataPlane is the dataplane scenario's figures (goals P12a–b).
	DataPlane *DataPlaneFigures `json:"dataPlane,omitempty"`
	// Sinks is the sinks scenario's figures (goals P14a–c).
	Sinks *SinkFigures `json:"sinks,omitempty"`
	// Work is the work scenario's figures (goals P10a–d).
	Work *WorkFigures `json:"work,omitempty"`
	// Fleet is the fleet scenario's figures (goals P11c–e).
	Fleet *FleetFigures `json:"fleet,omitempty"`
	// GroupHeap is BenchmarkHeapPerGroup's figures (goal P11f).
	GroupHeap *GroupHeapFigures `json:"groupHeap,omitempty"`
	// Scaling is the scaling scenario's figures (goals P13a–d).
	Scaling *ScalingFigures `json:"scaling,omitempty"`
	// Cluster is the cluster scenario's figures (goals P8b–d).
	Cluster *ClusterFigures `json:"cluster,omitempty"`
	// Failures maps a scenario (for churn, churn/<release>) to the error
	// that ended it; its goals are MISS with it.
	Failures       map[string]string `json:"scenarioFailures,omitempty"`
	Goals          []Goal            `json:"goals"`
	ElapsedSeconds float64           `json:"elapsedSeconds"`
}

// HeapFigure is the coordinator's heap after a forced GC
// (runtime.MemStats.HeapAlloc from /debug/pprof/heap?gc=1): empty, with
// Members settled members, and with ProbeMembers more (see
// Runner.coordinatorHeap). PerMember is the slope between the last two.
type HeapFigure struct {
	EmptyBytes   int64   `json:"emptyBytes"`
	Bytes        int64   `json:"bytes"`
	Members      int     `json:"members"`
	ProbeBytes   int64   `json:"probeBytes"`
	ProbeMembers int     `json:"probeMembers"`
	PerMember    float64 `json:"bytesPerMember"`
}

// Environment describes where the run happened.
type Environment struct {
	GoVersion  string `json:"goVersion"`
	OS         string `json:"os"`
	Kernel     string `json:"kernel"`
	CPUModel   string `json:"cpuModel"`
	CPUs       int    `json:"cpus"`
	MemTotalMB int64  `json:"memTotalMb"`
	LoadAvg    string `json:"loadAvgAtStart"`
	GitCommit  string `json:"gitCommit"`
	Redis      string `json:"redisVersion,omitempty"`
	Postgres   string `json:"postgresVersion,omitempty"`
	// RedisServer and PostgresServer say whose the servers were: StoreOwn,
	// StoreExternal or StoreShared ("" when not used).
	RedisServer    string  `json:"redisServer,omitempty"`
	PostgresServer string  `json:"postgresServer,omitempty"`
	Note           string  `json:"note"`
	ClockTickHz    float64 `json:"procClockTickHz"`
}

// Phase is the result of one load phase.
type Phase struct {
	// Name is "<scenario>/<phase>", e.g. "steady/closed".
	Name        string `json:"name"`
	Store       string `json:"store"`
	GroupCommit bool   `json:"groupCommit"`
	Groups      int    `json:"groups"`
	Members     int    `json:"members"`
	Shards      int    `json:"shards"`
	Mode        string `json:"mode"` // closed or open
	Connections int    `json:"connections"`
	// Coordinators is the number of coordinator processes serving the
	// phase (the multi scenario spreads the members over several).
	Coordinators int     `json:"coordinators"`
	OfferedRate  float64 `json:"offeredRate,omitempty"`
	Seconds      float64 `json:"seconds"`
	Requests     int64   `json:"requests"`
	// Throughput is answered requests per second.
	Throughput float64 `json:"throughput"`
	// Passes is requests ÷ members: how many times each member
	// heartbeated during the phase on average (closed-loop passes over
	// every member; an open loop at the members' own rate makes one per
	// interval).
	Passes       float64          `json:"passes"`
	Latency      Latency          `json:"latency"`
	Statuses     map[string]int64 `json:"statuses"`
	Errors       int64            `json:"errors"`
	ErrorSamples []string         `json:"errorSamples,omitempty"`
	// CPUSeconds is the coordinator's CPU time during the phase; CPUCores
	// the same per second of phase.
	CPUSeconds float64 `json:"coordinatorCpuSeconds"`
	CPUCores   float64 `json:"coordinatorCpuCores"`
	PeakRSSMB  float64 `json:"coordinatorPeakRssMb"`
	// LoadGenCores, StoreCores (Redis only) and MachineCores are the CPU
	// cores the load generator, the store server and the whole machine
	// (every process) used during the phase.
	LoadGenCores float64 `json:"loadGeneratorCpuCores"`
	StoreCores   float64 `json:"storeCpuCores"`
	MachineCores float64 `json:"machineCpuCores"`
	// OtherCores is what every other process used: background load that
	// competes with the run (machine − coordinator − load generator − store).
	OtherCores float64 `json:"otherCpuCores"`
	// Store traffic during the phase (see StoreMetric).
	StoreBytes           int64   `json:"storeBytes"`
	BytesPerHeartbeat    float64 `json:"storeBytesPerHeartbeat"`
	StoreCommands        int64   `json:"storeCommands"`
	CommandsPerHeartbeat float64 `json:"storeCommandsPerHeartbeat"`
	// DataPlaneCommands are the StoreCommands that read the streams, not
	// the coordination state (dataPlaneCommands: the lag refresher's
	// observations and dead-letter counts, every offset-cache-ttl).
	DataPlaneCommands int64 `json:"dataPlaneCommands,omitempty"`
	// DataPlaneBytes estimates the StoreBytes of the lag refresher's
	// per-shard reads: their counts times their size in RESP over the
	// session's stream keys (lagReadBytes).
	DataPlaneBytes int64 `json:"dataPlaneBytesEstimated,omitempty"`
	// StoreCommandsByName breaks the store traffic down: Redis commands by
	// name, PostgreSQL rows written by operation and table (see
	// StoreCounters.ByCommand).
	StoreCommandsByName map[string]int64 `json:"storeCommandsByName,omitempty"`
	StoreMetric         string           `json:"storeMetric"`
	// StoreServer is whose server the store counters come from: StoreOwn,
	// StoreExternal or StoreShared ("" for the memory store).
	StoreServer string `json:"storeServer,omitempty"`
	// Profile is the CPU profile file taken during the phase, if any.
	Profile string `json:"profile,omitempty"`
	// StartSeconds is when the phase started, from the start of the run.
	StartSeconds float64 `json:"startSeconds"`
	// DoubleReaders is how many of the oracle's violations overlap the
	// phase.
	DoubleReaders int `json:"doubleReaders"`
	// Failed is the error that ended the phase early, if any.
	Failed string `json:"failed,omitempty"`
}

// environment collects the run's environment.
func environment() Environment {
	e := Environment{
		GoVersion: runtime.Version(), OS: runtime.GOOS + "/" + runtime.GOARCH, CPUs: runtime.NumCPU(),
		ClockTickHz: userHZ,
		Note:        "load generator, coordinator and stores share the machine; ratios are measured side by side in one run",
	}
	if b, err := os.ReadFile("/proc/sys/kernel/osrelease"); err == nil {
		e.Kernel = strings.TrimSpace(string(b))
	}
	if b, err := os.ReadFile("/proc/cpuinfo"); err == nil {
		e.CPUModel = parseCPUInfo(b)
	}
	if b, err := os.ReadFile("/proc/meminfo"); err == nil {
		if kb, err := parseStatusKB(b, "MemTotal"); err == nil {
			e.MemTotalMB = kb / 1024
		}
	}
	if b, err := os.ReadFile("/proc/loadavg"); err == nil {
		e.LoadAvg = strings.Join(strings.Fields(string(b))[:3], " ")
	}
	if out, err := exec.Command("git", "describe", "--always", "--dirty").Output(); err == nil {
		e.GitCommit = strings.TrimSpace(string(out))
	}
	return e
}

// parseCPUInfo returns the first "model name" of /proc/cpuinfo.
func parseCPUInfo(b []byte) string {
	for line := range bytes.SplitSeq(b, []byte("\n")) {
		if k, v, ok := bytes.Cut(line, []byte(":")); ok && string(bytes.TrimSpace(k)) == "model name" {
			return string(bytes.TrimSpace(v))
		}
	}
	return ""
}

// WriteJSON writes the report to path.
func (r *Report) WriteJSON(path string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(b, '\n'), 0o644)
}

// PrintTables writes the phase table, the churn figures and the goals.
func (r *Report) PrintTables(w io.Writer) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "phase\tstore\tmembers\tconns\toffered/s\tanswered/s\tpasses\tp50 ms\tp95 ms\tp99 ms\tmax ms\terrors\tcoord cpu s\tcoord\tloadgen\tstore\tothers\tpeak MB\tstore B/hb\tcmds/hb\t")
	for _, p := range r.Phases {
		offered := "max"
		if p.Mode == "open" {
			offered = fmt.Sprintf("%.0f", p.OfferedRate)
		}
		fmt.Fprintf(tw, "%s\t%s\t%d×%d\t%d\t%s\t%.0f\t%.1f\t%.2f\t%.2f\t%.2f\t%.1f\t%d\t%.1f\t%.2f\t%.2f\t%.2f\t%.2f\t%.0f\t%.0f\t%.2f\t\n",
			p.Name, p.Store, p.Groups, p.Members, p.Connections, offered, p.Throughput, p.Passes,
			p.Latency.P50, p.Latency.P95, p.Latency.P99, p.Latency.Max, p.Errors,
			p.CPUSeconds, p.CPUCores, p.LoadGenCores, p.StoreCores, p.OtherCores, p.PeakRSSMB, p.BytesPerHeartbeat, p.CommandsPerHeartbeat)
	}
	tw.Flush()
	for _, p := range r.Phases {
		fmt.Fprintf(w, "  %-16s statuses %s\n", p.Name, formatCounts(p.Statuses))
		if len(p.StoreCommandsByName) > 0 {
			fmt.Fprintf(w, "  %-16s store %s\n", "", formatCounts(p.StoreCommandsByName))
		}
		for _, e := range p.ErrorSamples {
			fmt.Fprintf(w, "  %-16s error: %s\n", "", e)
		}
	}
	for _, c := range r.Churn {
		c.print(w)
	}
	fmt.Fprintf(w, "double ownership (oracle over every member's read intervals): %d violations\n", r.Violations)
	for _, v := range r.ViolationSamples {
		fmt.Fprintf(w, "  %s\n", v)
	}
	fmt.Fprintln(w, "cores: CPU cores used during the phase by the coordinator, the load generator, the store server (Redis) and every other process")
	if busiest := r.busiest(); busiest.OtherCores > 0.25 {
		fmt.Fprintf(w, "warning: other processes used up to %.2f cores (%s): figures and ratios are skewed by background load\n", busiest.OtherCores, busiest.Name)
	}
	r.printPeer(w)
	r.printDataPlane(w)
	r.printSinks(w)
	r.printWork(w)
	r.printFleet(w)
	r.printScaling(w)
	fmt.Fprintln(w)
	printGoals(w, r.Goals)
}

// printPeer compares the hand-rolled lease scheme with the coordinator at
// the members' own rate (one request per member and interval).
func (r *Report) printPeer(w io.Writer) {
	peer, ok1 := r.phase("peer/open-members")
	coord, ok2 := r.phase("steady/open-members")
	if !ok1 || !ok2 {
		return
	}
	us := func(cores float64, p Phase) float64 { return perRequest(cores*p.Seconds, p) * 1e6 }
	fmt.Fprintf(w, "peer baseline (hand-rolled Redis leases: SET PX per owned shard + SET NX claims, one pipeline per member-interval) vs coordinator, %d members at %.0f/s:\n",
		peer.Members, peer.OfferedRate)
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "per member-interval\tRedis commands\tbytes to Redis\tRedis CPU µs\tcoordinator CPU µs\tmember-side CPU µs\tp50 ms\tp99 ms\t")
	fmt.Fprintf(tw, "peer leases\t%.2f\t%.0f\t%.1f\t–\t%.1f\t%.2f\t%.2f\t\n", peer.CommandsPerHeartbeat, peer.BytesPerHeartbeat,
		us(peer.StoreCores, peer), us(peer.LoadGenCores, peer), peer.Latency.P50, peer.Latency.P99)
	fmt.Fprintf(tw, "coordinator\t%.2f\t%.0f\t%.1f\t%.1f\t%.1f\t%.2f\t%.2f\t\n", coord.CommandsPerHeartbeat, coord.BytesPerHeartbeat,
		us(coord.StoreCores, coord), perRequest(coord.CPUSeconds, coord)*1e6, us(coord.LoadGenCores, coord), coord.Latency.P50, coord.Latency.P99)
	tw.Flush()
	fmt.Fprintln(w, "  member-side CPU is the load generator's (it runs the peer members, or the simulated members' HTTP clients)")
}

// formatCounts renders counts sorted by key.
func formatCounts(m map[string]int64) string {
	var b strings.Builder
	for i, k := range slices.Sorted(maps.Keys(m)) {
		if i > 0 {
			b.WriteString(" ")
		}
		fmt.Fprintf(&b, "%s=%d", k, m[k])
	}
	return b.String()
}

// busiest returns the phase with the most background load.
func (r *Report) busiest() Phase {
	var b Phase
	for _, p := range r.Phases {
		if p.OtherCores > b.OtherCores {
			b = p
		}
	}
	return b
}
