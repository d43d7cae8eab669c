package coordtest

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/redis-stream-coordinator/coordinator/actors"
	"github.com/redis-stream-coordinator/coordinator/cluster"
	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
	httpapi "github.com/redis-stream-coordinator/coordinator/http"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/eventually"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/fakeclock"
	"github.com/redis-stream-coordinator/coordinator/internal/testkit/faultstore"
)

// Options configure the coordinators Start and StartCluster build. Every
// zero field has a default fit for most tests.
type Options struct {
	// Backend is the store's data. nil → Memory().
	Backend *Backend
	// Wrap, when set, wraps each coordinator's store handle (a fault
	// injector such as NewFaults, a metrics wrapper); node and actors use
	// the wrapped store.
	Wrap func(Store) Store
	// Settings are the domain settings. Zero → group.DefaultSettings().
	Settings group.Settings
	// Clock, when set, is the actors' clock: time moves only when the test
	// moves it, and no ticker runs unless Actors turns it on.
	Clock *fakeclock.Clock
	// ID names the coordinator ("" → "coord-test"; StartCluster names its
	// coordinators coord-a, coord-b, …).
	ID string
	// Cluster joins the coordinator to the coordinator cluster: a
	// cluster.Node on the store is the actors' Ownership and the API's
	// Cluster, started unless Unstarted (the test then calls Node.Start).
	// StartCluster sets it.
	Cluster   bool
	Unstarted bool
	// NodeLeaseTTL is the node's registry lease. 0 → 2 s, renewed every
	// 20 ms: a stopped node's groups move within seconds.
	NodeLeaseTTL time.Duration
	// AdvertiseURL is the URL the node registers for its peers ("" → URL).
	AdvertiseURL string
	// Node, when set, makes and starts the coordinator's cluster node in
	// place of the one Cluster makes (a test of the wiring that
	// cmd/coordinator's joinCluster does): it gets c before anything else
	// is built, its listener bound (URL, HTTP.Listener). Start wires that
	// node as it wires its own and stops it at the end.
	Node func(c *Server) *cluster.Node
	// TLS serves the API over TLS with httptest's certificate, which
	// HTTP.Client() trusts: URL is https://….
	TLS bool
	// Actors and API adjust the options the harness built before the
	// actor system and the API are made.
	Actors func(*actors.Options)
	API    func(*httpapi.Options)
	// Handler, when set, wraps the API's handler on the server (e.g. a
	// check of every answer).
	Handler func(http.Handler) http.Handler
}

// Server is one in-process coordinator and its loopback HTTP server (the
// in-process counterpart of a coordproc.Server).
type Server struct {
	t        testing.TB
	ID       string
	Store    Store
	Node     *cluster.Node // nil unless Options.Cluster or Options.Node
	Actors   *actors.System
	API      *httpapi.API
	HTTP     *httptest.Server
	URL      string // the server's root, scheme://host:port
	Base     string // URL and the API's base path
	Clock    *fakeclock.Clock
	Settings group.Settings
	stop     sync.Once
}

// Start builds one coordinator on a handle of o.Backend and serves its
// API; Stop stops it, at the latest when t ends.
func Start(t testing.TB, o Options) *Server {
	t.Helper()
	if o.Backend == nil {
		o.Backend = Memory()
	}
	if o.Settings == (group.Settings{}) {
		o.Settings = group.DefaultSettings()
	}
	c := &Server{t: t, ID: cmp.Or(o.ID, "coord-test"), Clock: o.Clock, Settings: o.Settings}
	c.Store = o.Backend.Handle()
	if o.Wrap != nil {
		c.Store = o.Wrap(c.Store)
	}
	logger := slog.New(slog.DiscardHandler)
	c.HTTP = httptest.NewUnstartedServer(nil)
	scheme := "http://"
	if o.TLS {
		scheme = "https://"
	}
	c.URL = scheme + c.HTTP.Listener.Addr().String()
	c.Base = c.URL + contract.BasePath
	t.Cleanup(c.Stop)
	ao := actors.Options{Store: c.Store, Settings: o.Settings, GroupCommit: true, Logger: logger}
	if o.Clock != nil {
		ao.Clock = o.Clock.Now
	}
	switch {
	case o.Node != nil:
		c.Node = o.Node(c)
	case o.Cluster:
		ttl := cmp.Or(o.NodeLeaseTTL, 2*time.Second)
		node, err := cluster.New(cluster.Options{Store: c.Store, ID: c.ID, URL: cmp.Or(o.AdvertiseURL, c.URL),
			LeaseTTL: ttl, RenewInterval: ttl / 100, Logger: logger})
		if err != nil {
			t.Fatal(err)
		}
		c.Node = node
	}
	if c.Node != nil {
		ao.Ownership = c.Node
	}
	if o.Actors != nil {
		o.Actors(&ao)
	}
	coord, err := actors.New(ao)
	if err != nil {
		t.Fatal(err)
	}
	c.Actors = coord
	api := httpapi.Options{Runtime: coord, Settings: o.Settings, CoordinatorID: c.ID, Logger: logger}
	if c.Node != nil {
		c.Node.OnChange(coord.HandOver)
		api.Cluster = c.Node
	}
	if o.API != nil {
		o.API(&api)
	}
	c.Base = c.URL + contract.CleanBasePath(api.BasePath)
	c.API = httpapi.New(api)
	var h http.Handler = c.API
	if o.Handler != nil {
		h = o.Handler(h)
	}
	c.HTTP.Config.Handler = h
	if o.TLS {
		c.HTTP.StartTLS()
	} else {
		c.HTTP.Start()
	}
	if o.Cluster && o.Node == nil && !o.Unstarted {
		c.Node.Start(t.Context())
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("coordtest: %s", c)
		}
	})
	return c
}

