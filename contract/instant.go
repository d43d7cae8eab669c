package contract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"strconv"
	"time"
)

// Instant is a point in time in milliseconds since the Unix epoch (UTC).
// The zero Instant means "unset" and encodes as JSON null. Time enters the
// domain only as Instant arguments; the domain never reads a clock.
type Instant int64

// InstantOf converts a time.Time to an Instant (millisecond precision).
func InstantOf(t time.Time) Instant { return Instant(t.UnixMilli()) }

// Time converts the Instant back to a UTC time.Time.
func (i Instant) Time() time.Time { return time.UnixMilli(int64(i)).UTC() }

// IsZero reports whether the instant is unset.
func (i Instant) IsZero() bool { return i == 0 }

// Add returns i shifted by d (millisecond precision).
func (i Instant) Add(d time.Duration) Instant { return i + Instant(d.Milliseconds()) }

// String formats the instant as ISO-8601 UTC with milliseconds.
func (i Instant) String() string {
	if i == 0 {
		return ""
	}
	return i.Time().Format(isoMillis)
}

const isoMillis = "2006-01-02T15:04:05.000Z"

// MarshalJSON encodes the instant as an ISO-8601 UTC string, or null when unset.
func (i Instant) MarshalJSON() ([]byte, error) {
	if i == 0 {
		return []byte("null"), nil
	}
	b := make([]byte, 0, len(isoMillis)+2)
	b = append(b, '"')
	b = i.Time().AppendFormat(b, isoMillis)
	return append(b, '"'), nil
}

// UnmarshalJSON accepts null, any RFC 3339 string, or an epoch number
// (milliseconds when larger than 1e11, seconds otherwise).
func (i *Instant) UnmarshalJSON(data []byte) error {
	data = bytes.TrimSpace(data)
	if bytes.Equal(data, []byte("null")) {
		*i = 0
		return nil
	}
	if len(data) > 0 && data[0] == '"' {
		var s string
		if len(data) >= 2 && data[len(data)-1] == '"' && bytes.IndexByte(data, '\\') < 0 {
			s = string(data[1 : len(data)-1]) // no escapes: the common case, without reflection
		} else if err := json.Unmarshal(data, &s); err != nil {
			return err
		}
		if s == "" {
			*i = 0
			return nil
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return fmt.Errorf("invalid instant %q: must be RFC 3339", s)
		}
		*i = InstantOf(t)
		return nil
	}
	f, err := strconv.ParseFloat(string(data), 64)
	if err != nil {
		return fmt.Errorf("invalid instant %s", data)
	}
	switch {
	case f >= 1<<62:
		// Beyond any instant int64 milliseconds hold: pinned to the
		// extreme, which every bound refuses, instead of an overflow
		// whose result depends on the platform.
		*i = Instant(math.MaxInt64)
	case f <= -(1 << 62):
		*i = Instant(math.MinInt64)
	case f > 1e11 || f < -1e11:
		*i = Instant(f)
	default:
		*i = Instant(f * 1000)
	}
	return nil
}
