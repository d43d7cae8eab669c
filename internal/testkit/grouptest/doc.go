// Package grouptest is the scenario test context for package group: a fake
// clock, a group under test and helpers that build heartbeats, so tests read
// like the flows they check.
package grouptest
