// Package sqlite is the embedded default store.Store: one SQLite file in WAL
// mode through modernc.org/sqlite (pure Go, no cgo). It owns the schema and
// its migrations (embedded in the binary). Of assay's packages it imports
// only internal/store: never providers, scorers, the runner or the CLI.
//
// # Connections
//
// A DB holds two pools on the same file. Every write goes through the write
// pool, which has exactly one connection: writers queue in database/sql
// instead of spinning on SQLITE_BUSY, and each write transaction starts with
// BEGIN IMMEDIATE so it takes the write lock up front (a deferred transaction
// that upgrades from read to write can fail with SQLITE_BUSY without waiting).
// Reads go through a separate pool of read-only connections; under WAL they
// run concurrently with the writer and each sees a consistent snapshot. So a
// caller may write from inside a streaming callback (rescore streams results
// and stores scores) without deadlocking. busy_timeout covers the remaining
// contention: other processes on the same file, and checkpoints.
//
// # Durability
//
// The database runs in WAL mode with synchronous=NORMAL. A commit appends the
// transaction's pages and a commit record to the -wal file with write(2),
// and returns; the WAL is fsynced only when it is checkpointed into the main
// file. Bytes handed to write(2) are in the kernel's page cache the moment
// the call returns, and the kernel keeps them when the process dies, however
// it dies: kill -9, a panic, an OOM kill. On the next open SQLite replays
// every WAL frame up to the last valid commit record, so a transaction whose
// COMMIT returned is never lost to the death of the process, and one cut off
// mid-write is discarded whole. Only a crash of the operating system or a
// power loss can lose the most recent commits (never corrupt the file);
// synchronous=FULL would close that window at the price of an fsync per
// commit, which a re-runnable evaluation does not need. TestKillDurability
// checks this with a real SIGKILL.
//
// # Encoding
//
// Times are stored as microseconds since the Unix epoch (the precision of a
// Postgres timestamptz) and come back in UTC; the zero time is NULL and
// comes back as the zero time. Strings are stored byte for byte, so output
// that is not valid UTF-8 survives. Float fields must not be NaN (SQLite
// cannot store it); a NaN is rejected with the field's name.
//
// # Order
//
// Cases, results and scores stream in dataset order: by the case's line in
// the run's cases table, then case ID, then target, then epoch (then scorer).
// Results of case IDs the cases table does not know come after all others,
// ordered by case ID. Line order is what a reader of the dataset expects,
// and it keeps every result of a case together, which pairing by case needs.
package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	// The pure-Go SQLite driver, registered as "sqlite".
	_ "modernc.org/sqlite"

	"github.com/assay-eval/assay/internal/store"
)

// busyTimeoutMS is how long a statement waits for a lock held by another
// process (or a checkpoint) before failing with SQLITE_BUSY.
const busyTimeoutMS = 10_000

// The writer connection's page cache (KiB) and how many pages the WAL
// grows to before the writer checkpoints it into the database file.
const (
	writerCacheKiB        = 32 << 10
	writerCheckpointPages = 8192
)

// DB is a store.Store in one SQLite file. It is safe for concurrent use.
type DB struct {
	path string
	w    *sql.DB // exactly one connection; every write
	r    *sql.DB // read-only connections; every read
	// now stamps what the store records with a time of its own: a
	// scoring's reservation and a cache entry (every other time is the
	// caller's, in the record it stores).
	now func() time.Time
}

// Option configures Open and OpenExisting.
type Option func(*DB)

// WithClock makes the store read the time from now (the process's one
// clock, cli's Globals.Now) instead of time.Now.
func WithClock(now func() time.Time) Option {
	return func(d *DB) {
		if now != nil {
			d.now = now
		}
	}
}

func newDB(path string, w, r *sql.DB, opts []Option) *DB {
	d := &DB{path: path, w: w, r: r, now: time.Now}
	for _, o := range opts {
		o(d)
	}
	return d
}

var _ store.Store = (*DB)(nil)

