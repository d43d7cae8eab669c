package pgproc

import (
	"context"
	"os"
	"testing"

	"github.com/jackc/pgx/v5"
)

func TestStartQueryStop(t *testing.T) {
	if _, err := binDir(); err != nil && os.Getenv("COORD_SKIP_INTEGRATION") == "1" {
		t.Skip(err)
	}
	ctx := context.Background()
	s, err := Start(ctx, "autovacuum=off")
	if err != nil {
		t.Fatal(err)
	}
	defer s.Stop()
	conn, err := pgx.Connect(ctx, s.URL)
	if err != nil {
		t.Fatal(err)
	}
	var setting string
	if err := conn.QueryRow(ctx, "SHOW autovacuum").Scan(&setting); err != nil || setting != "off" {
		t.Errorf("autovacuum = %q, %v; want the setting passed to Start", setting, err)
	}
	conn.Close(ctx)
	dir := s.dir
	s.Stop()
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("data directory %s left behind: %v", dir, err)
	}
	if _, err := pgx.Connect(ctx, s.URL); err == nil {
		t.Error("connected to a stopped server")
	}
}
