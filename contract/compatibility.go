package contract

// Compatibility is the body of GET MonitoringCompat (docs/protocol.md
// §2.6): the coordination versions this coordinator speaks.
type Compatibility struct {
	CurrentCoordinationVersion    int                   `json:"currentCoordinationVersion"`
	SupportedCoordinationVersions VersionRange          `json:"supportedCoordinationVersions"`
	CoordinationVersions          []CoordinationVersion `json:"coordinationVersions"`
}

// VersionRange is the lowest and highest coordination version supported.
type VersionRange struct {
	Min int `json:"min"`
	Max int `json:"max"`
}

// CoordinationVersion is one coordination version: its status, the
// releases that introduced, deprecated and will remove it (null when
// none), and its timing defaults (ISO-8601 durations).
type CoordinationVersion struct {
	Version               int             `json:"version"`
	Status                string          `json:"status"`
	IntroducedIn          ReleaseVersion  `json:"introducedIn"`
	DeprecatedIn          *ReleaseVersion `json:"deprecatedIn"`
	MinimumSupportedUntil ReleaseVersion  `json:"minimumSupportedUntil"`
	RemovedIn             *ReleaseVersion `json:"removedIn"`
	TimingDefaults        TimingDefaults  `json:"timingDefaults"`
}

// ReleaseVersion is a release, as its parts and as text.
type ReleaseVersion struct {
	Major     int     `json:"major"`
	Minor     int     `json:"minor"`
	Patch     int     `json:"patch"`
	Qualifier *string `json:"qualifier"`
	Version   string  `json:"version"`
}

// TimingDefaults are a coordination version's default intervals.
type TimingDefaults struct {
	HeartbeatInterval string `json:"heartbeatInterval"`
	MemberLeaseTTL    string `json:"memberLeaseTtl"`
	RebalanceTimeout  string `json:"rebalanceTimeout"`
}
