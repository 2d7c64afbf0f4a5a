package postgres

// Shared with the other files of the package (browse, keys, labels, dump):
//
//   - runColumns (runs.go) and scanRun(scanner) (*record.Run, error);
//   - resultColumns, resultColumnsR (r.-qualified) and
//     scanResult(scanner, *record.Result) error;
//   - scoreColumns, scoreColumnsS (s.-qualified) and
//     scanScore(scanner, *record.Score) error;
//   - scanner: what pgx.Row and pgx.Rows have in common;
//   - bstr{&s}: scans a BYTEA column into a string (one copy);
//   - each(ctx, rows, fn): the streaming loop (stops on ctx, closes rows);
//   - resultKey, describeResult, checkResult, checkScore.

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// scanner is a row to scan: pgx.Row or pgx.Rows.
type scanner interface{ Scan(dest ...any) error }

// bstr scans a BYTEA column into the string it points to, copying the
// bytes once (NULL reads as "").
type bstr struct{ p *string }

// ScanBytes implements pgtype.BytesScanner.
func (s bstr) ScanBytes(v []byte) error {
	*s.p = string(v)
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

// scanResult reads a row of resultColumns (or resultColumnsR) into r.
func scanResult(s scanner, r *record.Result) error {
	var created *int64
	var calls, turns []byte
	if err := s.Scan(&r.RunID, bstr{&r.CaseID}, bstr{&r.Target}, &r.Epoch, bstr{&r.Raw}, bstr{&r.Parsed}, bstr{&r.ParseError}, bstr{&r.FinishReason},
		&r.InputTokens, &r.OutputTokens, &r.CachedTokens, &r.CostUSD, &r.LatencyMS, &r.FirstTokenMS, &r.Attempts,
		bstr{&r.ErrorKind}, bstr{&r.Error}, bstr{&r.Model}, bstr{&r.Fingerprint}, &r.FromCache, &created, &r.Redactions, &r.Retries, &r.SavedUSD, &calls, &turns); err != nil {
		return err
	}
	r.CreatedAt = fromMicros(created)
	if calls != nil {
		if err := json.Unmarshal(calls, &r.ToolCalls); err != nil {
			return fmt.Errorf("%s: tool_calls are not a JSON list of calls: %w", describeResult(keyOfResult(r)), err)
		}
	}
	if turns != nil {
		if err := json.Unmarshal(turns, &r.Turns); err != nil {
			return fmt.Errorf("%s: turns are not a JSON list of turns: %w", describeResult(keyOfResult(r)), err)
		}
	}
	return nil
}

// scanScore reads a row of scoreColumns (or scoreColumnsS) into s.
func scanScore(row scanner, s *record.Score) error {
	var fields []byte
	if err := row.Scan(&s.RunID, &s.Scoring, bstr{&s.CaseID}, bstr{&s.Target}, &s.Epoch, bstr{&s.Scorer}, &s.Primary, &s.Pass, &s.Value,
		bstr{&s.Shape}, bstr{&s.Kind}, bstr{&s.Reason}, &s.ErrorCost, &s.JudgeCost, bstr{&s.ParseNote}, &fields, &s.JudgeSaved); err != nil {
		return err
	}
	if len(fields) > 0 {
		if err := json.Unmarshal(fields, &s.Fields); err != nil {
			return fmt.Errorf("score %q of %s: fields: %w", s.Scorer, describeResult(resultKey{s.RunID, s.CaseID, s.Target, s.Epoch}), err)
		}
	}
	return nil
}

// each calls fn for every row, stopping at the first error or when ctx is
// done, and closes rows.
func each(ctx context.Context, rows pgx.Rows, fn func() error) error {
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
	return ctx.Err()
}

// resultKey is a result's identity across runs.
type resultKey struct {
	run, caseID, target string
	epoch               int
}

func keyOfResult(r *record.Result) resultKey {
	return resultKey{r.RunID, r.CaseID, r.Target, r.Epoch}
}

func describeResult(k resultKey) string {
	return fmt.Sprintf("result (case %q, target %q, epoch %d) of run %s", k.caseID, k.target, k.epoch, k.run)
}

func checkResult(r *record.Result) error {
	for _, f := range []struct {
		name string
		v    float64
	}{{"cost_usd", r.CostUSD}, {"latency_ms", r.LatencyMS}, {"first_token_ms", r.FirstTokenMS}, {"saved_usd", r.SavedUSD}} {
		if math.IsNaN(f.v) {
			return fmt.Errorf("%s: %s is NaN", describeResult(keyOfResult(r)), f.name)
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

// sqlState is err's PostgreSQL error code, "" when it has none.
func sqlState(err error) string {
	var pe *pgconn.PgError
	if errors.As(err, &pe) {
		return pe.Code
	}
	return ""
}

// Error codes the store answers for.
const (
	foreignKeyViolation = "23503"
	uniqueViolation     = "23505"
)

// unnest is "unnest($first::T1[], ...) WITH ORDINALITY AS alias(names..., ord)":
// a set of rows from one array parameter per column, numbered in the
// order given. Bulk writes send a batch as arrays (one statement, one
// round trip, binary encoding), so a batch of results costs one INSERT.
func unnest(first int, types []string, alias, names string) string {
	var b strings.Builder
	b.WriteString("unnest(")
	for i, t := range types {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "$%d::%s[]", first+i, t)
	}
	fmt.Fprintf(&b, ") WITH ORDINALITY AS %s(%s, ord)", alias, names)
	return b.String()
}

// The column types of resultColumns and scoreColumns, for unnest.
var (
	resultTypes = []string{"text", "bytea", "bytea", "int8", "bytea", "bytea", "bytea", "bytea",
		"int8", "int8", "int8", "float8", "float8", "float8", "int8",
		"bytea", "bytea", "bytea", "bytea", "bool", "int8", "int8", "int8", "float8", "bytea", "bytea"}
	scoreTypes = []string{"text", "int8", "bytea", "bytea", "int8", "bytea", "bool", "bool", "float8",
		"bytea", "bytea", "bytea", "float8", "float8", "bytea", "bytea", "float8"}
)

// resultArrays are results as unnest's column arrays, in resultColumns'
// order.
type resultArrays struct {
	run                              []string
	caseID, target                   [][]byte
	epoch                            []int64
	raw, parsed, parseError, finish  [][]byte
	in, out, cached                  []int64
	cost, latency, firstToken        []float64
	attempts                         []int64
	errorKind, errText, model, print [][]byte
	fromCache                        []bool
	created                          []*int64
	redactions, retries              []int64
	saved                            []float64
	calls, turns                     [][]byte
}

func newResultArrays(results []record.Result) (*resultArrays, error) {
	n := len(results)
	a := &resultArrays{
		run: make([]string, 0, n), caseID: make([][]byte, 0, n), target: make([][]byte, 0, n), epoch: make([]int64, 0, n),
		raw: make([][]byte, 0, n), parsed: make([][]byte, 0, n), parseError: make([][]byte, 0, n), finish: make([][]byte, 0, n),
		in: make([]int64, 0, n), out: make([]int64, 0, n), cached: make([]int64, 0, n),
		cost: make([]float64, 0, n), latency: make([]float64, 0, n), firstToken: make([]float64, 0, n), attempts: make([]int64, 0, n),
		errorKind: make([][]byte, 0, n), errText: make([][]byte, 0, n), model: make([][]byte, 0, n), print: make([][]byte, 0, n),
		fromCache: make([]bool, 0, n), created: make([]*int64, 0, n), redactions: make([]int64, 0, n), retries: make([]int64, 0, n),
		saved: make([]float64, 0, n), calls: make([][]byte, 0, n), turns: make([][]byte, 0, n),
	}
	for i := range results {
		r := &results[i]
		calls, err := encodeList(r.ToolCalls, "tool calls")
		var turns []byte
		if err == nil {
			turns, err = encodeList(r.Turns, "turns")
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", describeResult(keyOfResult(r)), err)
		}
		var created *int64
		if !r.CreatedAt.IsZero() {
			us := r.CreatedAt.UnixMicro()
			created = &us
		}
		a.run = append(a.run, r.RunID)
		a.caseID = append(a.caseID, b(r.CaseID))
		a.target = append(a.target, b(r.Target))
		a.epoch = append(a.epoch, int64(r.Epoch))
		a.raw = append(a.raw, b(r.Raw))
		a.parsed = append(a.parsed, b(r.Parsed))
		a.parseError = append(a.parseError, b(r.ParseError))
		a.finish = append(a.finish, b(r.FinishReason))
		a.in = append(a.in, int64(r.InputTokens))
		a.out = append(a.out, int64(r.OutputTokens))
		a.cached = append(a.cached, int64(r.CachedTokens))
		a.cost = append(a.cost, r.CostUSD)
		a.latency = append(a.latency, r.LatencyMS)
		a.firstToken = append(a.firstToken, r.FirstTokenMS)
		a.attempts = append(a.attempts, int64(r.Attempts))
		a.errorKind = append(a.errorKind, b(r.ErrorKind))
		a.errText = append(a.errText, b(r.Error))
		a.model = append(a.model, b(r.Model))
		a.print = append(a.print, b(r.Fingerprint))
		a.fromCache = append(a.fromCache, r.FromCache)
		a.created = append(a.created, created)
		a.redactions = append(a.redactions, int64(r.Redactions))
		a.retries = append(a.retries, int64(r.Retries))
		a.saved = append(a.saved, r.SavedUSD)
		a.calls = append(a.calls, calls)
		a.turns = append(a.turns, turns)
	}
	return a, nil
}

func (a *resultArrays) args() []any {
	return []any{a.run, a.caseID, a.target, a.epoch, a.raw, a.parsed, a.parseError, a.finish,
		a.in, a.out, a.cached, a.cost, a.latency, a.firstToken, a.attempts,
		a.errorKind, a.errText, a.model, a.print, a.fromCache, a.created, a.redactions, a.retries, a.saved, a.calls, a.turns}
}

// scoreArrays are scores as unnest's column arrays, in scoreColumns' order.
type scoreArrays struct {
	run                  []string
	scoring              []int64
	caseID, target       [][]byte
	epoch                []int64
	scorer               [][]byte
	primary, pass        []bool
	value                []float64
	shape, kind, reason  [][]byte
	errorCost, judgeCost []float64
	parseNote, fields    [][]byte
	judgeSaved           []float64
}

func newScoreArrays(scores []record.Score) (*scoreArrays, error) {
	n := len(scores)
	a := &scoreArrays{
		run: make([]string, 0, n), scoring: make([]int64, 0, n), caseID: make([][]byte, 0, n), target: make([][]byte, 0, n),
		epoch: make([]int64, 0, n), scorer: make([][]byte, 0, n), primary: make([]bool, 0, n), pass: make([]bool, 0, n),
		value: make([]float64, 0, n), shape: make([][]byte, 0, n), kind: make([][]byte, 0, n), reason: make([][]byte, 0, n),
		errorCost: make([]float64, 0, n), judgeCost: make([]float64, 0, n), parseNote: make([][]byte, 0, n),
		fields: make([][]byte, 0, n), judgeSaved: make([]float64, 0, n),
	}
	for i := range scores {
		s := &scores[i]
		fields := []byte{}
		if len(s.Fields) > 0 {
			var err error
			if fields, err = json.Marshal(s.Fields); err != nil {
				return nil, fmt.Errorf("score %q of %s: %w", s.Scorer, describeResult(resultKey{s.RunID, s.CaseID, s.Target, s.Epoch}), err)
			}
		}
		a.run = append(a.run, s.RunID)
		a.scoring = append(a.scoring, int64(s.Scoring))
		a.caseID = append(a.caseID, b(s.CaseID))
		a.target = append(a.target, b(s.Target))
		a.epoch = append(a.epoch, int64(s.Epoch))
		a.scorer = append(a.scorer, b(s.Scorer))
		a.primary = append(a.primary, s.Primary)
		a.pass = append(a.pass, s.Pass)
		a.value = append(a.value, s.Value)
		a.shape = append(a.shape, b(s.Shape))
		a.kind = append(a.kind, b(s.Kind))
		a.reason = append(a.reason, b(s.Reason))
		a.errorCost = append(a.errorCost, s.ErrorCost)
		a.judgeCost = append(a.judgeCost, s.JudgeCost)
		a.parseNote = append(a.parseNote, b(s.ParseNote))
		a.fields = append(a.fields, fields)
		a.judgeSaved = append(a.judgeSaved, s.JudgeSaved)
	}
	return a, nil
}

func (a *scoreArrays) args() []any {
	return []any{a.run, a.scoring, a.caseID, a.target, a.epoch, a.scorer, a.primary, a.pass, a.value,
		a.shape, a.kind, a.reason, a.errorCost, a.judgeCost, a.parseNote, a.fields, a.judgeSaved}
}

// encodeList is a result's tool calls or turns (what) as stored: a JSON
// list, or NULL (nil) when there are none.
func encodeList[E any](list []E, what string) ([]byte, error) {
	if len(list) == 0 {
		return nil, nil
	}
	out, err := json.Marshal(list)
	if err != nil {
		return nil, fmt.Errorf("encoding %s: %w", what, err)
	}
	return out, nil
}

const (
	resultKeyColumns = `run_id, case_id, target, epoch`
	scoreKeyColumns  = `run_id, scoring, case_id, target, epoch, scorer`
)

// The bulk statements. A call's rows arrive as arrays ($1...), each key
// once (firstResults, lastScores): ON CONFLICT DO UPDATE refuses a key
// twice in one statement, and deduplicating here spares the server a sort.
var (
	// insertResults stores results whose key is not stored yet.
	insertResults = `INSERT INTO results (` + resultColumns + `)
		SELECT ` + resultColumns + ` FROM ` + unnest(1, resultTypes, "t", resultColumns) + `
		ON CONFLICT (` + resultKeyColumns + `) DO NOTHING`

	// insertResultsAndScores stores results like insertResults, then the
	// scores ($27...) of the results it stored; a result that was already
	// stored keeps the scores it was stored with.
	insertResultsAndScores = `WITH ins AS (` + insertResults + ` RETURNING ` + resultKeyColumns + `)
		INSERT INTO scores (` + scoreColumns + `)
		SELECT ` + scoreColumns + `
		FROM ` + unnest(len(resultTypes)+1, scoreTypes, "s", scoreColumns) + ` JOIN ins USING (` + resultKeyColumns + `)
		ON CONFLICT (` + scoreKeyColumns + `) DO NOTHING`

	// insertScores stores scores not stored yet (PutScores).
	insertScores = `INSERT INTO scores (` + scoreColumns + `)
		SELECT ` + scoreColumns + ` FROM ` + unnest(1, scoreTypes, "s", scoreColumns) + `
		ON CONFLICT (` + scoreKeyColumns + `) DO NOTHING`

	// upsertScores stores scores, overwriting a stored verdict
	// (ReplaceScores).
	upsertScores = `INSERT INTO scores (` + scoreColumns + `)
		SELECT ` + scoreColumns + ` FROM ` + unnest(1, scoreTypes, "s", scoreColumns) + `
		ON CONFLICT (` + scoreKeyColumns + `) DO UPDATE SET
		is_primary = excluded.is_primary, pass = excluded.pass, value = excluded.value,
		shape = excluded.shape, kind = excluded.kind, reason = excluded.reason,
		error_cost = excluded.error_cost, judge_cost = excluded.judge_cost,
		parse_note = excluded.parse_note, fields = excluded.fields, judge_saved = excluded.judge_saved`
)

// firstResults is results with each key once, the first given (as the
// SQLite store's row-by-row inserts keep it); results itself when no key
// repeats.
func firstResults(results []record.Result) []record.Result {
	seen := make(map[resultKey]struct{}, len(results))
	var out []record.Result
	for i := range results {
		k := keyOfResult(&results[i])
		if _, dup := seen[k]; dup {
			if out == nil {
				out = append(make([]record.Result, 0, len(results)), results[:i]...)
			}
			continue
		}
		seen[k] = struct{}{}
		if out != nil {
			out = append(out, results[i])
		}
	}
	if out == nil {
		return results
	}
	return out
}

// scoreKey is a score's identity.
type scoreKey struct {
	result  resultKey
	scoring int
	scorer  string
}

// uniqueScores is scores with each key once, at its first place: with the
// first score given when first is true (PutScores keeps what is stored,
// and so the first of a call), else with the last (ReplaceScores
// overwrites, and so the last of a call wins); scores itself when no key
// repeats.
func uniqueScores(scores []record.Score, first bool) []record.Score {
	at := make(map[scoreKey]int, len(scores))
	var out []record.Score
	for i := range scores {
		s := &scores[i]
		k := scoreKey{resultKey{s.RunID, s.CaseID, s.Target, s.Epoch}, s.Scoring, s.Scorer}
		if j, dup := at[k]; dup {
			if out == nil {
				out = append(make([]record.Score, 0, len(scores)), scores[:i]...)
			}
			if !first {
				out[j] = *s
			}
			continue
		}
		if out == nil {
			at[k] = i // no key repeated yet: out will begin with scores[:i]
		} else {
			at[k] = len(out)
			out = append(out, *s)
		}
	}
	if out == nil {
		return scores
	}
	return out
}

// PutCases records the cases of a run. A case whose run and ID are already
// stored is left as it is, so putting the same cases again is a no-op.
func (d *DB) PutCases(ctx context.Context, cases []record.Case) error {
	if len(cases) == 0 {
		return nil
	}
	n := len(cases)
	runs, ids, expected, tags := make([]string, 0, n), make([][]byte, 0, n), make([][]byte, 0, n), make([][]byte, 0, n)
	lines, weights := make([]int64, 0, n), make([]*float64, 0, n)
	for i := range cases {
		c := &cases[i]
		var t []byte
		if c.Tags != nil {
			var err error
			if t, err = json.Marshal(c.Tags); err != nil {
				return fmt.Errorf("storing cases: case %q of run %s: %w", c.ID, c.RunID, err)
			}
		}
		if c.Weight != nil && math.IsNaN(*c.Weight) {
			return fmt.Errorf("storing cases: case %q of run %s: weight is NaN", c.ID, c.RunID)
		}
		runs, ids, lines = append(runs, c.RunID), append(ids, b(c.ID)), append(lines, int64(c.Line))
		expected, tags, weights = append(expected, c.Expected), append(tags, t), append(weights, c.Weight)
	}
	const cols = `run_id, case_id, line, expected, tags, weight`
	q := `INSERT INTO cases (` + cols + `)
		SELECT DISTINCT ON (run_id, case_id) ` + cols + ` FROM ` + unnest(1, []string{"text", "bytea", "int8", "bytea", "bytea", "float8"}, "c", cols) + `
		ORDER BY run_id, case_id, ord
		ON CONFLICT (run_id, case_id) DO NOTHING`
	return d.write(ctx, "storing cases", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, q, runs, ids, lines, expected, tags, weights)
		if sqlState(err) == foreignKeyViolation {
			if i := d.firstMissingRun(ctx, runs); i >= 0 {
				return fmt.Errorf("case %q of run %s: the run does not exist: %w", cases[i].ID, cases[i].RunID, err)
			}
			return fmt.Errorf("the run does not exist: %w", err)
		}
		return err
	})
}

// firstMissingRun is the index of the first of runs that names no stored
// run, -1 when there is none (or it cannot tell): it names the culprit of
// a foreign key violation, after the failed statement.
func (d *DB) firstMissingRun(ctx context.Context, runs []string) int {
	var i int64
	err := d.pool.QueryRow(context.WithoutCancel(ctx), `SELECT ord FROM unnest($1::text[]) WITH ORDINALITY AS k(id, ord)
		WHERE NOT EXISTS (SELECT 1 FROM runs r WHERE r.id = k.id) ORDER BY ord LIMIT 1`, runs).Scan(&i)
	if err != nil {
		return -1
	}
	return int(i) - 1
}

// firstMissingResult is the index of the first score whose result is not
// stored, -1 when there is none (or it cannot tell).
func (d *DB) firstMissingResult(ctx context.Context, a *scoreArrays) int {
	var i int64
	err := d.pool.QueryRow(context.WithoutCancel(ctx), `SELECT ord FROM unnest($1::text[], $2::bytea[], $3::bytea[], $4::int8[]) WITH ORDINALITY AS k(run_id, case_id, target, epoch, ord)
		WHERE NOT EXISTS (SELECT 1 FROM results r WHERE r.run_id = k.run_id AND r.case_id = k.case_id AND r.target = k.target AND r.epoch = k.epoch)
		ORDER BY ord LIMIT 1`, a.run, a.caseID, a.target, a.epoch).Scan(&i)
	if err != nil {
		return -1
	}
	return int(i) - 1
}

// Cases streams the cases of a run in dataset order (line, then ID).
func (d *DB) Cases(ctx context.Context, runID string, fn func(record.Case) error) error {
	rows, err := d.pool.Query(ctx, `SELECT case_id, line, expected, tags, weight
		FROM cases WHERE run_id = $1 ORDER BY line, case_id`, runID)
	if err != nil {
		return fmt.Errorf("reading cases of run %s: %w", runID, err)
	}
	err = each(ctx, rows, func() error {
		c := record.Case{RunID: runID}
		var tags []byte
		if err := rows.Scan(bstr{&c.ID}, &c.Line, &c.Expected, &tags, &c.Weight); err != nil {
			return err
		}
		if tags != nil {
			if err := json.Unmarshal(tags, &c.Tags); err != nil {
				return fmt.Errorf("case %q: tags are not a JSON object: %w", c.ID, err)
			}
		}
		return fn(c)
	})
	if err != nil {
		return fmt.Errorf("reading cases of run %s: %w", runID, err)
	}
	return nil
}

// PutResults stores results and their scores in one transaction: all of them
// or, on error, none. A result whose key is already stored is skipped, and
// so are its scores: a result is never duplicated, and the stored one keeps
// the scores it was stored with. Every score must belong to a result in the
// same call (PutScores adds scores to stored results), and scoring numbers
// start at 1. A cancelled ctx rolls the whole call back.
//
// The call is one statement: the results go in as arrays with ON CONFLICT
// DO NOTHING, and the scores of the results that statement stored (its
// RETURNING) go in with it; workers on many machines storing the same
// result at once store it once, the loser's transaction retried by write.
func (d *DB) PutResults(ctx context.Context, results []record.Result, scores []record.Score) error {
	if len(results) == 0 && len(scores) == 0 {
		return nil
	}
	keys := make(map[resultKey]bool, len(results))
	for i := range results {
		if err := checkResult(&results[i]); err != nil {
			return fmt.Errorf("storing results: %w", err)
		}
		keys[keyOfResult(&results[i])] = true
	}
	for i := range scores {
		s := &scores[i]
		if err := checkScore(s); err != nil {
			return fmt.Errorf("storing results: %w", err)
		}
		if k := (resultKey{s.RunID, s.CaseID, s.Target, s.Epoch}); !keys[k] {
			return fmt.Errorf("storing results: score %q: %s is not among the results of this call (PutScores scores stored results)", s.Scorer, describeResult(k))
		}
	}
	results = firstResults(results)
	ra, err := newResultArrays(results)
	if err != nil {
		return fmt.Errorf("storing results: %w", err)
	}
	q, args := insertResults, ra.args()
	if len(scores) > 0 {
		sa, err := newScoreArrays(uniqueScores(scores, true))
		if err != nil {
			return fmt.Errorf("storing results: %w", err)
		}
		q, args = insertResultsAndScores, append(args, sa.args()...)
	}
	return d.write(ctx, "storing results", func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, q, args...)
		if sqlState(err) == foreignKeyViolation {
			if i := d.firstMissingRun(ctx, ra.run); i >= 0 {
				return fmt.Errorf("%s: the run does not exist: %w", describeResult(keyOfResult(&results[i])), err)
			}
			return fmt.Errorf("the run does not exist: %w", err)
		}
		return err
	})
}

