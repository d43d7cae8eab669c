package cluster

import (
	"crypto/ecdh"
	"crypto/hkdf"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"sync"

	"github.com/redis-stream-coordinator/coordinator/persistence"
)

// Forwarding keys (docs/cluster.md, Trust model). Each run of a
// coordinator draws an X25519 key pair. Its registry token is the public
// key (base64url, 43 characters): it tells two runs of one id apart, as a
// random token did, and it is all the store holds. The private key never
// leaves the process. Two coordinators derive the key of the marks they
// send each other from their Diffie-Hellman secret (HKDF-SHA256 over it,
// bound to both public keys), so each needs only the other's registry
// entry: the store keeps public verifiers, and reading it (or every
// token in it) does not let anyone sign a mark. Whoever can write the
// store can still register a coordinator of its own, as it can already
// decide ownership.

// forwardKeyInfo starts the HKDF info of a pair's key; a change of the
// derivation changes it.
const forwardKeyInfo = "rsc-forward-key-v2"

// maxPeerKeys bounds a ForwardKeys' cache of derived keys (one per peer
// run seen): past it the cache starts again.
const maxPeerKeys = 1024

// ForwardKeys is one coordinator run's key pair for the marks of
// forwarded requests, and the keys it derived with its peers. It is safe
// for concurrent use.
type ForwardKeys struct {
	priv  *ecdh.PrivateKey
	token string

	mu    sync.RWMutex
	peers map[string][]byte // by the peer's token
}

// NewForwardKeys draws a key pair.
func NewForwardKeys() *ForwardKeys {
	priv, err := ecdh.X25519().GenerateKey(rand.Reader)
	if err != nil {
		panic("cluster: drawing a forwarding key: " + err.Error()) // crypto/rand does not fail
	}
	return &ForwardKeys{priv: priv, token: base64.RawURLEncoding.EncodeToString(priv.PublicKey().Bytes()), peers: map[string][]byte{}}
}

// Token is the registry token of the run: its public key, base64url
// without padding.
func (k *ForwardKeys) Token() string { return k.token }

// With returns the key of the marks between this run and peer (as the
// registry lists it: its Token is its public key), the same at both ends
// whichever sends; nil when peer's token is not a public key (an entry of
// a release that drew random tokens) or yields no secret.
func (k *ForwardKeys) With(peer persistence.Peer) []byte {
	k.mu.RLock()
	key, ok := k.peers[peer.Token]
	k.mu.RUnlock()
	if ok {
		return key
	}
	key = k.derive(peer.Token)
	k.mu.Lock()
	if len(k.peers) >= maxPeerKeys {
		clear(k.peers)
	}
	k.peers[peer.Token] = key
	k.mu.Unlock()
	return key
}

// derive computes the key shared with the run whose public key is
// peerToken (nil when it is not one).
func (k *ForwardKeys) derive(peerToken string) []byte {
	raw, err := base64.RawURLEncoding.DecodeString(peerToken)
	if err != nil {
		return nil
	}
	pub, err := ecdh.X25519().NewPublicKey(raw)
	if err != nil {
		return nil
	}
	secret, err := k.priv.ECDH(pub) // fails for a low-order point (an all-zero secret)
	if err != nil {
		return nil
	}
	lo, hi := k.token, peerToken
	if hi < lo {
		lo, hi = hi, lo
	}
	key, err := hkdf.Key(sha256.New, secret, nil, forwardKeyInfo+"\n"+lo+"\n"+hi, sha256.Size)
	if err != nil {
		return nil
	}
	return key
}
