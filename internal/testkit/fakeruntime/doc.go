// Package fakeruntime is a fake of the HTTP edge's Runtime (httpapi.Runtime):
// canned answers, an error to return instead, and a record of what it was
// asked. The edge's unit tests and its fuzz targets (package httpfuzz) build
// their APIs over it, so that neither needs a coordinator or a store.
package fakeruntime
