package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// browseBudget bounds the results one BrowseResults call examines: a
// filter that matches little returns a short page and a cursor instead of
// scanning a million results in one request.
const browseBudget = 20_000

// cursor is the stores' shared browse position.
type cursor = store.Cursor

// CursorPosition decodes where a cursor stands.
func (d *DB) CursorPosition(cursor string) (string, int, bool) { return store.CursorPosition(cursor) }

// The columns of a ResultRow, for a query where r is the result and p its
// primary score in the scoring (LEFT JOIN: NULL when none).
var rowColumns = `r.case_id, r.target, r.epoch, substr(CAST(r.raw AS BLOB), 1, ` + snippetBytes + `), octet_length(r.raw),
	coalesce(json_array_length(r.tool_calls), 0), p.scorer IS NOT NULL, coalesce(p.scorer, ''), coalesce(p.pass, 0),
	coalesce(p.value, 0), coalesce(p.shape, ''), coalesce(p.kind, ''), r.latency_ms, r.cost_usd, r.from_cache, r.error_kind`

var snippetBytes = fmt.Sprint(store.SnippetBytes)

// primaryJoin joins a result r with its primary score p in scoring :s
// (the first by scorer name should a result have two).
const primaryJoin = ` LEFT JOIN scores p ON p.id = (SELECT q.id FROM scores q WHERE q.run_id = r.run_id AND q.scoring = :s
	AND q.case_id = r.case_id AND q.target = r.target AND q.epoch = r.epoch AND q.is_primary = 1 ORDER BY q.scorer LIMIT 1)`

// resultConds are the result-level conditions of f, with their named
// arguments (:s, the scoring, is the caller's).
func resultConds(f store.ResultFilter) (string, []any, error) {
	var b strings.Builder
	var args []any
	if f.Target != "" {
		b.WriteString(` AND r.target = :target`)
		args = append(args, sql.Named("target", f.Target))
	}
	var pass bool
	switch f.Verdict {
	case "":
	case "pass":
		pass = true
	case "fail":
	default:
		return "", nil, fmt.Errorf("verdict %q: want pass or fail", f.Verdict)
	}
	switch {
	case f.Scorer != "":
		b.WriteString(` AND EXISTS (SELECT 1 FROM scores v WHERE v.run_id = r.run_id AND v.scoring = :s AND v.case_id = r.case_id
			AND v.target = r.target AND v.epoch = r.epoch AND v.scorer = :scorer`)
		args = append(args, sql.Named("scorer", f.Scorer))
		if f.Verdict != "" {
			b.WriteString(` AND v.pass = :pass`)
			args = append(args, sql.Named("pass", pass))
		}
		b.WriteString(`)`)
	case f.Verdict != "":
		b.WriteString(` AND p.pass = :pass`)
		args = append(args, sql.Named("pass", pass))
	}
	if f.Shape != "" {
		b.WriteString(` AND p.shape = :shape`)
		args = append(args, sql.Named("shape", f.Shape))
	}
	if f.Kind != "" {
		b.WriteString(` AND p.kind = :kind`)
		args = append(args, sql.Named("kind", f.Kind))
	}
	if f.Text != "" {
		// A NUL would end LIKE's pattern (SQLite reads it as a C string),
		// so "\x00" would match everything: such a text takes instr().
		if utf8.ValidString(f.Text) && !strings.ContainsRune(f.Text, utf8.RuneError) && !strings.Contains(f.Text, "\x00") {
			// LIKE folds ASCII letters and compares characters (bytes that
			// are not UTF-8 read as U+FFFD, which the text has not): three
			// times faster than lower() and instr(), which copy the output.
			b.WriteString(` AND (r.raw LIKE :text ESCAPE '\' OR coalesce(r.tool_calls, '') LIKE :text ESCAPE '\'`)
			args = append(args, sql.Named("text", "%"+likeEscape(f.Text)+"%"))
		} else {
			// lower() folds ASCII letters and instr() compares bytes: the
			// text's bytes that are not UTF-8 match only themselves.
			b.WriteString(` AND (instr(lower(r.raw), :text) > 0 OR instr(lower(coalesce(r.tool_calls, '')), :text) > 0`)
			args = append(args, sql.Named("text", asciiLower(f.Text)))
		}
		if len(f.TextCases) > 0 {
			ids, err := json.Marshal(f.TextCases)
			if err != nil {
				return "", nil, err
			}
			b.WriteString(` OR r.case_id IN (SELECT value FROM json_each(:textcases))`)
			args = append(args, sql.Named("textcases", string(ids)))
		}
		b.WriteString(`)`)
	}
	return b.String(), args, nil
}