// Open opens the store at path, creating the file and its parent directories
// if needed, and brings its schema up to date. It refuses a file written by a
// newer assay (ErrNewerSchema) and an SQLite file that is not an assay store
// (ErrNotAssay). The caller decides the path (assay's default is
// ./.assay/assay.db); ":memory:" is refused, as the read and write pools must
// share one file.
func Open(ctx context.Context, path string, opts ...Option) (*DB, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("store path %q: give the path of a database file (assay's default is ./.assay/assay.db)", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("resolving store path %q: %w", path, err)
	}
	if err := os.MkdirAll(filepath.Dir(abs), 0o755); err != nil {
		return nil, fmt.Errorf("creating the store's directory: %w", err)
	}
	if fi, err := os.Stat(abs); err == nil && fi.IsDir() {
		return nil, fmt.Errorf("store path %s is a directory: give the path of a database file inside it, e.g. %s", abs, filepath.Join(abs, "assay.db"))
	}

	w, err := sql.Open("sqlite", dsn(abs, true))
	if err != nil {
		return nil, err
	}
	w.SetMaxOpenConns(1)
	w.SetMaxIdleConns(1)
	w.SetConnMaxIdleTime(0)
	w.SetConnMaxLifetime(0)
	d := newDB(abs, w, nil, opts)

	if err := d.init(ctx); err != nil {
		_ = w.Close()
		return nil, err
	}

	// The read pool opens after the writer has put the file in WAL mode.
	r, err := sql.Open("sqlite", dsn(abs, false))
	if err != nil {
		_ = w.Close()
		return nil, err
	}
	// Unbounded, so a read nested in a streaming callback never waits for a
	// connection its own caller holds; idle readers beyond a few are closed.
	r.SetMaxIdleConns(4)
	d.r = r
	if err := r.PingContext(ctx); err != nil {
		_ = d.Close()
		return nil, fmt.Errorf("opening a read connection: %w", err)
	}
	return d, nil
}

// init checks the writer connection's journal mode and applies migrations.
func (d *DB) init(ctx context.Context) error {
	var mode string
	if err := d.w.QueryRowContext(ctx, "PRAGMA journal_mode").Scan(&mode); err != nil {
		return fmt.Errorf("opening the database: %w", err)
	}
	if !strings.EqualFold(mode, "wal") {
		// Some file systems (network mounts) cannot hold a WAL.
		return fmt.Errorf("the database is in %s journal mode and could not be switched to WAL; keep the store on a local file system", mode)
	}
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return err
	}
	return migrate(ctx, d.w, ms)
}

// dsn is the modernc.org/sqlite data source name for the file at abs.
func dsn(abs string, writer bool) string {
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p // Windows: file:/C:/...
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	q.Add("_pragma", "foreign_keys(1)")
	q.Add("_pragma", "synchronous(NORMAL)")
	if writer {
		q.Set("_journal_mode", "WAL")
		q.Set("_txlock", "immediate")
		// Bulk writes (a collector storing traces by the thousand a
		// second) touch pages all over the trace ID index: a larger page
		// cache reads fewer of them back, and a checkpoint every
		// writerCheckpointPages (not SQLite's 1,000) syncs an eighth as
		// often and writes a page changed by several commits once
		// (bench/RESULTS.md, "Traces store": +10% per CPU second).
		q.Add("_pragma", fmt.Sprintf("cache_size(-%d)", writerCacheKiB))
		q.Add("_pragma", fmt.Sprintf("wal_autocheckpoint(%d)", writerCheckpointPages))
	} else {
		q.Add("_pragma", "query_only(1)")
	}
	// A file: URI, so that '?' and '#' in the path are escaped, not parsed.
	return "file:" + (&url.URL{Path: p}).EscapedPath() + "?" + q.Encode()
}

// Path is the absolute path of the database file.
func (d *DB) Path() string { return d.path }

// Close closes the store. The writer closes last, so the final connection
// checkpoints the WAL into the main file.
func (d *DB) Close() error {
	var errs []error
	if d.r != nil && d.r != d.w { // a read-only store has one pool
		errs = append(errs, d.r.Close())
	}
	errs = append(errs, d.w.Close())
	return errors.Join(errs...)
}
