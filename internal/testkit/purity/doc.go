// Package purity holds the tests' checks that a package stays pure (group,
// member, actors/core): what it may depend on, even indirectly, and what
// its code may call.
package purity
