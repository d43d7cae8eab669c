// Package eventually is how the module's tests wait for something they
// cannot be told about (a tick that runs on its own, a process that starts,
// a metric that updates): they poll a condition until it holds, never sleep
// a fixed time, and set no timing threshold: the limit only turns a hang
// into a failure.
package eventually
