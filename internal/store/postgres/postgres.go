// Package postgres is the team's store.Store: one PostgreSQL database
// shared by everyone who runs evaluations, CI jobs and distributed workers,
// through jackc/pgx/v5's connection pool. It owns the PostgreSQL schema and
// its migrations (embedded in the binary) and passes the same storetest
// conformance suite as the SQLite store. Like sqlite, it imports only
// internal/store and internal/record.
//
// # Connections and transactions
//
// A DB holds one pgxpool.Pool. Every write runs in a SERIALIZABLE
// transaction, retried from the start when PostgreSQL reports a
// serialization failure or a deadlock: what the SQLite store gets from its
// single writer (reserving a scoring number, taking a lease, storing a
// result at most once) holds here for writers on many machines at once.
// Every multi-query read runs in one REPEATABLE READ READ ONLY transaction,
// so it sees one snapshot. A streaming read holds its own connection, so a
// caller may write from inside its callback.
//
// # Encoding
//
// As in the SQLite store: strings from outside are BYTEA (byte for byte,
// invalid UTF-8 and NUL included, ordered bytewise); times are BIGINT
// microseconds since the Unix epoch and come back in UTC, the zero time as
// NULL. Stored rows sort, stream and round-trip exactly as SQLite's do, so
// `assay store copy` between the two moves a run without changing a byte
// of its report.
//
// # Schemas
//
// The store lives in the connection's current schema (search_path, which a
// URL sets with ?search_path=NAME), so one database can hold several stores
// side by side, as the tests do.
package postgres

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/assay-eval/assay/internal/store"
)

// maxConns bounds the pool: a streaming read and the write inside its
// callback each hold one, and the runner writes from one batched writer.
const maxConns = 16

// DB is a store.Store in one PostgreSQL database (schema). It is safe for
// concurrent use, by many processes on many machines.
type DB struct {
	pool *pgxpool.Pool
	url  string // with any password removed, for messages
	now  func() time.Time
}

var _ store.Store = (*DB)(nil)

// Option configures Open and OpenExisting.
type Option func(*DB)

// WithClock makes the store read the time from now (the process's one
// clock) instead of time.Now.
func WithClock(now func() time.Time) Option {
	return func(d *DB) {
		if now != nil {
			d.now = now
		}
	}
}

// IsURL reports whether s names a PostgreSQL store (postgres:// or
// postgresql://) rather than an SQLite file.
func IsURL(s string) bool {
	return strings.HasPrefix(s, "postgres://") || strings.HasPrefix(s, "postgresql://")
}

// Redact is url with its password replaced by "xxxxx", for messages and
// records: a password must never reach a log, an error or a report.
//
// The URL is rewritten as net/url reads it; pgx reads URLs with a parser
// of its own, so when the password pgx would connect with still shows in
// any form (a malformed URL the two read apart), the store is named from
// what pgx parsed instead: user, host, port and database.
func Redact(raw string) string {
	out := redactURL(raw)
	cfg, err := pgconn.ParseConfig(raw)
	if err != nil || cfg.Password == "" || !showsSecret(out, cfg.Password) || !urlHolds(raw, cfg.Password) {
		return out
	}
	u := url.URL{Scheme: "postgres", Host: net.JoinHostPort(cfg.Host, strconv.Itoa(int(cfg.Port))), Path: "/" + cfg.Database}
	if cfg.User != "" {
		u.User = url.UserPassword(cfg.User, "xxxxx")
	}
	return u.String()
}

// urlHolds reports whether the password pgx reads for raw is written in
// raw rather than taken from PGPASSWORD or ~/.pgpass (a dev password such
// as "postgres" may also be the database's name): with every occurrence of
// it replaced, pgx no longer reads it (or cannot parse the URL at all).
func urlHolds(raw, password string) bool {
	marked := raw
	for _, form := range []string{password, url.QueryEscape(password), url.PathEscape(password)} {
		marked = strings.ReplaceAll(marked, form, "assayredacted")
	}
	cfg, err := pgconn.ParseConfig(marked)
	return err != nil || cfg.Password != password
}

// showsSecret reports whether s holds secret as written or URL-escaped.
func showsSecret(s, secret string) bool {
	return strings.Contains(s, secret) || strings.Contains(s, url.QueryEscape(secret)) || strings.Contains(s, url.PathEscape(secret))
}

// redactURL is raw with the password of its user info and its password
// parameter replaced, as net/url reads it.
func redactURL(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "postgres://(unparsable URL)"
	}
	if _, ok := u.User.Password(); ok {
		u.User = url.UserPassword(u.User.Username(), "xxxxx")
	}
	q := u.Query()
	if q.Has("password") {
		q.Set("password", "xxxxx")
		u.RawQuery = q.Encode()
	}
	return u.String()
}

