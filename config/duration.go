package config

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
	"time"

	yaml "go.yaml.in/yaml/v4"
)

// Duration is a time.Duration that reads every form ParseDuration accepts.
type Duration time.Duration

// Duration returns d as a time.Duration.
func (d Duration) Duration() time.Duration { return time.Duration(d) }

// String formats d the way time.Duration does ("1m0s"), which ParseDuration
// reads back.
func (d Duration) String() string { return time.Duration(d).String() }

// MarshalYAML writes d as its String form.
func (d Duration) MarshalYAML() (any, error) { return d.String(), nil }

// UnmarshalYAML reads a scalar with ParseDuration.
func (d *Duration) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return errors.New("expected a duration such as 1s, 10m, 7d or PT3S")
	}
	v, err := ParseDuration(n.Value)
	if err != nil {
		return err
	}
	*d = Duration(v)
	return nil
}

var (
	// isoDuration is ISO-8601 PnDTnHnMn.nS as java.time.Duration reads it
	// (days, hours, minutes, seconds; a fraction only on seconds).
	isoDuration = regexp.MustCompile(`^(?i)([-+]?)P(?:([-+]?\d+)D)?(T(?:([-+]?\d+)H)?(?:([-+]?\d+)M)?(?:([-+]?\d+)(?:[.,](\d{0,9}))?S)?)?$`)
	// dayPrefix is the leading "Nd" of a day-based duration such as 1d12h.
	dayPrefix = regexp.MustCompile(`^([-+]?)(\d+)d(.*)$`)
	// bareNumber is a unitless number, which gets a dedicated hint.
	bareNumber = regexp.MustCompile(`^[-+]?\d+(\.\d+)?$`)
)

// ParseDuration reads a configuration duration:
//   - Go forms accepted by time.ParseDuration: "500ms", "3s", "1h30m";
//   - whole days, optionally followed by a Go form: "7d", "1d12h";
//   - ISO-8601 as java.time.Duration reads it: "PT3S", "PT1M", "P7D",
//     "PT0.5S", "P1DT2H".
//
// A bare number other than 0 is rejected because its unit is ambiguous.
// Errors read `invalid duration "<s>"`.
func ParseDuration(s string) (time.Duration, error) {
	v := strings.TrimSpace(s)
	if d, ok := parseISO(v); ok {
		return d, nil
	}
	if d, ok := parseDays(v); ok {
		return d, nil
	}
	if d, err := time.ParseDuration(v); err == nil {
		return d, nil
	}
	if bareNumber.MatchString(v) {
		return 0, fmt.Errorf("invalid duration %q (missing unit, e.g. %ss)", s, v)
	}
	return 0, fmt.Errorf("invalid duration %q", s)
}

// parseISO reads an ISO-8601 duration; ok is false when v is not one or
// overflows.
func parseISO(v string) (time.Duration, bool) {
	m := isoDuration.FindStringSubmatch(v)
	if m == nil || (m[2] == "" && m[3] == "") || strings.EqualFold(m[3], "T") {
		return 0, false
	}
	var total sum
	total.add(m[2], 24*time.Hour)
	total.add(m[4], time.Hour)
	total.add(m[5], time.Minute)
	total.add(m[6], time.Second)
	if frac := m[7]; frac != "" {
		ns, _ := strconv.ParseInt((frac + "000000000")[:9], 10, 64)
		if strings.HasPrefix(m[6], "-") {
			ns = -ns
		}
		total.addNanos(ns)
	}
	if total.overflow {
		return 0, false
	}
	if m[1] == "-" {
		return -total.d, true
	}
	return total.d, true
}

// parseDays reads "Nd" optionally followed by a Go duration ("1d12h").
func parseDays(v string) (time.Duration, bool) {
	m := dayPrefix.FindStringSubmatch(v)
	if m == nil {
		return 0, false
	}
	var total sum
	total.add(m[2], 24*time.Hour)
	if m[3] != "" {
		rest, err := time.ParseDuration(m[3])
		if err != nil || rest < 0 {
			return 0, false
		}
		total.addNanos(int64(rest))
	}
	if total.overflow {
		return 0, false
	}
	if m[1] == "-" {
		return -total.d, true
	}
	return total.d, true
}

// sum accumulates duration components, recording int64 overflow.
type sum struct {
	d        time.Duration
	overflow bool
}

// add adds the decimal integer n (may be empty or signed) times unit.
func (s *sum) add(n string, unit time.Duration) {
	if n == "" {
		return
	}
	x, err := strconv.ParseInt(n, 10, 64)
	if err != nil || x > math.MaxInt64/int64(unit) || x < math.MinInt64/int64(unit) {
		s.overflow = true
		return
	}
	s.addNanos(x * int64(unit))
}

func (s *sum) addNanos(ns int64) {
	r := int64(s.d) + ns
	if (ns > 0 && r < int64(s.d)) || (ns < 0 && r > int64(s.d)) {
		s.overflow = true
		return
	}
	s.d = time.Duration(r)
}
