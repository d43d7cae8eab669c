// Package basepath reads the coordinator's API base path
// (coordinator.api.base-path) the one way the route tables of packages
// audit and security do.
package basepath

import "strings"

// Default is the base path of the coordinator routes (docs/protocol.md §0).
const Default = "/coord/v1"

// Clean returns p without surrounding white space and trailing slashes,
// with a leading slash; a blank p (or only slashes) is Default.
func Clean(p string) string {
	base := strings.TrimRight(strings.TrimSpace(p), "/")
	if base == "" {
		return Default
	}
	if !strings.HasPrefix(base, "/") {
		base = "/" + base
	}
	return base
}
