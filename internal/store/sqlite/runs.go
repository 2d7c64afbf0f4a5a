package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

const runColumns = `id, spec, spec_path, spec_hash, dataset_hash, prompt_hash, git_commit,
	targets, cases, epochs, status, started, ended, config,
	scorers_hash, assay_version, experiment, host, file_hash, sample, kind`

// latestRun selects the run that started last; of runs that started in the
// same microsecond, the one created last (highest rowid).
const latestRun = `SELECT ` + runColumns + ` FROM runs ORDER BY started DESC, rowid DESC LIMIT 1`

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
	_, err = d.w.ExecContext(ctx, `INSERT INTO runs (`+runColumns+`)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		r.ID, r.Spec, r.SpecPath, r.SpecHash, r.DatasetHash, r.PromptHash, r.GitCommit,
		string(targets), r.Cases, r.Epochs, r.Status, micros(r.Started), micros(r.Ended), r.Config,
		r.ScorersHash, r.AssayVersion, r.Experiment, r.Host, r.FileHash, r.Sample, r.Kind)
	if err != nil {
		return fmt.Errorf("creating run %s: %w", r.ID, err)
	}
	return nil
}

// UpdateRun sets the run's status, end time, cases, targets and epochs; its
// other fields are fixed when it is created.
func (d *DB) UpdateRun(ctx context.Context, r *record.Run) error {
	targets, err := json.Marshal(r.Targets)
	if err != nil {
		return fmt.Errorf("updating run %s: %w", r.ID, err)
	}
	res, err := d.w.ExecContext(ctx, `UPDATE runs SET status = ?, ended = ?, cases = ?, targets = ?, epochs = ?, host = ?
		WHERE id = ?`, r.Status, micros(r.Ended), r.Cases, string(targets), r.Epochs, r.Host, r.ID)
	if err != nil {
		return fmt.Errorf("updating run %s: %w", r.ID, err)
	}
	if n, err := res.RowsAffected(); err != nil {
		return fmt.Errorf("updating run %s: %w", r.ID, err)
	} else if n == 0 {
		return fmt.Errorf("updating run %s: %w", r.ID, store.ErrNotFound)
	}
	return nil
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
		row := d.r.QueryRowContext(ctx, latestRun)
		r, err := scanRun(row)
		if errors.Is(err, sql.ErrNoRows) {
			return nil, fmt.Errorf("latest run: %w (the store has no runs yet)", store.ErrNotFound)
		}
		if err != nil {
			return nil, fmt.Errorf("reading the latest run: %w", err)
		}
		return r, nil
	}
	r, err := scanRun(d.r.QueryRowContext(ctx, `SELECT `+runColumns+` FROM runs WHERE id = ?`, id))
	if err == nil {
		return r, nil
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("reading run %s: %w", id, err)
	}
	// instr compares bytes: no LIKE wildcards, no case folding.
	rows, err := d.r.QueryContext(ctx, `SELECT `+runColumns+` FROM runs WHERE instr(id, ?) = 1 ORDER BY id LIMIT ?`, id, ambiguousShown+1)
	if err != nil {
		return nil, fmt.Errorf("reading run %s: %w", id, err)
	}
	defer rows.Close()
	var matches []*record.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("reading run %s: %w", id, err)
		}
		matches = append(matches, r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("reading run %s: %w", id, err)
	}
	switch len(matches) {
	case 0:
		return nil, fmt.Errorf("run %q: %w", id, store.ErrNotFound)
	case 1:
		return matches[0], nil
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
	if limit <= 0 {
		limit = -1 // SQLite: no limit
	}
	rows, err := d.r.QueryContext(ctx, `SELECT `+runColumns+` FROM runs ORDER BY started DESC, rowid DESC LIMIT ?`, limit)
	if err != nil {
		return nil, fmt.Errorf("listing runs: %w", err)
	}
	defer rows.Close()
	var runs []record.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("listing runs: %w", err)
		}
		runs = append(runs, *r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing runs: %w", err)
	}
	return runs, nil
}

// ExperimentRuns returns the runs of an experiment, oldest first.
func (d *DB) ExperimentRuns(ctx context.Context, experiment string) ([]record.Run, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT `+runColumns+` FROM runs WHERE experiment = ? ORDER BY started, rowid`, experiment)
	if err != nil {
		return nil, fmt.Errorf("listing the runs of experiment %q: %w", experiment, err)
	}
	defer rows.Close()
	var runs []record.Run
	for rows.Next() {
		r, err := scanRun(rows)
		if err != nil {
			return nil, fmt.Errorf("listing the runs of experiment %q: %w", experiment, err)
		}
		runs = append(runs, *r)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("listing the runs of experiment %q: %w", experiment, err)
	}
	return runs, nil
}

type scanner interface{ Scan(dest ...any) error }

func scanRun(s scanner) (*record.Run, error) {
	var r record.Run
	var targets string
	var started, ended sql.NullInt64
	if err := s.Scan(&r.ID, &r.Spec, &r.SpecPath, &r.SpecHash, &r.DatasetHash, &r.PromptHash, &r.GitCommit,
		&targets, &r.Cases, &r.Epochs, &r.Status, &started, &ended, &r.Config,
		&r.ScorersHash, &r.AssayVersion, &r.Experiment, &r.Host, &r.FileHash, &r.Sample, &r.Kind); err != nil {
		return nil, err
	}
	if err := json.Unmarshal([]byte(targets), &r.Targets); err != nil {
		return nil, fmt.Errorf("run %s: targets %q are not a JSON array: %w", r.ID, targets, err)
	}
	r.Started = fromMicros(started)
	r.Ended = fromMicros(ended)
	return &r, nil
}

// micros encodes t for storage: microseconds since the epoch, NULL for the
// zero time.
func micros(t time.Time) sql.NullInt64 {
	if t.IsZero() {
		return sql.NullInt64{}
	}
	return sql.NullInt64{Int64: t.UnixMicro(), Valid: true}
}

func fromMicros(n sql.NullInt64) time.Time {
	if !n.Valid {
		return time.Time{}
	}
	return time.UnixMicro(n.Int64).UTC()
}
