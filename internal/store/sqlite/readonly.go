package sqlite

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"strings"
)

// ErrNoStore is returned by OpenExisting when there is no store at the path.
var ErrNoStore = errors.New("no store here")

// OpenExisting opens a store that must already exist, for commands that
// only read (report, gate, export, diff, drift): it never creates a file or
// a directory. A store it may write (file and directory writable) opens as
// Open opens it, schema upgrades included. One it may not — a read-only
// mount, a CI cache, a file owned by someone else — opens read-only; when
// the directory is not writable either, SQLite cannot create the -shm file a
// WAL reader needs, so the file is opened immutable: nothing may write it
// meanwhile. A read-only store of an older schema cannot be upgraded, and
// the error says so.
func OpenExisting(ctx context.Context, path string, opts ...Option) (*DB, error) {
	return openExisting(ctx, path, writable, opts...)
}

// openExisting is OpenExisting with the writability check given (tests
// stand in for a read-only mount, which root cannot otherwise be shown).
func openExisting(ctx context.Context, path string, writable func(string) bool, opts ...Option) (*DB, error) {
	if path == "" || path == ":memory:" || strings.HasPrefix(path, "file:") {
		return nil, fmt.Errorf("store path %q: give the path of a database file (assay's default is ./.assay/assay.db)", path)
	}
	abs, err := filepath.Abs(path)
	if err != nil {
		return nil, fmt.Errorf("resolving store path %q: %w", path, err)
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, fmt.Errorf("%w: %s does not exist; run assay run SPEC in this directory first, or name the store with --db PATH (or ASSAY_DB)", ErrNoStore, abs)
	case err != nil:
		return nil, fmt.Errorf("opening store %s: %w", abs, err)
	case fi.IsDir():
		return nil, fmt.Errorf("store path %s is a directory: give the path of a database file inside it, e.g. %s", abs, filepath.Join(abs, "assay.db"))
	}
	fileW, dirW := writable(abs), writable(filepath.Dir(abs))
	if fileW && dirW {
		return Open(ctx, abs, opts...)
	}

	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", busyTimeoutMS))
	q.Add("_pragma", "query_only(1)")
	q.Set("mode", "ro")
	how := "read-only"
	if !dirW || !sidecarsExist(abs) {
		// Without a writable directory (or the -wal and -shm files a
		// read-only WAL reader can use), only an immutable open reads it.
		q.Set("immutable", "1")
		how = "read-only (immutable)"
	}
	p := filepath.ToSlash(abs)
	if !strings.HasPrefix(p, "/") {
		p = "/" + p
	}
	r, err := sql.Open("sqlite", "file:"+(&url.URL{Path: p}).EscapedPath()+"?"+q.Encode())
	if err != nil {
		return nil, err
	}
	r.SetMaxIdleConns(4)
	fail := func(err error) (*DB, error) {
		_ = r.Close()
		return nil, fmt.Errorf("opening store %s %s (it is not writable): %w", abs, how, err)
	}
	ms, err := loadMigrations(migrationFiles)
	if err != nil {
		return fail(err)
	}
	latest := ms[len(ms)-1].version
	tx, err := r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return fail(err)
	}
	version, err := checkVersion(ctx, tx, latest)
	_ = tx.Rollback()
	if err != nil {
		return fail(err)
	}
	if version < latest {
		return fail(fmt.Errorf("its schema is version %d and this assay reads version %d; open it once where it is writable (any assay command upgrades it), or use the assay that wrote it", version, latest))
	}
	// Every read goes through r; a write fails with SQLite's read-only error.
	return newDB(abs, r, r, opts), nil
}

// writable reports whether this process may write path (a file or a
// directory), without writing anything.
func writable(path string) bool {
	return accessW(path) == nil
}

// sidecarsExist reports whether the WAL's -wal and -shm files are there.
func sidecarsExist(abs string) bool {
	for _, s := range []string{"-wal", "-shm"} {
		if _, err := os.Stat(abs + s); err != nil {
			return false
		}
	}
	return true
}
