package audit

import (
	"crypto/sha256"
	"encoding/hex"
)

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

func sameString(a, b *string) bool {
	return (a == nil) == (b == nil) && (a == nil || *a == *b)
}

func show(s *string) string {
	if s == nil {
		return "<nil>"
	}
	return "\"" + *s + "\""
}
