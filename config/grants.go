package config

import (
	"fmt"
	"net/netip"
	"strings"

	"github.com/redis-stream-coordinator/coordinator/security"
)

// Parse turns the grant into a security.Grant, or says what is wrong with
// it (an unknown operation or pattern type, a blank name, no operation).
func (g Grant) Parse() (security.Grant, error) {
	streams, err := security.ParsePattern(g.Stream, g.StreamPattern)
	if err != nil {
		return security.Grant{}, fmt.Errorf("stream: %w", err)
	}
	groups, err := security.ParsePattern(g.Group, g.GroupPattern)
	if err != nil {
		return security.Grant{}, fmt.Errorf("group: %w", err)
	}
	out := security.Grant{Streams: streams, Groups: groups, MemberIDPrefix: g.MemberIDPrefix}
	if len(g.Operations) == 0 {
		return security.Grant{}, fmt.Errorf("operations: must name at least one of heartbeat, describe, read-messages, alter, create, delete")
	}
	for _, name := range g.Operations {
		op, ok := security.ParseOperation(name)
		if !ok {
			return security.Grant{}, fmt.Errorf("operations: unknown operation %q: want heartbeat, describe, read-messages, alter, create or delete", name)
		}
		out.Operations = append(out.Operations, op)
	}
	return out, nil
}

// TrustedProxyPrefixes parses api.trusted-proxies: each entry a CIDR range
// or a single address.
func (a API) TrustedProxyPrefixes() ([]netip.Prefix, error) {
	out := make([]netip.Prefix, 0, len(a.TrustedProxies))
	for _, s := range a.TrustedProxies {
		s = strings.TrimSpace(s)
		if p, err := netip.ParsePrefix(s); err == nil {
			out = append(out, p.Masked())
			continue
		}
		addr, err := netip.ParseAddr(s)
		if err != nil {
			return nil, fmt.Errorf("%q is neither a CIDR range nor an IP address", s)
		}
		out = append(out, netip.PrefixFrom(addr.Unmap(), addr.Unmap().BitLen()))
	}
	return out, nil
}
