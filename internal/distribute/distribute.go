// Package distribute runs a run's units on many machines: `assay run
// --distributed` records the run and its cases through the engine (Start
// or Resume, under the run's lease), enqueues its missing units as River
// jobs in the store's PostgreSQL database (small batches: one target,
// a few cases, every epoch), waits until they drain and lets the engine
// finish the run (pairwise judges, status); `assay worker`, on any
// machine, is a River client whose job handler executes a job's units
// through the engine (engine.OpenUnits: the same runner, scorers and
// duplicate-free PutResults as a local run), skipping the units already
// stored, so a retried job never pays for a stored unit twice.
//
// It owns the queue's side of the database: River's tables (migrated by
// rivermigrate in the store's schema), the job arguments, a sweep that
// hands the jobs of a killed worker to the others, and the limiter that
// holds a target's concurrency, RPM and TPM across every worker together
// (limiter.go: a token bucket row per run × target updated in one
// statement, and slot rows). It needs the PostgreSQL store (store/postgres)
// and must not import cli, report or serve.
package distribute

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"
)

// JobKind is the River kind of a batch of units.
const JobKind = "assay_units"

// tables are the limiter's, beside the store's in its schema; the index
// finds a run's jobs (drain, cancel) without scanning every job (queries
// name the kind as a literal, so that a prepared statement's generic plan
// can use it).
const tables = `
CREATE TABLE IF NOT EXISTS assay_limit_buckets (
	run_id TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	target BYTEA NOT NULL,
	kind   TEXT NOT NULL,
	-- the theoretical arrival time (GCRA), seconds since the epoch on the
	-- database's clock: when the bucket is next empty
	tat    DOUBLE PRECISION NOT NULL,
	PRIMARY KEY (run_id, target, kind)
);
CREATE TABLE IF NOT EXISTS assay_limit_slots (
	run_id  TEXT NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
	target  BYTEA NOT NULL,
	slot    INTEGER NOT NULL,
	holder  TEXT,
	-- a held slot whose holder stopped renewing it is free after this
	expires DOUBLE PRECISION,
	PRIMARY KEY (run_id, target, slot)
);
CREATE INDEX IF NOT EXISTS assay_river_job_run ON river_job ((args->>'run')) WHERE kind = 'assay_units';
`

// Setup brings the queue's tables up to date in the pool's current schema
// (the store's): River's migrations, then the limiter's tables. Several
// processes may call it at once: an advisory lock takes them in turn.
// It returns the schema's name, which River's clients are given.
func Setup(ctx context.Context, pool *pgxpool.Pool) (schema string, err error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return "", err
	}
	defer conn.Release()
	if err := conn.QueryRow(ctx, `SELECT current_schema()`).Scan(&schema); err != nil {
		return "", fmt.Errorf("reading the store's schema: %w", err)
	}
	if _, err := conn.Exec(ctx, `SELECT pg_advisory_lock(hashtext('assay distribute setup ' || current_schema()))`); err != nil {
		return "", err
	}
	defer func() {
		_, _ = conn.Exec(context.WithoutCancel(ctx), `SELECT pg_advisory_unlock(hashtext('assay distribute setup ' || current_schema()))`)
	}()
	m, err := rivermigrate.New(riverpgxv5.New(pool), &rivermigrate.Config{Schema: schema})
	if err != nil {
		return "", err
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return "", fmt.Errorf("migrating the job queue (River) in schema %s: %w", schema, err)
	}
	if _, err := conn.Exec(ctx, tables); err != nil {
		return "", fmt.Errorf("creating the limiter's tables: %w", err)
	}
	return schema, nil
}
