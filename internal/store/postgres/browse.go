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

// browseBudget bounds the results one BrowseResults call examines: a
// filter that matches little returns a short page and a cursor instead of
// scanning a million results in one request (the SQLite store's bound, so
// both stores return the same pages and cursors).
const browseBudget = 20_000

// cursor is the stores' shared browse position.
type cursor = store.Cursor

// CursorPosition decodes where a cursor stands.
func (d *DB) CursorPosition(cursor string) (string, int, bool) { return store.CursorPosition(cursor) }

// The columns of a ResultRow, for a query where r is the result and p its
// primary score in the scoring (LEFT JOIN: NULLs when none).
var rowColumns = `r.case_id, r.target, r.epoch, substring(r.raw FROM 1 FOR ` + fmt.Sprint(store.SnippetBytes) + `), octet_length(r.raw),
	coalesce(json_array_length(convert_from(r.tool_calls, 'UTF8')::json), 0), p.scorer IS NOT NULL, coalesce(p.scorer, ''::bytea),
	coalesce(p.pass, false), coalesce(p.value, 0), coalesce(p.shape, ''::bytea), coalesce(p.kind, ''::bytea),
	r.latency_ms, r.cost_usd, r.from_cache, r.error_kind`

// primaryJoin joins a result r with its primary score p in scoring @s
// (the first by scorer name should a result have two).
const primaryJoin = ` LEFT JOIN LATERAL (SELECT q.scorer, q.pass, q.value, q.shape, q.kind FROM scores q
	WHERE q.run_id = r.run_id AND q.scoring = @s AND q.case_id = r.case_id AND q.target = r.target AND q.epoch = r.epoch
	AND q.is_primary ORDER BY q.scorer LIMIT 1) p ON true`

// resultConds are the result-level conditions of f, with their named
// arguments (@s, the scoring, is the caller's).
func resultConds(f store.ResultFilter) (string, pgx.NamedArgs, error) {
	var b strings.Builder
	args := pgx.NamedArgs{}
	if f.Target != "" {
		b.WriteString(` AND r.target = @target`)
		args["target"] = []byte(f.Target)
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
		b.WriteString(` AND EXISTS (SELECT 1 FROM scores v WHERE v.run_id = r.run_id AND v.scoring = @s AND v.case_id = r.case_id
			AND v.target = r.target AND v.epoch = r.epoch AND v.scorer = @scorer`)
		args["scorer"] = []byte(f.Scorer)
		if f.Verdict != "" {
			b.WriteString(` AND v.pass = @pass`)
			args["pass"] = pass
		}
		b.WriteString(`)`)
	case f.Verdict != "":
		b.WriteString(` AND p.pass = @pass`)
		args["pass"] = pass
	}
	if f.Shape != "" {
		b.WriteString(` AND p.shape = @shape`)
		args["shape"] = []byte(f.Shape)
	}
	if f.Kind != "" {
		b.WriteString(` AND p.kind = @kind`)
		args["kind"] = []byte(f.Kind)
	}
	if f.Text != "" {
		b.WriteString(` AND (` + textMatch("r.raw", f.Text) + ` OR ` + textMatch("r.tool_calls", f.Text))
		if len(f.TextCases) > 0 {
			b.WriteString(` OR r.case_id = ANY(@textcases::bytea[])`)
			args["textcases"] = byteas(f.TextCases)
		}
		b.WriteString(`)`)
		needle := escapeBytes(asciiLower(f.Text))
		args["text"] = needle
		args["textre"] = alignedPattern(needle)
	}
	return b.String(), args, nil
}

