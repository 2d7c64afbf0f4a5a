package sqlite

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"sort"
	"strconv"
	"strings"
)

// migrationFiles holds the schema migrations, one file per version, named
// NNNN_what.sql and numbered from 0001 without gaps. A released migration is
// never edited; a change to the schema is a new file.
//
//go:embed migrations/*.sql
var migrationFiles embed.FS

// applicationID marks an SQLite file as an assay store (PRAGMA
// application_id; "ASSY"), so assay never migrates someone else's database.
const applicationID = 0x41535359

var (
	// ErrNewerSchema is returned by Open for a store written by a newer assay.
	ErrNewerSchema = errors.New("store schema is newer than this assay")
	// ErrNotAssay is returned by Open for an SQLite file that is not an assay store.
	ErrNotAssay = errors.New("not an assay store")
)

type migration struct {
	version int
	name    string
	sql     string
}

// loadMigrations reads migrations/*.sql from fsys in version order.
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
		b, err := fs.ReadFile(fsys, name)
		if err != nil {
			return nil, err
		}
		ms = append(ms, migration{version: v, name: base, sql: string(b)})
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

// migrate brings the database on db (the single-connection write pool) up to
// the last of ms, in one IMMEDIATE transaction: two processes opening a new
// file at once apply the migrations once (the second waits for the write
// lock, then sees the version). Each migration runs in its own savepoint,
// which also sets PRAGMA user_version to the migration's version, so a
// migration is applied whole or not at all: when one fails, it is rolled
// back and those before it are kept.
func migrate(ctx context.Context, db *sql.DB, ms []migration) (err error) {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("opening the database: %w", err)
	}
	defer func() {
		if err != nil {
			_ = tx.Rollback()
		}
	}()
	version, err := checkVersion(ctx, tx, ms[len(ms)-1].version)
	if err != nil {
		return err
	}
	for _, m := range ms {
		if version >= m.version {
			continue
		}
		if ferr := migrateOne(ctx, tx, m); ferr != nil {
			// Keep the migrations before the one that failed.
			if err := tx.Commit(); err != nil {
				return fmt.Errorf("%w (and committing the migrations before it: %v)", ferr, err)
			}
			return ferr
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("applying schema migrations: %w", err)
	}
	return nil
}

// migrateOne applies m inside tx in a savepoint, rolled back when m fails.
func migrateOne(ctx context.Context, tx *sql.Tx, m migration) error {
	if _, err := tx.ExecContext(ctx, "SAVEPOINT migration"); err != nil {
		return fmt.Errorf("applying schema migration %s: %w", m.name, err)
	}
	_, err := tx.ExecContext(ctx, m.sql)
	if err == nil {
		// PRAGMA arguments cannot be bound; both values are integers from code.
		_, err = tx.ExecContext(ctx, fmt.Sprintf("PRAGMA application_id = %d; PRAGMA user_version = %d", applicationID, m.version))
	}
	if err != nil {
		if _, rerr := tx.ExecContext(ctx, "ROLLBACK TO migration; RELEASE migration"); rerr != nil {
			return fmt.Errorf("applying schema migration %s: %w (and rolling it back: %v)", m.name, err, rerr)
		}
		return fmt.Errorf("applying schema migration %s: %w", m.name, err)
	}
	if _, err := tx.ExecContext(ctx, "RELEASE migration"); err != nil {
		return fmt.Errorf("applying schema migration %s: %w", m.name, err)
	}
	return nil
}

// checkVersion returns the schema version of the database, refusing one that
// is not an assay store or is newer than latest.
func checkVersion(ctx context.Context, tx *sql.Tx, latest int) (int, error) {
	var appID, version int
	if err := tx.QueryRowContext(ctx, "PRAGMA application_id").Scan(&appID); err != nil {
		return 0, fmt.Errorf("reading the database header: %w", err)
	}
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&version); err != nil {
		return 0, fmt.Errorf("reading the database header: %w", err)
	}
	if appID != applicationID {
		var objects int
		if err := tx.QueryRowContext(ctx, "SELECT count(*) FROM sqlite_schema").Scan(&objects); err != nil {
			return 0, fmt.Errorf("reading the database schema: %w", err)
		}
		if appID != 0 || version != 0 || objects != 0 {
			return 0, fmt.Errorf("%w: the file is an SQLite database of another program (application_id %#x, %d schema objects); give assay a new path", ErrNotAssay, appID, objects)
		}
		return 0, nil // a new, empty file
	}
	if version > latest {
		return 0, fmt.Errorf("%w: the store has schema version %d and this assay knows versions up to %d; upgrade assay to use this store", ErrNewerSchema, version, latest)
	}
	return version, nil
}

// SchemaVersion is the schema version this binary creates and reads.
func SchemaVersion() int {
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return 0
	}
	return ms[len(ms)-1].version
}
