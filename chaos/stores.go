package chaos

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"

	"github.com/jackc/pgx/v5"
)

// pgSchema is a schema of its own in PostgreSQL for one run.
type pgSchema struct {
	base, name string
}

// newPGSchema creates schema chaos_<random> in the database of dsn.
func newPGSchema(ctx context.Context, dsn string) (*pgSchema, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	defer conn.Close(ctx)
	s := &pgSchema{base: dsn, name: "chaos_" + randomSuffix()}
	if _, err := conn.Exec(ctx, "CREATE SCHEMA "+s.name); err != nil {
		return nil, fmt.Errorf("postgres: create schema %s: %w", s.name, err)
	}
	return s, nil
}

// url is dsn with search_path set to the schema.
func (s *pgSchema) url() (string, error) {
	u, err := url.Parse(s.base)
	if err != nil {
		return "", err
	}
	q := u.Query()
	q.Set("search_path", s.name)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// drop removes the schema and everything in it.
func (s *pgSchema) drop(ctx context.Context) error {
	conn, err := pgx.Connect(ctx, s.base)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, "DROP SCHEMA "+s.name+" CASCADE")
	return err
}

// randomSuffix is 12 lower-case hex digits, unique per run.
func randomSuffix() string {
	b := make([]byte, 6)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// removeDir deletes a run directory, ignoring errors.
func removeDir(dir string) { _ = os.RemoveAll(dir) }
