package contract

import (
	"strconv"
	"strings"
)

// SlotCount is the number of Redis Cluster hash slots.
const SlotCount = 16384

// StreamKey returns the Redis key of shard i of the sharded stream prefix:
// "prefix:i".
func StreamKey(prefix string, i int) string {
	return prefix + ":" + strconv.Itoa(i)
}

// KeyPattern returns the stream key pattern advertised to producers:
// "prefix:{shardIndex}".
func KeyPattern(prefix string) string {
	return prefix + ":{shardIndex}"
}

// Slot returns the Redis Cluster hash slot of key: CRC16/XMODEM of its UTF-8
// bytes modulo SlotCount. When the key contains a hash tag (a "{" followed
// later by a "}" with at least one byte between them, first occurrences),
// only the tag is hashed, as Redis does.
func Slot(key string) int {
	if open := strings.IndexByte(key, '{'); open >= 0 {
		if end := strings.IndexByte(key[open+1:], '}'); end > 0 {
			key = key[open+1 : open+1+end]
		}
	}
	return int(crc16(key)) & (SlotCount - 1)
}

// crc16 is CRC-16/XMODEM (polynomial 0x1021, initial value 0, no
// reflection), the checksum Redis Cluster uses for key slots.
func crc16(s string) uint16 {
	var crc uint16
	for i := 0; i < len(s); i++ {
		crc ^= uint16(s[i]) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}