// PutScores stores scores of stored results, typically a later scoring
// (rescore), in one transaction. A score whose run, scoring, result and
// scorer are already stored is skipped. A score of a result that is not
// stored is an error, and nothing of the call is stored.
func (d *DB) PutScores(ctx context.Context, scores []record.Score) error {
	return d.putScores(ctx, uniqueScores(scores, true), insertScores)
}

// ReplaceScores stores scores like PutScores, overwriting a stored verdict
// of the same run, scoring, result and scorer, in one transaction.
func (d *DB) ReplaceScores(ctx context.Context, scores []record.Score) error {
	return d.putScores(ctx, uniqueScores(scores, false), upsertScores)
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
	sa, err := newScoreArrays(scores)
	if err != nil {
		return fmt.Errorf("storing scores: %w", err)
	}
	return d.write(ctx, "storing scores", func(tx pgx.Tx) error {
		return d.execScores(ctx, tx, query, scores, sa)
	})
}

// execScores runs insertScores or upsertScores for scores (as sa), naming
// the first score without a stored result when there is one.
func (d *DB) execScores(ctx context.Context, tx pgx.Tx, query string, scores []record.Score, sa *scoreArrays) error {
	_, err := tx.Exec(ctx, query, sa.args()...)
	if sqlState(err) == foreignKeyViolation {
		if i := d.firstMissingResult(ctx, sa); i >= 0 {
			s := &scores[i]
			return fmt.Errorf("score %q of %s: no such result is stored: %w", s.Scorer, describeResult(resultKey{s.RunID, s.CaseID, s.Target, s.Epoch}), err)
		}
		return fmt.Errorf("no such result is stored: %w", err)
	}
	return err
}

