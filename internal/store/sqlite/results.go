package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"

	sqlite "modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// PutCases records the cases of a run. A case whose run and ID are already
// stored is left as it is, so putting the same cases again is a no-op.
func (d *DB) PutCases(ctx context.Context, cases []record.Case) error {
	if len(cases) == 0 {
		return nil
	}
	return d.write(ctx, "storing cases", func(tx *sql.Tx) error {
		st, err := tx.PrepareContext(ctx, `INSERT INTO cases (run_id, case_id, line, expected, tags, weight)
			VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (run_id, case_id) DO NOTHING`)
		if err != nil {
			return err
		}
		defer st.Close()
		for i := range cases {
			c := &cases[i]
			var expected, tags sql.NullString
			if c.Expected != nil {
				expected = sql.NullString{String: string(c.Expected), Valid: true}
			}
			if c.Tags != nil {
				b, err := json.Marshal(c.Tags)
				if err != nil {
					return fmt.Errorf("case %q of run %s: %w", c.ID, c.RunID, err)
				}
				tags = sql.NullString{String: string(b), Valid: true}
			}
			var weight sql.NullFloat64
			if c.Weight != nil {
				if math.IsNaN(*c.Weight) {
					return fmt.Errorf("case %q of run %s: weight is NaN", c.ID, c.RunID)
				}
				weight = sql.NullFloat64{Float64: *c.Weight, Valid: true}
			}
			if _, err := st.ExecContext(ctx, c.RunID, c.ID, c.Line, expected, tags, weight); err != nil {
				return fmt.Errorf("case %q of run %s: %w", c.ID, c.RunID, explain(err, "the run does not exist"))
			}
		}
		return nil
	})
}

// Cases streams the cases of a run in dataset order (line, then ID).
func (d *DB) Cases(ctx context.Context, runID string, fn func(record.Case) error) error {
	rows, err := d.r.QueryContext(ctx, `SELECT case_id, line, expected, tags, weight
		FROM cases WHERE run_id = ? ORDER BY line, case_id`, runID)
	if err != nil {
		return fmt.Errorf("reading cases of run %s: %w", runID, err)
	}
	err = each(ctx, rows, func() error {
		c := record.Case{RunID: runID}
		var tags sql.NullString
		var weight sql.NullFloat64
		if err := rows.Scan(&c.ID, &c.Line, &c.Expected, &tags, &weight); err != nil {
			return err
		}
		if tags.Valid {
			if err := json.Unmarshal([]byte(tags.String), &c.Tags); err != nil {
				return fmt.Errorf("case %q: tags are not a JSON object: %w", c.ID, err)
			}
		}
		if weight.Valid {
			c.Weight = &weight.Float64
		}
		return fn(c)
	})
	if err != nil {
		return fmt.Errorf("reading cases of run %s: %w", runID, err)
	}
	return nil
}

// The columns of a result and of a score, in the order of their Scan
// calls; the r. and s. forms are the same lists qualified for a join.
const (
	resultColumns = `run_id, case_id, target, epoch, raw, parsed, parse_error, finish_reason,
	input_tokens, output_tokens, cached_tokens, cost_usd, latency_ms, first_token_ms, attempts,
	error_kind, error, model, fingerprint, from_cache, created_at, redactions, retries, saved_usd, tool_calls, turns`
	resultColumnsR = `r.run_id, r.case_id, r.target, r.epoch, r.raw, r.parsed, r.parse_error, r.finish_reason,
	r.input_tokens, r.output_tokens, r.cached_tokens, r.cost_usd, r.latency_ms, r.first_token_ms, r.attempts,
	r.error_kind, r.error, r.model, r.fingerprint, r.from_cache, r.created_at, r.redactions, r.retries, r.saved_usd, r.tool_calls, r.turns`
	scoreColumns = `run_id, scoring, case_id, target, epoch, scorer, is_primary, pass, value,
	shape, kind, reason, error_cost, judge_cost, parse_note, fields, judge_saved`
	scoreColumnsS = `s.run_id, s.scoring, s.case_id, s.target, s.epoch, s.scorer, s.is_primary, s.pass, s.value,
	s.shape, s.kind, s.reason, s.error_cost, s.judge_cost, s.parse_note, s.fields, s.judge_saved`
)

