package coordtest

import "github.com/redis-stream-coordinator/coordinator/internal/testkit/faultstore"

// NewFaults wraps s in the test kit's fault-injecting store
// (internal/testkit/faultstore) with no fault set: Options.Wrap takes it
// as is, and Server.Faults returns it. A held call holds the group's
// actor that makes it (later requests queue in its mailbox); a failed one
// is the store's failure.
func NewFaults(s Store) Store { return faultstore.New(s) }
