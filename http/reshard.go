package httpapi

import (
	"context"
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/redis-stream-coordinator/coordinator/contract"
	"github.com/redis-stream-coordinator/coordinator/group"
)

// Resharding is the part of Runtime that scales groups and reads their
// migrations (docs/protocol.md §2.5, §6), plus the group snapshot the data-plane monitoring
// projects from.
type Resharding interface {
	// ScaleGroup scales one group (docs/protocol.md §6.2); the request has passed
	// group.ValidateScale.
	ScaleGroup(ctx context.Context, key group.Key, req contract.ScaleRequest) (group.Migration, error)
	// ScaleStream scales every group of a stream prefix (docs/protocol.md §6.3).
	ScaleStream(ctx context.Context, prefix string, req contract.ScaleRequest) (group.StreamScale, error)
	// Rollback rolls a migration back (docs/protocol.md §6.5); the request has passed
	// group.ValidateRollback.
	Rollback(ctx context.Context, key group.Key, id string, req contract.RollbackRequest) (group.Migration, error)
	// Migration returns one migration of a group.
	Migration(ctx context.Context, key group.Key, id string) (group.Migration, error)
	// Migrations returns a group's migration history.
	Migrations(ctx context.Context, key group.Key) (group.Migrations, error)
	// Snapshot returns a private copy of the committed group.
	Snapshot(ctx context.Context, key group.Key) (*group.Group, error)
}

// reshardingRoutes lists the scale, migration and data-plane monitoring
// routes (#3, #8–#10, #20–#22), templates relative to the base path.
func (a *API) reshardingRoutes() []route {
	return []route{
		{Route{Method: http.MethodPost, Template: contract.StreamScale}, a.scaleStream},
		{Route{Method: http.MethodPost, Template: contract.GroupScale}, a.scaleGroup},
		{Route{Method: http.MethodGet, Template: contract.GroupMigration}, a.getMigration},
		{Route{Method: http.MethodPost, Template: contract.GroupRollback}, a.rollback},
		{Route{Method: http.MethodGet, Template: contract.MonitoringMigrations}, read(a, a.runtime.Migrations, migrationsBody)},
		{Route{Method: http.MethodGet, Template: contract.MonitoringOffsets}, read(a, a.offsets, asIs[contract.Offsets])},
		{Route{Method: http.MethodGet, Template: contract.MonitoringMessages}, a.shardMessages},
	}
}

// validScale validates a scale request body.
func (a *API) validScale(req *contract.ScaleRequest) error {
	return group.ValidateScale(req, a.settings)
}

// scaleGroup serves #8: 202 with the Migration.
func (a *API) scaleGroup(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	mutate(a, w, r, ps, http.StatusAccepted, a.validScale, func(ctx context.Context, key group.Key, req contract.ScaleRequest) (any, error) {
		return migrationBody(a.runtime.ScaleGroup(ctx, key, req))
	})
}

// scaleStream serves #3.
func (a *API) scaleStream(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	mutate(a, w, r, ps, http.StatusAccepted, a.validScale, func(ctx context.Context, key group.Key, req contract.ScaleRequest) (any, error) {
		s, err := a.runtime.ScaleStream(ctx, key.StreamPrefix, req)
		if err != nil {
			return nil, err
		}
		return s.View(), nil
	})
}

// getMigration serves #9.
func (a *API) getMigration(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	key, err := pathKey(ps)
	var m group.Migration
	if err == nil {
		m, err = a.runtime.Migration(r.Context(), key, ps.ByName("reshardingId"))
	}
	if err != nil {
		a.fail(w, r, err)
		return
	}
	writeJSON(w, http.StatusOK, m.View())
}

// rollback serves #10: 202 with the Migration.
func (a *API) rollback(w http.ResponseWriter, r *http.Request, ps httprouter.Params) {
	mutate(a, w, r, ps, http.StatusAccepted, group.ValidateRollback, func(ctx context.Context, key group.Key, req contract.RollbackRequest) (any, error) {
		return migrationBody(a.runtime.Rollback(ctx, key, ps.ByName("reshardingId"), req))
	})
}

// migrationBody answers a scale or rollback: the migration's view.
func migrationBody(m group.Migration, err error) (any, error) {
	if err != nil {
		return nil, err
	}
	return m.View(), nil
}

func migrationsBody(_ group.Key, m group.Migrations) any { return m.View() }