// caseConds are the case-level conditions of f on the cases table c.
func caseConds(f store.ResultFilter) (string, []any, error) {
	var b strings.Builder
	var args []any
	if f.Tag != "" {
		k, v, ok := strings.Cut(f.Tag, "=")
		if !ok {
			return "", nil, fmt.Errorf("tag %q: want key=value", f.Tag)
		}
		b.WriteString(` AND EXISTS (SELECT 1 FROM json_each(c.tags) t WHERE t.key = :tagkey AND t.value = :tagvalue)`)
		args = append(args, sql.Named("tagkey", k), sql.Named("tagvalue", v))
	}
	if f.CaseIDs != nil {
		ids, err := json.Marshal(f.CaseIDs)
		if err != nil {
			return "", nil, err
		}
		b.WriteString(` AND c.case_id IN (SELECT value FROM json_each(:caseids))`)
		args = append(args, sql.Named("caseids", string(ids)))
	}
	return b.String(), args, nil
}

// likeEscape escapes LIKE's wildcards (with '\').
func likeEscape(s string) string {
	return strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(s)
}

// asciiLower folds ASCII letters, as SQLite's lower() does.
func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

// BrowseResults lists the results of a run that match f, a page at a
// time. Results of recorded cases are read in windows of cases (in line
// order, through cases_by_line, the case-level conditions applied to the
// cases), each window's results joined through the results' unique key;
// then the results of cases never recorded, in windows of the results'
// unique key. Each call examines about browseBudget results at most.
func (d *DB) BrowseResults(ctx context.Context, runID string, scoring int, f store.ResultFilter, after string, limit int) ([]store.ResultRow, string, error) {
	cur, err := store.DecodeCursor(after)
	if err != nil {
		return nil, "", err
	}
	if limit <= 0 {
		limit = 50
	}
	rconds, rargs, err := resultConds(f)
	if err != nil {
		return nil, "", err
	}
	cconds, cargs, err := caseConds(f)
	if err != nil {
		return nil, "", err
	}
	if scoring <= 0 {
		if scoring, err = d.LatestScoring(ctx, runID); err != nil {
			return nil, "", err
		}
	}
	var rows []store.ResultRow
	var next string
	err = d.read(ctx, func(tx *sql.Tx) error {
		var perCase, epochs int
		err := tx.QueryRowContext(ctx, `SELECT json_array_length(targets), epochs FROM runs WHERE id = ?`, runID).Scan(&perCase, &epochs)
		if errors.Is(err, sql.ErrNoRows) {
			return fmt.Errorf("run %s: %w", runID, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		perCase = max(1, perCase*max(1, epochs))
		b := &browse{ctx: ctx, tx: tx, run: runID, scoring: scoring, rconds: rconds, rargs: rargs, limit: limit, caseIDs: f.CaseIDs != nil}
		budget := browseBudget
		if cur == nil || cur.Known {
			// Windows grow from what one page needs when every result
			// matches, doubling while they match little.
			window := limit/perCase + 1
			for budget > 0 && len(b.rows) < limit {
				n, c, err := b.knownWindow(cur, cconds, cargs, max(1, min(window, budget/perCase)))
				if err != nil {
					return err
				}
				if c == nil { // no case left
					cur = nil
					break
				}
				cur, budget, window = c, budget-n*perCase, window*2
			}
			if cur != nil {
				rows, next = b.rows, cur.Encode()
				return nil
			}
		}
		if f.Tag != "" {
			// Results without a case have no tags.
			rows = b.rows
			return nil
		}
		if cur == nil && (budget <= 0 || len(b.rows) >= limit) {
			rows, next = b.rows, cursor{Start: true}.Encode()
			return nil
		}
		for budget > 0 && len(b.rows) < limit {
			n, c, err := b.unknownWindow(cur, f.CaseIDs, max(1, budget/perCase))
			if err != nil {
				return err
			}
			if c == nil {
				cur = nil
				break
			}
			cur, budget = c, budget-n*perCase
		}
		rows = b.rows
		if cur != nil {
			next = cur.Encode()
		}
		return nil
	})
	if err != nil {
		if errors.Is(err, store.ErrNotFound) {
			return nil, "", err
		}
		return nil, "", fmt.Errorf("listing results of run %s: %w", runID, err)
	}
	return rows, next, nil
}

// browse is one BrowseResults call's state.
type browse struct {
	ctx     context.Context
	tx      *sql.Tx
	run     string
	scoring int
	rconds  string
	rargs   []any
	limit   int
	caseIDs bool // the case conditions name a list of cases
	rows    []store.ResultRow
}

// knownWindow reads the results after cur among up to n recorded cases
// (those matching the case conditions) into b.rows, up to the page's
// limit. It returns how many cases it took and the cursor after what it
// examined; a nil cursor when no case was left.
func (b *browse) knownWindow(cur *cursor, cconds string, cargs []any, n int) (int, *cursor, error) {
	// The window's cases: from the cursor's case (itself included when the
	// cursor is mid-case).
	from, args := ``, []any{sql.Named("run", b.run), sql.Named("n", n)}
	if cur != nil {
		op := ">="
		if cur.Whole {
			op = ">"
		}
		from = ` AND (c.line, c.case_id) ` + op + ` (:line, :case)`
		args = append(args, sql.Named("line", cur.Line), sql.Named("case", cur.Case))
	}
	args = append(args, cargs...)
	var first, last cursor
	cases := 0
	q := `SELECT c.line, c.case_id FROM cases c WHERE c.run_id = :run` + from + cconds + ` ORDER BY c.line, c.case_id LIMIT :n`
	if b.caseIDs {
		// A list of cases: read them by their keys, not the whole run's.
		q = `SELECT c.line, c.case_id FROM (SELECT DISTINCT value AS id FROM json_each(:caseids)) j CROSS JOIN cases c
			ON c.run_id = :run AND c.case_id = j.id WHERE 1` + from + cconds + ` ORDER BY c.line, c.case_id LIMIT :n`
	}
	rows, err := b.tx.QueryContext(b.ctx, q, args...)
	if err != nil {
		return 0, nil, err
	}
	err = each(b.ctx, rows, func() error {
		last = cursor{Known: true, Whole: true}
		if err := rows.Scan(&last.Line, &last.Case); err != nil {
			return err
		}
		if cases == 0 {
			first = last
		}
		cases++
		return nil
	})
	if err != nil {
		return 0, nil, err
	}
	if cases == 0 {
		return 0, nil, nil
	}
	// The window's results: cases between first and last (with the case
	// conditions again), after the cursor's result when mid-case.
	src := `cases c`
	if b.caseIDs {
		src = `(SELECT DISTINCT value AS id FROM json_each(:caseids)) j CROSS JOIN cases c ON c.run_id = :run AND c.case_id = j.id`
	}
	q = `SELECT c.line, ` + rowColumns + ` FROM ` + src + ` CROSS JOIN results r ON r.run_id = c.run_id AND r.case_id = c.case_id` + primaryJoin + `
		WHERE c.run_id = :run AND (c.line, c.case_id) >= (:fline, :fcase) AND (c.line, c.case_id) <= (:lline, :lcase)` + cconds + b.rconds
	args = []any{sql.Named("run", b.run), sql.Named("s", b.scoring), sql.Named("fline", first.Line), sql.Named("fcase", first.Case),
		sql.Named("lline", last.Line), sql.Named("lcase", last.Case), sql.Named("lim", b.limit-len(b.rows))}
	if cur != nil && !cur.Whole {
		q += ` AND (c.line, c.case_id, r.target, r.epoch) > (:line, :case, :target, :epoch)`
		args = append(args, sql.Named("line", cur.Line), sql.Named("case", cur.Case), sql.Named("target", cur.Target), sql.Named("epoch", cur.Epoch))
	}
	args = append(append(args, cargs...), b.rargs...)
	q += ` ORDER BY c.line, c.case_id, r.target, r.epoch LIMIT :lim`
	full, lastRow, err := b.scan(q, args)
	if err != nil {
		return 0, nil, err
	}
	if full {
		// The page filled inside the window: continue after its last row.
		return cases, &cursor{Known: true, Line: lastRow.Line, Case: lastRow.CaseID, Target: lastRow.Target, Epoch: lastRow.Epoch}, nil
	}
	return cases, &last, nil
}

// unknownWindow reads the results of cases never recorded, after cur
// (from the start when cur is not among them), among the next n case IDs
// of the run's results. It returns how many case IDs it took and the
// cursor after what it examined; a nil cursor when none was left.
func (b *browse) unknownWindow(cur *cursor, caseIDs []string, n int) (int, *cursor, error) {
	from, args := ``, []any{sql.Named("run", b.run), sql.Named("s", b.scoring), sql.Named("n", n), sql.Named("lim", b.limit-len(b.rows))}
	if cur != nil && !cur.Known && !cur.Start {
		if cur.Whole {
			from = ` AND w.case_id > :case`
			args = append(args, sql.Named("case", cur.Case))
		} else {
			from = ` AND (w.case_id, w.target, w.epoch) > (:case, :target, :epoch)`
			args = append(args, sql.Named("case", cur.Case), sql.Named("target", cur.Target), sql.Named("epoch", cur.Epoch))
		}
	}
	if caseIDs != nil {
		// A list of cases: their results by key, in one query.
		ids, err := json.Marshal(caseIDs)
		if err != nil {
			return 0, nil, err
		}
		q := `SELECT 0, ` + rowColumns + ` FROM (SELECT DISTINCT value AS id FROM json_each(:caseids)) j
			CROSS JOIN results r ON r.run_id = :run AND r.case_id = j.id` + primaryJoin + `
			WHERE NOT EXISTS (SELECT 1 FROM cases c WHERE c.run_id = r.run_id AND c.case_id = r.case_id)` +
			strings.ReplaceAll(from, "w.", "r.") + b.rconds + ` ORDER BY r.case_id, r.target, r.epoch LIMIT :lim`
		full, lastRow, err := b.scan(q, append(append(args, sql.Named("caseids", string(ids))), b.rargs...))
		if err != nil || !full {
			return 0, nil, err
		}
		return 0, &cursor{Case: lastRow.CaseID, Target: lastRow.Target, Epoch: lastRow.Epoch}, nil
	}
	// The window: the next n case IDs among the results (from the cursor's
	// case when it is mid-case), each walked once in the results' unique
	// key, and those without a case row.
	lo := ``
	if cur != nil && !cur.Known && !cur.Start {
		lo = ` AND case_id > :case`
		if !cur.Whole {
			lo = ` AND case_id >= :case`
		}
	}
	var last sql.NullString
	var got int
	if err := b.tx.QueryRowContext(b.ctx, `SELECT max(id), count(*) FROM (SELECT DISTINCT case_id AS id FROM results
		WHERE run_id = :run`+lo+` ORDER BY case_id LIMIT :n)`, args...).Scan(&last, &got); err != nil {
		return 0, nil, err
	}
	if got == 0 {
		return 0, nil, nil
	}
	q := `SELECT 0, ` + rowColumns + ` FROM (SELECT DISTINCT case_id AS id FROM results WHERE run_id = :run` + lo + ` AND case_id <= :last) d
		CROSS JOIN results r ON r.run_id = :run AND r.case_id = d.id` + primaryJoin + `
		WHERE NOT EXISTS (SELECT 1 FROM cases c WHERE c.run_id = :run AND c.case_id = d.id)` +
		strings.ReplaceAll(from, "w.", "r.") + b.rconds + ` ORDER BY r.case_id, r.target, r.epoch LIMIT :lim`
	full, lastRow, err := b.scan(q, append(append(args, sql.Named("last", last.String)), b.rargs...))
	if err != nil {
		return 0, nil, err
	}
	if full {
		return got, &cursor{Case: lastRow.CaseID, Target: lastRow.Target, Epoch: lastRow.Epoch}, nil
	}
	return got, &cursor{Whole: true, Case: last.String}, nil
}

// scan appends the rows of q to b.rows and reports whether the page is
// full, with the last row read.
func (b *browse) scan(q string, args []any) (bool, store.ResultRow, error) {
	rows, err := b.tx.QueryContext(b.ctx, q, args...)
	if err != nil {
		return false, store.ResultRow{}, err
	}
	var last store.ResultRow
	err = each(b.ctx, rows, func() error {
		var r store.ResultRow
		var snippet []byte
		if err := rows.Scan(&r.Line, &r.CaseID, &r.Target, &r.Epoch, &snippet, &r.RawBytes, &r.ToolCalls, &r.Scored, &r.Scorer, &r.Pass,
			&r.Value, &r.Shape, &r.Kind, &r.LatencyMS, &r.CostUSD, &r.FromCache, &r.ErrorKind); err != nil {
			return err
		}
		r.Snippet = cutSnippet(snippet, r.RawBytes)
		b.rows = append(b.rows, r)
		last = r
		return nil
	})
	if err != nil {
		return false, last, err
	}
	return len(b.rows) >= b.limit, last, nil
}

// cutSnippet drops a rune cut in half at the end of a snippet of a longer
// output (bytes that are not UTF-8 are kept as they are).
func cutSnippet(b []byte, whole int) string {
	if len(b) < whole {
		j := len(b) - 1
		for j > 0 && len(b)-j < utf8.UTFMax && !utf8.RuneStart(b[j]) {
			j--
		}
		if j >= 0 && !utf8.FullRune(b[j:]) {
			b = b[:j]
		}
	}
	return string(b)
}

// CaseResults returns a run's case and its results, whole.
func (d *DB) CaseResults(ctx context.Context, runID, caseID string) (*record.Case, []record.Result, error) {
	var c *record.Case
	var rs []record.Result
	err := d.read(ctx, func(tx *sql.Tx) error {
		cs := record.Case{RunID: runID, ID: caseID}
		var tags sql.NullString
		var weight sql.NullFloat64
		err := tx.QueryRowContext(ctx, `SELECT line, expected, tags, weight FROM cases WHERE run_id = ? AND case_id = ?`, runID, caseID).
			Scan(&cs.Line, &cs.Expected, &tags, &weight)
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		default:
			if tags.Valid {
				if err := json.Unmarshal([]byte(tags.String), &cs.Tags); err != nil {
					return fmt.Errorf("case %q: tags are not a JSON object: %w", caseID, err)
				}
			}
			if weight.Valid {
				cs.Weight = &weight.Float64
			}
			c = &cs
		}
		rows, err := tx.QueryContext(ctx, `SELECT `+resultColumns+` FROM results WHERE run_id = ? AND case_id = ? ORDER BY target, epoch`, runID, caseID)
		if err != nil {
			return err
		}
		return each(ctx, rows, func() error {
			var r record.Result
			if err := scanResult(rows, &r); err != nil {
				return err
			}
			rs = append(rs, r)
			return nil
		})
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading case %q of run %s: %w", caseID, runID, err)
	}
	if c == nil && len(rs) == 0 {
		return nil, nil, fmt.Errorf("case %q of run %s: %w", caseID, runID, store.ErrNotFound)
	}
	return c, rs, nil
}

// CaseScores returns every score of a run's case, latest scoring first.
func (d *DB) CaseScores(ctx context.Context, runID, caseID string) ([]store.CaseScore, error) {
	rows, err := d.r.QueryContext(ctx, `SELECT `+scoreColumnsS+`, coalesce(g.status = 'pending', 0)
		FROM scores s INDEXED BY scores_by_result LEFT JOIN scorings g ON g.run_id = s.run_id AND g.scoring = s.scoring
		WHERE s.run_id = ? AND s.case_id = ? ORDER BY s.scoring DESC, s.target, s.epoch, s.scorer`, runID, caseID)
	if err != nil {
		return nil, fmt.Errorf("reading the scores of case %q of run %s: %w", caseID, runID, err)
	}
	var out []store.CaseScore
	err = each(ctx, rows, func() error {
		var s store.CaseScore
		var fields string
		if err := rows.Scan(&s.RunID, &s.Scoring, &s.CaseID, &s.Target, &s.Epoch, &s.Scorer, &s.Primary, &s.Pass, &s.Value,
			&s.Shape, &s.Kind, &s.Reason, &s.ErrorCost, &s.JudgeCost, &s.ParseNote, &fields, &s.JudgeSaved, &s.Pending); err != nil {
			return err
		}
		if fields != "" {
			if err := json.Unmarshal([]byte(fields), &s.Fields); err != nil {
				return fmt.Errorf("score %q: fields are not a JSON list: %w", s.Scorer, err)
			}
		}
		out = append(out, s)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("reading the scores of case %q of run %s: %w", caseID, runID, err)
	}
	return out, nil
}