// Open connects to the PostgreSQL database at rawURL and brings the assay
// schema in its current schema up to date (creating it in an empty one).
// It refuses a database whose schema is newer than this assay
// (ErrNewerSchema) and one whose schema holds tables of another program
// (ErrNotAssay).
func Open(ctx context.Context, rawURL string, opts ...Option) (*DB, error) {
	d, err := connect(ctx, rawURL, opts)
	if err != nil {
		return nil, err
	}
	if err := d.migrate(ctx); err != nil {
		d.pool.Close()
		return nil, err
	}
	return d, nil
}

// ErrNoStore is returned by OpenExisting when the database holds no assay
// store.
var ErrNoStore = errors.New("no store here")

// OpenExisting opens a store that must already exist, for commands that
// only read: it never creates the schema. An older schema is upgraded as
// Open does.
func OpenExisting(ctx context.Context, rawURL string, opts ...Option) (*DB, error) {
	d, err := connect(ctx, rawURL, opts)
	if err != nil {
		return nil, err
	}
	v, err := d.schemaVersion(ctx)
	if err == nil && v == 0 {
		err = fmt.Errorf("%w: the database %s has no assay store in its schema; run assay run SPEC --db %s first", ErrNoStore, d.url, d.url)
	}
	if err == nil {
		err = d.migrate(ctx)
	}
	if err != nil {
		d.pool.Close()
		return nil, err
	}
	return d, nil
}

func connect(ctx context.Context, rawURL string, opts []Option) (*DB, error) {
	safe := Redact(rawURL)
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		// pgx's message may quote the URL, password included.
		return nil, fmt.Errorf("store URL %s: not a PostgreSQL connection URL (postgres://USER@HOST:PORT/DATABASE?sslmode=disable)", safe)
	}
	if cfg.MaxConns < maxConns {
		cfg.MaxConns = maxConns
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connecting to %s: %w", safe, scrub(err, rawURL))
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connecting to %s: %w", safe, scrub(err, rawURL))
	}
	d := &DB{pool: pool, url: safe, now: time.Now}
	for _, o := range opts {
		o(d)
	}
	return d, nil
}

// scrub drops err's text when it quotes the URL's password.
func scrub(err error, rawURL string) error {
	u, perr := url.Parse(rawURL)
	if perr != nil {
		return errors.New("connection failed")
	}
	if pw, ok := u.User.Password(); ok && pw != "" && strings.Contains(err.Error(), pw) {
		return errors.New("connection failed (the server's message quoted the password and is not shown)")
	}
	return err
}

// URL is the store's connection URL with any password removed.
func (d *DB) URL() string { return d.url }

// Pool is the connection pool, for the job queue (River) that shares the
// store's database.
func (d *DB) Pool() *pgxpool.Pool { return d.pool }

// Close closes the pool.
func (d *DB) Close() error {
	d.pool.Close()
	return nil
}

// write runs fn in a SERIALIZABLE transaction, retrying it from the start
// (with a short, growing pause) on a serialization failure or a deadlock;
// fn must therefore have no effect outside the transaction. Errors are
// prefixed with what.
func (d *DB) write(ctx context.Context, what string, fn func(pgx.Tx) error) error {
	var err error
	for attempt := 0; ; attempt++ {
		err = d.tryWrite(ctx, fn)
		if err == nil {
			return nil
		}
		if !retryable(err) || attempt >= 50 || ctx.Err() != nil {
			return fmt.Errorf("%s: %w", what, err)
		}
		pause := time.Duration(1+min(attempt, 20)) * time.Millisecond
		t := time.NewTimer(pause)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%s: %w", what, ctx.Err())
		case <-t.C:
		}
	}
}

func (d *DB) tryWrite(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.Serializable})
	if err != nil {
		return err
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback(context.WithoutCancel(ctx))
		return err
	}
	return tx.Commit(ctx)
}

// retryable reports whether err is a serialization failure or a deadlock,
// after which the whole transaction may be run again.
func retryable(err error) bool {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code == "40001" || pe.Code == "40P01"
	}
	return false
}

// read runs fn in a REPEATABLE READ READ ONLY transaction: every query in
// it sees one snapshot.
func (d *DB) read(ctx context.Context, fn func(pgx.Tx) error) error {
	tx, err := d.pool.BeginTx(ctx, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback(context.WithoutCancel(ctx)) }()
	return fn(tx)
}

// micros encodes a time for a BIGINT column: microseconds since the Unix
// epoch (truncated, as the SQLite store does), nil for the zero time.
func micros(t time.Time) any {
	if t.IsZero() {
		return nil
	}
	return t.UnixMicro()
}

// fromMicros decodes micros' encoding: UTC, the zero time for NULL.
func fromMicros(n *int64) time.Time {
	if n == nil {
		return time.Time{}
	}
	return time.UnixMicro(*n).UTC()
}

// b encodes a string for a BYTEA column, byte for byte (never nil, so a
// NOT NULL column takes the empty string).
func b(s string) []byte {
	if s == "" {
		return []byte{}
	}
	return []byte(s)
}
