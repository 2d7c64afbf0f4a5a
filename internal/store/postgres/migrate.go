package postgres

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// migrationFiles holds the schema migrations, one file per version, named
// NNNN_what.sql and numbered from 0001 without gaps. A released migration is
// never edited; a change to the schema is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

var (
	// ErrNewerSchema is returned by Open for a store written by a newer assay.
	ErrNewerSchema = errors.New("store schema is newer than this assay")
	// ErrNotAssay is returned by Open for a schema that holds another
	// program's tables.
	ErrNotAssay = errors.New("not an assay store")
)

// migrationLock is the transaction-level advisory lock key under which
// migrations run, so that two processes opening one new database at once
// apply them once ("ASSY").
const migrationLock = 0x41535359

type migration struct {
	version int
	name    string
	sql     string
}

func loadMigrations(fsys fs.FS) ([]migration, error) {
	names, err := fs.Glob(fsys, "migrations/*.sql")
	if err != nil {
		return nil, err
	}
	var ms []migration
	for _, name := range names {
		base := path.Base(name)
		num, _, ok := strings.Cut(base, "_")
		v, err := strconv.Atoi(num)
		if !ok || err != nil || v < 1 {
			return nil, fmt.Errorf("migration %s: name must be NNNN_what.sql with NNNN from 0001", name)
		}
		data, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(data)})
	}
	sort.Slice(ms, func(i, j int) bool { return ms[i].version < ms[j].version })
	for i, m := range ms {
		if m.version != i+1 {
			return nil, fmt.Errorf("migration %s: expected version %d (versions run from 1 without gaps or repeats)", m.name, i+1)
		}
	}
	if len(ms) == 0 {
		return nil, errors.New("no schema migrations embedded")
	}
	return ms, nil
}

// SchemaVersion is the schema version this binary creates and reads.
func SchemaVersion() int {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return 0
	}
	return ms[len(ms)-1].version
}

// schemaVersion reads the store's version from assay_schema in the current
// schema: 0 when there is no store there yet.
func (d *DB) schemaVersion(ctx context.Context) (int, error) {
	var exists bool
	if err := d.pool.QueryRow(ctx, `SELECT to_regclass('assay_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, fmt.Errorf("reading the store's schema: %w", err)
	}
	if !exists {
		return 0, nil
	}
	var v int
	if err := d.pool.QueryRow(ctx, `SELECT version FROM assay_schema`).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading the store's schema version: %w", err)
	}
	return v, nil
}

// migrate brings the store up to the last migration, in one transaction
// under an advisory lock; each migration is applied whole or not at all.
func (d *DB) migrate(ctx context.Context) error {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return err
	}
	latest := ms[len(ms)-1].version
	tx, err := d.pool.Begin(ctx)
	if err != nil {
		return fmt.Errorf("opening the store: %w", err)
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock($1)`, int64(migrationLock)); err != nil {
		return fmt.Errorf("opening the store: %w", err)
	}
	version, err := checkVersion(ctx, tx, latest)
	if err != nil {
		return err
	}
	if version == latest {
		return tx.Commit(ctx)
	}
	if version == 0 {
		if _, err := tx.Exec(ctx, `CREATE TABLE assay_schema (version BIGINT NOT NULL)`); err != nil {
			return fmt.Errorf("creating the store's schema: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO assay_schema (version) VALUES (0)`); err != nil {
			return fmt.Errorf("creating the store's schema: %w", err)
		}
	}
	for _, m := range ms {
		if version >= m.version {
			continue
		}
		if _, err := tx.Exec(ctx, m.sql); err != nil {
			return fmt.Errorf("applying schema migration %s: %w", m.name, err)
		}
		if _, err := tx.Exec(ctx, `UPDATE assay_schema SET version = $1`, m.version); err != nil {
			return fmt.Errorf("applying schema migration %s: %w", m.name, err)
		}
	}
	if err := tx.Commit(ctx); err != nil {
		return fmt.Errorf("applying schema migrations: %w", err)
	}
	return nil
}

// checkVersion returns the store's schema version, refusing one newer than
// latest and a schema that holds other tables but no assay store.
func checkVersion(ctx context.Context, tx pgx.Tx, latest int) (int, error) {
	var exists bool
	if err := tx.QueryRow(ctx, `SELECT to_regclass('assay_schema') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, fmt.Errorf("reading the store's schema: %w", err)
	}
	if !exists {
		// Tables of another program in this schema (River's job tables,
		// which share the store's schema, are ours).
		var others int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM pg_tables WHERE schemaname = current_schema() AND tablename NOT LIKE 'river\_%'`).Scan(&others); err != nil {
			return 0, fmt.Errorf("reading the store's schema: %w", err)
		}
		if others > 0 {
			return 0, fmt.Errorf("%w: schema %s of the database holds %d tables of another program; give assay an empty database or schema (?search_path=NAME)", ErrNotAssay, currentSchema(ctx, tx), others)
		}
		return 0, nil
	}
	var v int
	if err := tx.QueryRow(ctx, `SELECT version FROM assay_schema`).Scan(&v); err != nil {
		return 0, fmt.Errorf("reading the store's schema version: %w", err)
	}
	if v > latest {
		return 0, fmt.Errorf("%w: the store has schema version %d and this assay knows versions up to %d; upgrade assay to use this store", ErrNewerSchema, v, latest)
	}
	return v, nil
}

func currentSchema(ctx context.Context, tx pgx.Tx) string {
	var s string
	if err := tx.QueryRow(ctx, `SELECT current_schema()`).Scan(&s); err != nil {
		return "(unknown)"
	}
	return s
}