const insertScore = `INSERT INTO scores (` + scoreColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (run_id, scoring, case_id, target, epoch, scorer) DO NOTHING`

// upsertScore is insertScore that overwrites the stored verdict (ReplaceScores).
const upsertScore = `INSERT INTO scores (` + scoreColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
	ON CONFLICT (run_id, scoring, case_id, target, epoch, scorer) DO UPDATE SET
	is_primary = excluded.is_primary, pass = excluded.pass, value = excluded.value,
	shape = excluded.shape, kind = excluded.kind, reason = excluded.reason,
	error_cost = excluded.error_cost, judge_cost = excluded.judge_cost,
	parse_note = excluded.parse_note, fields = excluded.fields, judge_saved = excluded.judge_saved`

// The streaming queries. Each stream is two queries, so that both walk
// indexes in order and nothing is sorted in a temporary table (whose size
// would grow with the run): results of known cases in line order (CROSS JOIN
// keeps cases the outer loop), then results of case IDs without a case.
// TestStreamingQueriesUseIndexes checks the plans. ?1 is the run, ?2 the scoring.
const (
	resultsOfCases = `SELECT ` + resultColumnsR + ` FROM cases c CROSS JOIN results r
		ON r.run_id = c.run_id AND r.case_id = c.case_id
		WHERE c.run_id = ?1 ORDER BY c.line, c.case_id, r.target, r.epoch`
	resultsOfUnknownCases = `SELECT ` + resultColumns + ` FROM results r WHERE r.run_id = ?1
		AND NOT EXISTS (SELECT 1 FROM cases c WHERE c.run_id = r.run_id AND c.case_id = r.case_id)
		ORDER BY r.case_id, r.target, r.epoch`
	scoresOfCases = `SELECT ` + scoreColumnsS + ` FROM cases c CROSS JOIN scores s
		ON s.run_id = c.run_id AND s.scoring = ?2 AND s.case_id = c.case_id
		WHERE c.run_id = ?1 ORDER BY c.line, c.case_id, s.target, s.epoch, s.scorer`
	scoresOfUnknownCases = `SELECT ` + scoreColumns + ` FROM scores s WHERE s.run_id = ?1 AND s.scoring = ?2
		AND NOT EXISTS (SELECT 1 FROM cases c WHERE c.run_id = s.run_id AND c.case_id = s.case_id)
		ORDER BY s.case_id, s.target, s.epoch, s.scorer`
)

// resultKey is a result's identity across runs.
type resultKey struct {
	run, caseID, target string
	epoch               int
}

// PutResults stores results and their scores in one transaction: all of them
// or, on error, none. A result whose key is already stored is skipped, and
// so are its scores: a result is never duplicated, and the stored one keeps
// the scores it was stored with. Every score must belong to a result in the
// same call (PutScores adds scores to stored results), and scoring numbers
// start at 1. A cancelled ctx rolls the whole call back; a writer flushing
// on shutdown should pass a context that is not cancelled with the run.
func (d *DB) PutResults(ctx context.Context, results []record.Result, scores []record.Score) error {
	if len(results) == 0 && len(scores) == 0 {
		return nil
	}
	for i := range results {
		if err := checkResult(&results[i]); err != nil {
			return fmt.Errorf("storing results: %w", err)
		}
	}
	for i := range scores {
		if err := checkScore(&scores[i]); err != nil {
			return fmt.Errorf("storing results: %w", err)
		}
	}
	return d.write(ctx, "storing results", func(tx *sql.Tx) error {
		insR, err := tx.PrepareContext(ctx, insertResult+`
			ON CONFLICT (run_id, case_id, target, epoch) DO NOTHING`)
		if err != nil {
			return err
		}
		defer insR.Close()
		// inserted records, for each result key in this call, whether this
		// call stored it (false: it was already there).
		inserted := make(map[resultKey]bool, len(results))
		for i := range results {
			r := &results[i]
			k := resultKey{r.RunID, r.CaseID, r.Target, r.Epoch}
			res, err := execResult(ctx, insR, r)
			if err != nil {
				return err
			}
			n, err := res.RowsAffected()
			if err != nil {
				return err
			}
			if n == 1 {
				inserted[k] = true
			} else if _, ok := inserted[k]; !ok {
				inserted[k] = false
			}
		}
		if len(scores) == 0 {
			return nil
		}
		insS, err := tx.PrepareContext(ctx, insertScore)
		if err != nil {
			return err
		}
		defer insS.Close()
		for i := range scores {
			s := &scores[i]
			k := resultKey{s.RunID, s.CaseID, s.Target, s.Epoch}
			fresh, ok := inserted[k]
			if !ok {
				return fmt.Errorf("score %q: %s is not among the results of this call (PutScores scores stored results)", s.Scorer, describeResult(k))
			}
			if !fresh {
				continue
			}
			if err := execScore(ctx, insS, s); err != nil {
				return err
			}
		}
		return nil
	})
}

// PutScores stores scores of stored results, typically a later scoring
// (rescore), in one transaction. A score whose run, scoring, result and
// scorer are already stored is skipped. A score of a result that is not
// stored is an error, and nothing of the call is stored.
func (d *DB) PutScores(ctx context.Context, scores []record.Score) error {
	return d.putScores(ctx, scores, insertScore)
}

// ReplaceScores stores scores like PutScores, overwriting a stored verdict
// of the same run, scoring, result and scorer, in one transaction.
func (d *DB) ReplaceScores(ctx context.Context, scores []record.Score) error {
	return d.putScores(ctx, scores, upsertScore)
}

func (d *DB) putScores(ctx context.Context, scores []record.Score, query string) error {
	if len(scores) == 0 {
		return nil
	}
	for i := range scores {
		if err := checkScore(&scores[i]); err != nil {
			return fmt.Errorf("storing scores: %w", err)
		}
	}
	return d.write(ctx, "storing scores", func(tx *sql.Tx) error {
		return execScores(ctx, tx, query, scores)
	})
}

// insertResult inserts one result (execResult gives its values).
const insertResult = `INSERT INTO results (` + resultColumns + `)
	VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`

// execResult runs an insertResult statement for r.
func execResult(ctx context.Context, st *sql.Stmt, r *record.Result) (sql.Result, error) {
	var turns sql.NullString
	calls, err := encodeList(r.ToolCalls, "tool calls")
	if err == nil {
		turns, err = encodeList(r.Turns, "turns")
	}
	if err != nil {
		return nil, fmt.Errorf("%s: %w", describeResult(resultKey{r.RunID, r.CaseID, r.Target, r.Epoch}), err)
	}
	res, err := st.ExecContext(ctx, r.RunID, r.CaseID, r.Target, r.Epoch, r.Raw, r.Parsed, r.ParseError, r.FinishReason,
		r.InputTokens, r.OutputTokens, r.CachedTokens, r.CostUSD, r.LatencyMS, r.FirstTokenMS, r.Attempts,
		r.ErrorKind, r.Error, r.Model, r.Fingerprint, r.FromCache, micros(r.CreatedAt), r.Redactions, r.Retries, r.SavedUSD, calls, turns)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", describeResult(resultKey{r.RunID, r.CaseID, r.Target, r.Epoch}), explain(err, "the run does not exist"))
	}
	return res, nil
}