// textMatch is the condition that the BYTEA column col holds text, ASCII
// letters folded, as SQLite's LIKE and instr(lower()) find it (byte for
// byte otherwise; instr tries the start of the output and then the starts
// of characters only, so a text that begins with a UTF-8 continuation byte
// matches at the start alone). PostgreSQL has no lower() for BYTEA, so the
// column is read in BYTEA's escape format (NUL and bytes of 128 and more
// as \ooo, a backslash doubled, every other byte itself: pure ASCII, which
// lower() under the C collation folds as SQLite does) and @text is the
// folded text escaped the same way. A match found there is a match of
// bytes unless it starts inside an escape, which only a needle starting
// with a backslash or an octal digit can, and only in a column whose
// escaped form holds a backslash: there @textre, the needle after a
// prefix of whole escapes, decides.
func textMatch(col, text string) string {
	h := `lower(encode(` + col + `, 'escape') COLLATE "C")`
	if c := text[0]; 0x80 <= c && c < 0xc0 {
		return `coalesce(starts_with(` + h + `, @text), false)`
	}
	return `CASE WHEN ` + col + ` IS NULL OR strpos(` + h + `, @text) = 0 THEN false
		WHEN strpos(` + h + `, '\') = 0 THEN true ELSE ` + h + ` ~ @textre END`
}

// escapeBytes is s in BYTEA's escape output format.
func escapeBytes(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c == 0 || c >= 0x80:
			fmt.Fprintf(&b, `\%03o`, c)
		case c == '\\':
			b.WriteString(`\\`)
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

// alignedPattern is a regular expression (PostgreSQL's ARE) that finds the
// escaped needle at the start of an escape or a plain byte: whole escapes
// or plain characters, lazily, then the needle, every character of it
// that is not a letter or digit quoted.
func alignedPattern(needle string) string {
	var b strings.Builder
	b.WriteString(`^(?:[^\\]|\\\\|\\[0-7]{3})*?`)
	for i := 0; i < len(needle); i++ {
		c := needle[i]
		if !('a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9') {
			b.WriteByte('\\')
		}
		b.WriteByte(c)
	}
	return b.String()
}

// byteas is ss for a BYTEA[] parameter (empty, never NULL, for none).
func byteas(ss []string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = b(s)
	}
	return out
}

// caseConds are the case-level conditions of f on the cases table c.
func caseConds(f store.ResultFilter) (string, pgx.NamedArgs, error) {
	var b strings.Builder
	args := pgx.NamedArgs{}
	if f.Tag != "" {
		k, v, ok := strings.Cut(f.Tag, "=")
		if !ok {
			return "", nil, fmt.Errorf("tag %q: want key=value", f.Tag)
		}
		b.WriteString(` AND ` + tagMatch(k, v, args))
	}
	if f.CaseIDs != nil {
		b.WriteString(` AND c.case_id = ANY(@caseids::bytea[])`)
		args["caseids"] = byteas(f.CaseIDs)
	}
	return b.String(), args, nil
}

