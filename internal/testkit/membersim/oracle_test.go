package membersim

import (
	"testing"
	"time"
)

const s = time.Second

func TestOracleHandOverIsNoViolation(t *testing.T) {
	o := NewLeaseOracle()
	o.Live("g", "a", 0, 20*s)
	o.Live("g", "b", 0, 20*s)
	o.Read("g", "a", 1, 0, 5*s)
	o.Read("g", "b", 1, 5*s, 9*s) // starts exactly when a stopped
	o.Read("g", "a", 2, 0, 9*s)   // other shard
	if v := o.Violations(); len(v) != 0 {
		t.Fatalf("violations %v", v)
	}
}

func TestOracleReportsOverlapOfLiveMembers(t *testing.T) {
	o := NewLeaseOracle()
	o.Live("g", "a", 0, 10*s)
	o.Live("g", "b", 2*s, 12*s)
	o.Read("g", "a", 7, 1*s, 6*s)
	o.Read("g", "b", 7, 4*s, 8*s)
	v := o.Violations()
	if len(v) != 1 || v[0].Shard != 7 || v[0].Members != [2]string{"a", "b"} || v[0].From != 4*s || v[0].Duration != 2*s {
		t.Fatalf("violations %v", v)
	}
}

func TestOracleIgnoresReadsOutsideLiveWindows(t *testing.T) {
	o := NewLeaseOracle()
	// a's lease may have lapsed at 10s (last accepted heartbeat sent at 0);
	// its windows touch, so they merge, but nothing covers 10s–15s.
	o.Live("g", "a", 0, 5*s)
	o.Live("g", "a", 5*s, 10*s)
	o.Live("g", "a", 15*s, 25*s)
	o.Live("g", "b", 0, 30*s)
	o.Read("g", "a", 3, 0, 14*s) // still reading after the lease may have lapsed
	o.Read("g", "b", 3, 11*s, 30*s)
	if v := o.Violations(); len(v) != 0 {
		t.Fatalf("violations %v", v)
	}
	o.Read("g", "a", 3, 16*s, 17*s) // but reading again while live is one
	if v := o.Violations(); len(v) != 1 || v[0].From != 16*s || v[0].Duration != s {
		t.Fatalf("violations %v", v)
	}
}

func TestOracleIgnoresEmptySpans(t *testing.T) {
	o := NewLeaseOracle()
	o.Live("g", "a", 5*s, 5*s)
	o.Read("g", "a", 1, 3*s, 3*s)
	if len(o.reads) != 0 || len(o.live) != 0 {
		t.Fatalf("kept empty spans: %v %v", o.reads, o.live)
	}
}