// execScores inserts scores with query (insertScore or upsertScore).
func execScores(ctx context.Context, tx *sql.Tx, query string, scores []record.Score) error {
	if len(scores) == 0 {
		return nil
	}
	st, err := tx.PrepareContext(ctx, query)
	if err != nil {
		return err
	}
	defer st.Close()
	for i := range scores {
		if err := execScore(ctx, st, &scores[i]); err != nil {
			return err
		}
	}
	return nil
}

func execScore(ctx context.Context, st *sql.Stmt, s *record.Score) error {
	fields, err := encodeFields(s.Fields)
	if err == nil {
		_, err = st.ExecContext(ctx, s.RunID, s.Scoring, s.CaseID, s.Target, s.Epoch, s.Scorer, s.Primary, s.Pass, s.Value,
			s.Shape, s.Kind, s.Reason, s.ErrorCost, s.JudgeCost, s.ParseNote, fields, s.JudgeSaved)
	}
	if err != nil {
		k := resultKey{s.RunID, s.CaseID, s.Target, s.Epoch}
		return fmt.Errorf("score %q of %s: %w", s.Scorer, describeResult(k), explain(err, "no such result is stored"))
	}
	return nil
}

// Results streams a run's results in dataset order (see the package
// documentation), from one consistent snapshot.
func (d *DB) Results(ctx context.Context, runID string, fn func(record.Result) error) error {
	err := d.read(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{resultsOfCases, resultsOfUnknownCases} {
			rows, err := tx.QueryContext(ctx, q, runID)
			if err != nil {
				return err
			}
			err = each(ctx, rows, func() error {
				var r record.Result
				if err := scanResult(rows, &r); err != nil {
					return err
				}
				return fn(r)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading results of run %s: %w", runID, err)
	}
	return nil
}

// Result returns one stored result, or store.ErrNotFound.
func (d *DB) Result(ctx context.Context, runID string, key record.Key) (*record.Result, error) {
	var r record.Result
	err := scanResult(d.r.QueryRowContext(ctx, `SELECT `+resultColumns+` FROM results
		WHERE run_id = ? AND case_id = ? AND target = ? AND epoch = ?`, runID, key.CaseID, key.Target, key.Epoch), &r)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("result (case %q, target %q, epoch %d) of run %s: %w", key.CaseID, key.Target, key.Epoch, runID, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading a result of run %s: %w", runID, err)
	}
	return &r, nil
}

// encodeList is a result's tool calls or turns (what) as stored: a JSON
// list, or NULL when there are none (a result of a single call has no
// turns).
func encodeList[E any](list []E, what string) (sql.NullString, error) {
	if len(list) == 0 {
		return sql.NullString{}, nil
	}
	b, err := json.Marshal(list)
	if err != nil {
		return sql.NullString{}, fmt.Errorf("encoding %s: %w", what, err)
	}
	return sql.NullString{String: string(b), Valid: true}, nil
}

// scanResult reads a row of resultColumns (or resultColumnsR) into r.
func scanResult(s scanner, r *record.Result) error {
	var created sql.NullInt64
	var calls, turns sql.NullString
	if err := s.Scan(&r.RunID, &r.CaseID, &r.Target, &r.Epoch, &r.Raw, &r.Parsed, &r.ParseError, &r.FinishReason,
		&r.InputTokens, &r.OutputTokens, &r.CachedTokens, &r.CostUSD, &r.LatencyMS, &r.FirstTokenMS, &r.Attempts,
		&r.ErrorKind, &r.Error, &r.Model, &r.Fingerprint, &r.FromCache, &created, &r.Redactions, &r.Retries, &r.SavedUSD, &calls, &turns); err != nil {
		return err
	}
	r.CreatedAt = fromMicros(created)
	return decodeLists(calls, turns, r)
}

// decodeLists reads a stored result's tool calls and turns into r.
func decodeLists(calls, turns sql.NullString, r *record.Result) error {
	if calls.Valid {
		if err := json.Unmarshal([]byte(calls.String), &r.ToolCalls); err != nil {
			return fmt.Errorf("%s: tool_calls are not a JSON list of calls: %w", describeResult(resultKey{r.RunID, r.CaseID, r.Target, r.Epoch}), err)
		}
	}
	if turns.Valid {
		if err := json.Unmarshal([]byte(turns.String), &r.Turns); err != nil {
			return fmt.Errorf("%s: turns are not a JSON list of turns: %w", describeResult(resultKey{r.RunID, r.CaseID, r.Target, r.Epoch}), err)
		}
	}
	return nil
}

// DoneKeys returns the keys of every stored result of a run (empty, not an
// error, for a run with none).
func (d *DB) DoneKeys(ctx context.Context, runID string) (map[record.Key]struct{}, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT case_id, target, epoch FROM results WHERE run_id = ?`, runID)
	if err != nil {
		return nil, fmt.Errorf("reading result keys of run %s: %w", runID, err)
	}
	keys := map[record.Key]struct{}{}
	err = each(ctx, rows, func() error {
		var k record.Key
		if err := rows.Scan(&k.CaseID, &k.Target, &k.Epoch); err != nil {
			return err
		}
		keys[k] = struct{}{}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading result keys of run %s: %w", runID, err)
	}
	return keys, nil
}

// Scores streams the scores of one scoring of a run in the order of Results,
// then by scorer, from one consistent snapshot.
func (d *DB) Scores(ctx context.Context, runID string, scoring int, fn func(record.Score) error) error {
	err := d.read(ctx, func(tx *sql.Tx) error {
		for _, q := range []string{scoresOfCases, scoresOfUnknownCases} {
			rows, err := tx.QueryContext(ctx, q, runID, scoring)
			if err != nil {
				return err
			}
			err = each(ctx, rows, func() error {
				var s record.Score
				var fields string
				if err := rows.Scan(&s.RunID, &s.Scoring, &s.CaseID, &s.Target, &s.Epoch, &s.Scorer, &s.Primary, &s.Pass, &s.Value,
					&s.Shape, &s.Kind, &s.Reason, &s.ErrorCost, &s.JudgeCost, &s.ParseNote, &fields, &s.JudgeSaved); err != nil {
					return err
				}
				if fields != "" {
					if err := json.Unmarshal([]byte(fields), &s.Fields); err != nil {
						return fmt.Errorf("score %q of %s: fields: %w", s.Scorer, describeResult(resultKey{s.RunID, s.CaseID, s.Target, s.Epoch}), err)
					}
				}
				return fn(s)
			})
			if err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return fmt.Errorf("reading scoring %d of run %s: %w", scoring, runID, err)
	}
	return nil
}

// write runs fn in a write transaction (BEGIN IMMEDIATE on the single write
// connection) and commits it, or rolls it back if fn fails.
func (d *DB) write(ctx context.Context, what string, fn func(*sql.Tx) error) error {
	tx, err := d.w.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := fn(tx); err != nil {
		_ = tx.Rollback()
		return fmt.Errorf("%s: %w", what, err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("%s: %w", what, err)
	}
	return nil
}

// read runs fn in a read transaction: every query in it sees one snapshot.
func (d *DB) read(ctx context.Context, fn func(*sql.Tx) error) error {
	tx, err := d.r.BeginTx(ctx, &sql.TxOptions{ReadOnly: true})
	if err != nil {
		return err
	}
	defer func() { _ = tx.Rollback() }()
	return fn(tx)
}

// each calls fn for every row, stopping at the first error or when ctx is
// done, and closes rows.
func each(ctx context.Context, rows *sql.Rows, fn func() error) error {
	defer rows.Close()
	for rows.Next() {
		if err := ctx.Err(); err != nil {
			return err
		}
		if err := fn(); err != nil {
			return err
		}
	}
	if err := rows.Err(); err != nil {
		return err
	}
	// rows.Next can end quietly when ctx is cancelled mid-stream.
	return ctx.Err()
}

func checkResult(r *record.Result) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"cost_usd", r.CostUSD}, {"latency_ms", r.LatencyMS}, {"first_token_ms", r.FirstTokenMS}, {"saved_usd", r.SavedUSD}} {
		if math.IsNaN(f.v) {
			return fmt.Errorf("%s: %s is NaN", describeResult(resultKey{r.RunID, r.CaseID, r.Target, r.Epoch}), f.name)
		}
	}
	return nil
}

func checkScore(s *record.Score) error {
	k := resultKey{s.RunID, s.CaseID, s.Target, s.Epoch}
	if s.Scoring < 1 {
		return fmt.Errorf("score %q of %s: scoring is %d; scorings are numbered from 1", s.Scorer, describeResult(k), s.Scoring)
	}
	for _, f := range []struct {
		name string
		v    float64
	}{{"value", s.Value}, {"error_cost", s.ErrorCost}, {"judge_cost_usd", s.JudgeCost}, {"judge_saved_usd", s.JudgeSaved}} {
		if math.IsNaN(f.v) {
			return fmt.Errorf("score %q of %s: %s is NaN", s.Scorer, describeResult(k), f.name)
		}
	}
	return nil
}

// encodeFields is a score's per-field verdicts as stored: "" for none.
func encodeFields(f []record.FieldVerdict) (string, error) {
	if len(f) == 0 {
		return "", nil
	}
	b, err := json.Marshal(f)
	return string(b), err
}

func describeResult(k resultKey) string {
	return fmt.Sprintf("result (case %q, target %q, epoch %d) of run %s", k.caseID, k.target, k.epoch, k.run)
}

// explain adds meaning to a foreign key violation, whose SQLite message
// does not say which key failed.
func explain(err error, fk string) error {
	var se *sqlite.Error
	if errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY {
		return fmt.Errorf("%s: %w", fk, err)
	}
	return err
}
