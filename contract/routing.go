package contract

import (
	"encoding/binary"
	"fmt"

	"github.com/twmb/murmur3"
)

// ShardFor returns the shard a producer routes partitionKey to among n
// shards, exactly as the shipped clients do (docs/protocol.md §6.7): the standard Murmur3
// x86_32 hash of the key's UTF-8 bytes, reduced modulo n without bias by
// rejection sampling. A hash at or above the largest multiple of n that fits
// in 32 bits is rejected and the key is re-hashed with the seed
// murmur3(le32(attempt), 0) for attempt = 1, 2, ….
//
// n must be between 1 and 2^32; ShardFor panics otherwise.
func ShardFor(partitionKey string, n int) int {
	if n < 1 || uint64(n) > 1<<32 {
		panic(fmt.Sprintf("contract: shard count %d out of range [1, 2^32]", n))
	}
	count := uint64(n)
	limit := 1<<32 - (1<<32)%count
	var attemptBytes [4]byte
	for attempt := uint32(0); ; attempt++ {
		var seed uint32
		if attempt > 0 {
			binary.LittleEndian.PutUint32(attemptBytes[:], attempt)
			seed = murmur3.Sum32(attemptBytes[:])
		}
		if h := uint64(murmur3.SeedStringSum32(seed, partitionKey)); h < limit {
			return int(h % count) // #nosec G115 -- below count, which is n, an int
		}
	}
}
