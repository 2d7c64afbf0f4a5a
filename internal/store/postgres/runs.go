package postgres

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

const runColumns = `id, spec, spec_path, spec_hash, dataset_hash, prompt_hash, git_commit,
	targets, cases, epochs, status, started, ended, config,
	scorers_hash, assay_version, experiment, host, file_hash, sample, kind`

// newestFirst orders runs as SQLite's "started DESC, rowid DESC" does: a
// run without a start time (NULL) last, and of runs that started in the
// same microsecond the one created last (seq) first.
const newestFirst = `ORDER BY started DESC NULLS LAST, seq DESC`

// ambiguousShown is how many matching runs an ambiguous-prefix error lists.
const ambiguousShown = 5

// CreateRun stores a new run. Its ID (made by the caller, see
// record.NewRunID) must not be in use.
func (d *DB) CreateRun(ctx context.Context, r *record.Run) error {
	if r.ID == "" {
		return errors.New("creating run: the run has no ID")
	}
	targets, err := json.Marshal(r.Targets)
	if err != nil {
		return fmt.Errorf("creating run %s: %w", r.ID, err)
	}
	return d.write(ctx, "creating run "+r.ID, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `INSERT INTO runs (`+runColumns+`)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16, $17, $18, $19, $20, $21)`,
			r.ID, b(r.Spec), b(r.SpecPath), r.SpecHash, r.DatasetHash, r.PromptHash, r.GitCommit,
			targets, r.Cases, r.Epochs, r.Status, micros(r.Started), micros(r.Ended), r.Config,
			r.ScorersHash, r.AssayVersion, b(r.Experiment), b(r.Host), r.FileHash, r.Sample, r.Kind)
		return err
	})
}

// UpdateRun sets the run's status, end time, cases, targets and epochs; its
// other fields are fixed when it is created.
func (d *DB) UpdateRun(ctx context.Context, r *record.Run) error {
	targets, err := json.Marshal(r.Targets)
	if err != nil {
		return fmt.Errorf("updating run %s: %w", r.ID, err)
	}
	return d.write(ctx, "updating run "+r.ID, func(tx pgx.Tx) error {
		tag, err := tx.Exec(ctx, `UPDATE runs SET status = $1, ended = $2, cases = $3, targets = $4, epochs = $5, host = $6
			WHERE id = $7`, r.Status, micros(r.Ended), r.Cases, targets, r.Epochs, b(r.Host), r.ID)
		if err != nil {
			return err
		}
		if tag.RowsAffected() == 0 {
			return store.ErrNotFound
		}
		return nil
	})
}

// GetRun returns the run with this ID; "latest" is the run that started
// last (of runs that started in the same microsecond, the one created last).
// An ID that names no run but is a prefix of exactly one run's ID names that
// run; a prefix of several is an error wrapping store.ErrAmbiguousID. Prefixes
// are matched byte for byte (case-sensitive, no wildcards). When no run
// matches, the error wraps store.ErrNotFound.
func (d *DB) GetRun(ctx context.Context, id string) (*record.Run, error) {
	if id == "" {
		return nil, errors.New(`no run ID given: give a run ID, a unique prefix of one, or "latest"`)
	}
	if id == "latest" {
		r, err := scanRun(d.pool.QueryRow(ctx, `SELECT `+runColumns+` FROM runs `+newestFirst+` LIMIT 1`))
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, fmt.Errorf("latest run: %w (the store has no runs yet)", store.ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("reading the latest run: %w", err)
		}
		return r, nil
	}
	if !storableID(id) {
		return nil, fmt.Errorf("run %q: %w", id, store.ErrNotFound)
	}
	r, err := scanRun(d.pool.QueryRow(ctx, `SELECT `+runColumns+` FROM runs WHERE id = $1`, id))
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("reading run %s: %w", id, err)
	}
	// starts_with compares bytes: no LIKE wildcards, no case folding;
	// COLLATE "C" lists the matches in byte order, as SQLite does.
	matches, err := d.queryRuns(ctx, `SELECT `+runColumns+` FROM runs WHERE starts_with(id, $1) ORDER BY id COLLATE "C" LIMIT $2`, id, ambiguousShown+1)
	if err != nil {
		return nil, fmt.Errorf("reading run %s: %w", id, err)
	}
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("run %q: %w", id, store.ErrNotFound)
	case 1:
		return &matches[0], nil
	}
	var ids []string
	for i, m := range matches {
		if i == ambiguousShown {
			ids = append(ids, "…")
			break
		}
		ids = append(ids, m.ID)
	}
	return nil, fmt.Errorf("run %q: %w: it begins the IDs of several runs (%s); give more of the ID",
		id, store.ErrAmbiguousID, strings.Join(ids, ", "))
}

// ListRuns returns up to limit runs, newest first (limit <= 0: all).
func (d *DB) ListRuns(ctx context.Context, limit int) ([]record.Run, error) {
	var lim *int64 // NULL: no limit
	if limit > 0 {
		n := int64(limit)
		lim = &n
	}
	runs, err := d.queryRuns(ctx, `SELECT `+runColumns+` FROM runs `+newestFirst+` LIMIT $1`, lim)
	if err != nil {
		return nil, fmt.Errorf("listing runs: %w", err)
	}
	return runs, nil
}

// ExperimentRuns returns the runs of an experiment, oldest first.
func (d *DB) ExperimentRuns(ctx context.Context, experiment string) ([]record.Run, error) {
	runs, err := d.queryRuns(ctx, `SELECT `+runColumns+` FROM runs WHERE experiment = $1 ORDER BY started NULLS FIRST, seq`, b(experiment))
	if err != nil {
		return nil, fmt.Errorf("listing the runs of experiment %q: %w", experiment, err)
	}
	return runs, nil
}

func (d *DB) queryRuns(ctx context.Context, q string, args ...any) ([]record.Run, error) {
	rows, err := d.pool.Query(ctx, q, args...)
	if err != nil {
		return nil, err
	}
	var runs []record.Run
	err = each(ctx, rows, func() error {
		r, err := scanRun(rows)
		if err != nil {
			return err
		}
		runs = append(runs, *r)
		return nil
	})
	return runs, err
}

// storableID reports whether id can be a stored run's ID: run IDs are
// TEXT, which holds valid UTF-8 without NUL bytes, so an ID typed by a
// user that is not names no run (PostgreSQL would refuse the query).
func storableID(id string) bool {
	return utf8.ValidString(id) && !strings.ContainsRune(id, 0)
}

// scanRun reads a row of runColumns.
func scanRun(s scanner) (*record.Run, error) {
	var r record.Run
	var targets []byte
	var started, ended *int64
	if err := s.Scan(&r.ID, bstr{&r.Spec}, bstr{&r.SpecPath}, &r.SpecHash, &r.DatasetHash, &r.PromptHash, &r.GitCommit,
		&targets, &r.Cases, &r.Epochs, &r.Status, &started, &ended, &r.Config,
		&r.ScorersHash, &r.AssayVersion, bstr{&r.Experiment}, bstr{&r.Host}, &r.FileHash, &r.Sample, &r.Kind); err != nil {
		return nil, err
	}
	if err := json.Unmarshal(targets, &r.Targets); err != nil {
		return nil, fmt.Errorf("run %s: targets %q are not a JSON array: %w", r.ID, targets, err)
	}
	r.Started = fromMicros(started)
	r.Ended = fromMicros(ended)
	return &r, nil
}