// The streaming queries. Each stream is two queries: results of known
// cases in line order, then results of case IDs without a case. The first
// walks the cases' index in line order and, for each case, the results'
// unique index (LATERAL, fenced by OFFSET 0 so the planner keeps that
// shape): rows stream in order as they are read, where a join would hash
// the whole run and sort it (on disk, for a large run) before the first
// row. The ORDER BY states the order in full; its tail costs an
// incremental sort of each case's few rows. $1 is the run, $2 the scoring.
const (
	resultsOfCases = `SELECT ` + resultColumnsR + ` FROM cases c CROSS JOIN LATERAL (
			SELECT * FROM results r WHERE r.run_id = c.run_id AND r.case_id = c.case_id ORDER BY r.target, r.epoch OFFSET 0) r
		WHERE c.run_id = $1 ORDER BY c.line, c.case_id, r.target, r.epoch`
	resultsOfUnknownCases = `SELECT ` + resultColumns + ` FROM results r WHERE r.run_id = $1
		AND NOT EXISTS (SELECT 1 FROM cases c WHERE c.run_id = r.run_id AND c.case_id = r.case_id)
		ORDER BY r.case_id, r.target, r.epoch`
	scoresOfCases = `SELECT ` + scoreColumnsS + ` FROM cases c CROSS JOIN LATERAL (
			SELECT * FROM scores s WHERE s.run_id = c.run_id AND s.scoring = $2 AND s.case_id = c.case_id
			ORDER BY s.target, s.epoch, s.scorer OFFSET 0) s
		WHERE c.run_id = $1 ORDER BY c.line, c.case_id, s.target, s.epoch, s.scorer`
	scoresOfUnknownCases = `SELECT ` + scoreColumns + ` FROM scores s WHERE s.run_id = $1 AND s.scoring = $2
		AND NOT EXISTS (SELECT 1 FROM cases c WHERE c.run_id = s.run_id AND c.case_id = s.case_id)
		ORDER BY s.case_id, s.target, s.epoch, s.scorer`
)

