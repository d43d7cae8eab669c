// Package httpfuzz holds the HTTP edge's Go native fuzz targets: arbitrary
// heartbeat bodies, and arbitrary methods, paths and bodies through the
// secured API, over a fake runtime (internal/testkit/fakeruntime). They are
// a package of their own because a fuzzing build instruments every package
// of its test binary: here that is the edge and what it imports, not the
// real coordinators, stores and test servers of the edge's own tests.
// make fuzz runs them; go test runs their seeds.
package httpfuzz