// Stop stops c in cmd/coordinator's order after it left the cluster: the
// API refuses new mutations (Drain), the actors answer what they hold and
// stop, the server closes, the node deregisters. It runs once (Start
// registers it for the end of the test); a test may call it earlier, from
// any goroutine.
func (c *Server) Stop() {
	c.stop.Do(func() {
		if c.API != nil {
			c.API.Drain()
		}
		if c.Actors != nil {
			if err := c.Actors.Shutdown(context.Background()); err != nil {
				c.t.Errorf("%s: actors shutdown: %v", c.ID, err)
			}
		}
		c.HTTP.Close()
		if c.Node != nil {
			_ = c.Node.Stop(context.Background())
		}
	})
}

// StartCluster starts n (at most 26) coordinators, coord-a, coord-b, …,
// on handles of one backend (o.Backend, or one memory store), each a
// cluster node, and waits until each lists all n as live.
func StartCluster(t testing.TB, n int, o Options) []*Server {
	t.Helper()
	if o.Backend == nil {
		o.Backend = Memory()
	}
	o.Cluster = true
	cs := make([]*Server, n)
	for i := range cs {
		o.ID = "coord-" + string(rune('a'+i))
		cs[i] = Start(t, o)
	}
	if !o.Unstarted {
		cs[0].WaitFor(func() bool {
			for _, c := range cs {
				if len(c.Node.Live()) != n {
					return false
				}
			}
			return true
		}, fmt.Sprintf("all %d coordinators live on each", n))
	}
	return cs
}

// String describes the coordinator's state for a failure message: its id,
// URL, and as a cluster node whether it serves and whom it sees live.
func (c *Server) String() string {
	s := c.ID + " at " + c.URL
	if c.Node != nil {
		var live []string
		for _, l := range c.Node.Live() {
			live = append(live, l.ID)
		}
		s += fmt.Sprintf(" (serving %t, leaving %t, live %v)", c.Node.Serving(), c.Node.Leaving(), live)
	}
	return s
}

// WaitFor waits until cond holds (internal/testkit/eventually); on timeout it
// fails the test naming what it waited for on which coordinator, and the
// coordinator's state at the end of the test is logged.
func (c *Server) WaitFor(cond func() bool, what string) {
	c.t.Helper()
	eventually.True(c.t, what+" on "+c.ID, cond)
}

// PlacedOn returns a stream prefix beginning with base that is placed on
// c only (by every node of cs), for a group a test wants on c.
func (c *Server) PlacedOn(base string, cs ...*Server) string {
	c.t.Helper()
	for i := range 10000 {
		p := fmt.Sprintf("%s-%d", base, i)
		if c.Node.PlacedHere(p) && !placedOnOther(p, c, cs) {
			return p
		}
	}
	c.t.Fatalf("no prefix %s-N placed on %s", base, c.ID)
	return ""
}

func placedOnOther(prefix string, c *Server, cs []*Server) bool {
	for _, o := range cs {
		if o != c && o.Node.PlacedHere(prefix) {
			return true
		}
	}
	return false
}

// Faults returns c's fault-injecting store, made by NewFaults
// (Options.Wrap); a coordinator started without it fails the test.
func (c *Server) Faults() *faultstore.Store {
	c.t.Helper()
	f, ok := c.Store.(*faultstore.Store)
	if !ok {
		c.t.Fatalf("%s: started without Options.Wrap = coordtest.NewFaults", c.ID)
	}
	return f
}