// Results streams a run's results in dataset order (see the package
// documentation), from one consistent snapshot.
func (d *DB) Results(ctx context.Context, runID string, fn func(record.Result) error) error {
	err := d.read(ctx, func(tx pgx.Tx) error {
		for _, q := range []string{resultsOfCases, resultsOfUnknownCases} {
			rows, err := tx.Query(ctx, q, runID)
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
	err := scanResult(d.pool.QueryRow(ctx, `SELECT `+resultColumns+` FROM results
		WHERE run_id = $1 AND case_id = $2 AND target = $3 AND epoch = $4`, runID, b(key.CaseID), b(key.Target), key.Epoch), &r)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, fmt.Errorf("result (case %q, target %q, epoch %d) of run %s: %w", key.CaseID, key.Target, key.Epoch, runID, store.ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("reading a result of run %s: %w", runID, err)
	}
	return &r, nil
}

// DoneKeys returns the keys of every stored result of a run (empty, not an
// error, for a run with none).
func (d *DB) DoneKeys(ctx context.Context, runID string) (map[record.Key]struct{}, error) {
	rows, err := d.pool.Query(ctx, `SELECT case_id, target, epoch FROM results WHERE run_id = $1`, runID)
	if err != nil {
		return nil, fmt.Errorf("reading result keys of run %s: %w", runID, err)
	}
	keys := map[record.Key]struct{}{}
	err = each(ctx, rows, func() error {
		var k record.Key
		if err := rows.Scan(bstr{&k.CaseID}, bstr{&k.Target}, &k.Epoch); err != nil {
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
	err := d.read(ctx, func(tx pgx.Tx) error {
		for _, q := range []string{scoresOfCases, scoresOfUnknownCases} {
			rows, err := tx.Query(ctx, q, runID, scoring)
			if err != nil {
				return err
			}
			err = each(ctx, rows, func() error {
				var s record.Score
				if err := scanScore(rows, &s); err != nil {
					return err
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