// tagMatch is the condition that case c has tag k with value v. A case's
// tags are stored as encoding/json writes a map[string]string (keys
// sorted, every '"' inside a string escaped), so the pair is in the object
// exactly when `"k":"v"`, each encoded the same way, stands between '{' or
// ',' and ',' or '}': a '"' after '{' or ',' opens a key, never a byte
// inside a string. (PostgreSQL's JSON functions refuse the \u0000 a tag may
// hold, which SQLite's json_each reads.) Stored tags are valid UTF-8 (the
// encoder replaces invalid bytes), so a key or value that is not matches
// nothing, as in SQLite.
func tagMatch(k, v string, args pgx.NamedArgs) string {
	if !utf8.ValidString(k) || !utf8.ValidString(v) {
		return `false`
	}
	ek, _ := json.Marshal(k)
	ev, _ := json.Marshal(v)
	pair := string(ek) + ":" + string(ev)
	var conds []string
	for i, p := range []string{"{" + pair + "}", "{" + pair + ",", "," + pair + "}", "," + pair + ","} {
		name := fmt.Sprintf("tag%d", i)
		args[name] = []byte(p)
		conds = append(conds, `position(@`+name+` IN c.tags) > 0`)
	}
	return `(` + strings.Join(conds, ` OR `) + `)`
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

// with is args and more in one map (neither changed).
func with(args pgx.NamedArgs, more ...pgx.NamedArgs) pgx.NamedArgs {
	out := pgx.NamedArgs{}
	for _, m := range append([]pgx.NamedArgs{args}, more...) {
		for k, v := range m {
			out[k] = v
		}
	}
	return out
}

// BrowseResults lists the results of a run that match f, a page at a
// time, as the SQLite store does (the same pages, the same cursors).
// Results of recorded cases are read in windows of cases (in line order,
// through cases_by_line, the case-level conditions applied to the cases),
// each window's results joined through the results' unique key; then the
// results of cases never recorded, in windows of the results' unique key.
// Each call examines about browseBudget results at most.
func (d *DB) BrowseResults(ctx context.Context, runID string, scoring int, f store.ResultFilter, after string, limit int) ([]store.ResultRow, string, error) {
	cur, err := store.DecodeCursor(after)
	if err != nil {
		return nil, "", err
	}
	if !storableID(runID) {
		return nil, "", fmt.Errorf("run %s: %w", runID, store.ErrNotFound)
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
	err = d.read(ctx, func(tx pgx.Tx) error {
		var targets []byte
		var epochs int
		err := tx.QueryRow(ctx, `SELECT targets, epochs FROM runs WHERE id = $1`, runID).Scan(&targets, &epochs)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("run %s: %w", runID, store.ErrNotFound)
		}
		if err != nil {
			return err
		}
		var names []json.RawMessage
		if err := json.Unmarshal(targets, &names); err != nil {
			return fmt.Errorf("run %s: its targets are not a JSON list: %w", runID, err)
		}
		perCase := max(1, len(names)*max(1, epochs))
		br := &browse{ctx: ctx, tx: tx, run: runID, scoring: scoring, rconds: rconds, rargs: rargs, limit: limit, caseIDs: f.CaseIDs != nil}
		budget := browseBudget
		if cur == nil || cur.Known {
			// Windows grow from what one page needs when every result
			// matches, doubling while they match little.
			window := limit/perCase + 1
			for budget > 0 && len(br.rows) < limit {
				n, c, err := br.knownWindow(cur, cconds, cargs, max(1, min(window, budget/perCase)))
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
				rows, next = br.rows, cur.Encode()
				return nil
			}
		}
		if f.Tag != "" {
			// Results without a case have no tags.
			rows = br.rows
			return nil
		}
		if cur == nil && (budget <= 0 || len(br.rows) >= limit) {
			rows, next = br.rows, cursor{Start: true}.Encode()
			return nil
		}
		for budget > 0 && len(br.rows) < limit {
			n, c, err := br.unknownWindow(cur, f.CaseIDs, max(1, budget/perCase))
			if err != nil {
				return err
			}
			if c == nil {
				cur = nil
				break
			}
			cur, budget = c, budget-n*perCase
		}
		rows = br.rows
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
	tx      pgx.Tx
	run     string
	scoring int
	rconds  string
	rargs   pgx.NamedArgs
	limit   int
	caseIDs bool // the case conditions name a list of cases
	rows    []store.ResultRow
}

// knownWindow reads the results after cur among up to n recorded cases
// (those matching the case conditions) into br.rows, up to the page's
// limit. It returns how many cases it took and the cursor after what it
// examined; a nil cursor when no case was left.
func (br *browse) knownWindow(cur *cursor, cconds string, cargs pgx.NamedArgs, n int) (int, *cursor, error) {
	// The window's cases: from the cursor's case (itself included when the
	// cursor is mid-case).
	from, args := ``, pgx.NamedArgs{"run": br.run, "n": n}
	if cur != nil {
		op := ">="
		if cur.Whole {
			op = ">"
		}
		from = ` AND (c.line, c.case_id) ` + op + ` (@line, @case)`
		args["line"], args["case"] = cur.Line, b(cur.Case)
	}
	var first, last cursor
	cases := 0
	rows, err := br.tx.Query(br.ctx, `SELECT c.line, c.case_id FROM cases c WHERE c.run_id = @run`+from+cconds+
		` ORDER BY c.line, c.case_id LIMIT @n`, with(args, cargs))
	if err != nil {
		return 0, nil, err
	}
	err = each(br.ctx, rows, func() error {
		last = cursor{Known: true, Whole: true}
		if err := rows.Scan(&last.Line, bstr{&last.Case}); err != nil {
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
	q := `SELECT c.line, ` + rowColumns + ` FROM cases c JOIN results r ON r.run_id = c.run_id AND r.case_id = c.case_id` + primaryJoin + `
		WHERE c.run_id = @run AND (c.line, c.case_id) >= (@fline, @fcase) AND (c.line, c.case_id) <= (@lline, @lcase)` + cconds + br.rconds
	args = pgx.NamedArgs{"run": br.run, "s": br.scoring, "fline": first.Line, "fcase": b(first.Case),
		"lline": last.Line, "lcase": b(last.Case), "lim": br.limit - len(br.rows)}
	if cur != nil && !cur.Whole {
		q += ` AND (c.line, c.case_id, r.target, r.epoch) > (@line, @case, @target, @epoch)`
		args["line"], args["case"], args["target"], args["epoch"] = cur.Line, b(cur.Case), b(cur.Target), cur.Epoch
	}
	q += ` ORDER BY c.line, c.case_id, r.target, r.epoch LIMIT @lim`
	full, lastRow, err := br.scan(q, with(args, cargs, br.rargs))
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
func (br *browse) unknownWindow(cur *cursor, caseIDs []string, n int) (int, *cursor, error) {
	from, args := ``, pgx.NamedArgs{"run": br.run, "s": br.scoring, "lim": br.limit - len(br.rows)}
	if cur != nil && !cur.Known && !cur.Start {
		if cur.Whole {
			from = ` AND r.case_id > @case`
			args["case"] = b(cur.Case)
		} else {
			from = ` AND (r.case_id, r.target, r.epoch) > (@case, @target, @epoch)`
			args["case"], args["target"], args["epoch"] = b(cur.Case), b(cur.Target), cur.Epoch
		}
	}
	if caseIDs != nil {
		// A list of cases: their results by key, in one query.
		q := `SELECT 0, ` + rowColumns + ` FROM results r` + primaryJoin + `
			WHERE r.run_id = @run AND r.case_id = ANY(@caseids::bytea[])
			AND NOT EXISTS (SELECT 1 FROM cases c WHERE c.run_id = r.run_id AND c.case_id = r.case_id)` +
			from + br.rconds + ` ORDER BY r.case_id, r.target, r.epoch LIMIT @lim`
		args["caseids"] = byteas(caseIDs)
		full, lastRow, err := br.scan(q, with(args, br.rargs))
		if err != nil || !full {
			return 0, nil, err
		}
		return 0, &cursor{Case: lastRow.CaseID, Target: lastRow.Target, Epoch: lastRow.Epoch}, nil
	}
	// The window: the next n case IDs among the results (from the cursor's
	// case when it is mid-case), each walked once in the results' unique
	// key, and those without a case row.
	lo, largs := ``, pgx.NamedArgs{"run": br.run, "n": n}
	if cur != nil && !cur.Known && !cur.Start {
		lo = ` AND case_id > @case`
		if !cur.Whole {
			lo = ` AND case_id >= @case`
		}
		largs["case"] = b(cur.Case)
	}
	var last []byte
	var got int
	err := br.tx.QueryRow(br.ctx, `SELECT id, count(*) OVER () FROM (SELECT DISTINCT case_id AS id FROM results
		WHERE run_id = @run`+lo+` ORDER BY case_id LIMIT @n) w ORDER BY id DESC LIMIT 1`, largs).Scan(&last, &got)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil, nil
	}
	if err != nil {
		return 0, nil, err
	}
	q := `SELECT 0, ` + rowColumns + ` FROM (SELECT DISTINCT case_id AS id FROM results WHERE run_id = @run` + lo + ` AND case_id <= @last) w
		JOIN results r ON r.run_id = @run AND r.case_id = w.id` + primaryJoin + `
		WHERE NOT EXISTS (SELECT 1 FROM cases c WHERE c.run_id = @run AND c.case_id = w.id)` +
		from + br.rconds + ` ORDER BY r.case_id, r.target, r.epoch LIMIT @lim`
	args["last"] = last
	full, lastRow, err := br.scan(q, with(args, br.rargs))
	if err != nil {
		return 0, nil, err
	}
	if full {
		return got, &cursor{Case: lastRow.CaseID, Target: lastRow.Target, Epoch: lastRow.Epoch}, nil
	}
	return got, &cursor{Whole: true, Case: string(last)}, nil
}

// scan appends the rows of q to br.rows and reports whether the page is
// full, with the last row read.
func (br *browse) scan(q string, args pgx.NamedArgs) (bool, store.ResultRow, error) {
	rows, err := br.tx.Query(br.ctx, q, args)
	if err != nil {
		return false, store.ResultRow{}, err
	}
	err = each(br.ctx, rows, func() error {
		var r store.ResultRow
		var snippet []byte
		if err := rows.Scan(&r.Line, bstr{&r.CaseID}, bstr{&r.Target}, &r.Epoch, &snippet, &r.RawBytes, &r.ToolCalls, &r.Scored, bstr{&r.Scorer}, &r.Pass,
			&r.Value, bstr{&r.Shape}, bstr{&r.Kind}, &r.LatencyMS, &r.CostUSD, &r.FromCache, bstr{&r.ErrorKind}); err != nil {
			return err
		}
		r.Snippet = cutSnippet(snippet, r.RawBytes)
		br.rows = append(br.rows, r)
		return nil
	})
	if err != nil {
		return false, store.ResultRow{}, err
	}
	var last store.ResultRow
	if len(br.rows) > 0 {
		last = br.rows[len(br.rows)-1]
	}
	return len(br.rows) >= br.limit, last, nil
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
	if !storableID(runID) {
		return nil, nil, fmt.Errorf("case %q of run %s: %w", caseID, runID, store.ErrNotFound)
	}
	var c *record.Case
	var rs []record.Result
	err := d.read(ctx, func(tx pgx.Tx) error {
		cs := record.Case{RunID: runID, ID: caseID}
		var tags []byte
		err := tx.QueryRow(ctx, `SELECT line, expected, tags, weight FROM cases WHERE run_id = $1 AND case_id = $2`, runID, b(caseID)).
			Scan(&cs.Line, &cs.Expected, &tags, &cs.Weight)
		switch {
		case errors.Is(err, pgx.ErrNoRows):
		case err != nil:
			return err
		default:
			if tags != nil {
				if err := json.Unmarshal(tags, &cs.Tags); err != nil {
					return fmt.Errorf("case %q: tags are not a JSON object: %w", caseID, err)
				}
			}
			c = &cs
		}
		rows, err := tx.Query(ctx, `SELECT `+resultColumns+` FROM results WHERE run_id = $1 AND case_id = $2 ORDER BY target, epoch`, runID, b(caseID))
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
	if !storableID(runID) {
		return nil, nil
	}
	rows, err := d.pool.Query(ctx, `SELECT `+scoreColumnsS+`, coalesce(g.status = 'pending', false)
		FROM scores s LEFT JOIN scorings g ON g.run_id = s.run_id AND g.scoring = s.scoring
		WHERE s.run_id = $1 AND s.case_id = $2 ORDER BY s.scoring DESC, s.target, s.epoch, s.scorer`, runID, b(caseID))
	if err != nil {
		return nil, fmt.Errorf("reading the scores of case %q of run %s: %w", caseID, runID, err)
	}
	var out []store.CaseScore
	err = each(ctx, rows, func() error {
		var s store.CaseScore
		var fields []byte
		if err := rows.Scan(&s.RunID, &s.Scoring, bstr{&s.CaseID}, bstr{&s.Target}, &s.Epoch, bstr{&s.Scorer}, &s.Primary, &s.Pass, &s.Value,
			bstr{&s.Shape}, bstr{&s.Kind}, bstr{&s.Reason}, &s.ErrorCost, &s.JudgeCost, bstr{&s.ParseNote}, &fields, &s.JudgeSaved, &s.Pending); err != nil {
			return err
		}
		if len(fields) > 0 {
			if err := json.Unmarshal(fields, &s.Fields); err != nil {
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
