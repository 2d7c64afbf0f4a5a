// Package export owns a run's rows as a pandas or DuckDB user loads them:
// one row per case × target × epoch, joined from the store's results, one
// scoring's scores (every scorer's verdict as columns), the recorded cases
// (expected value, tags) and, read again from the run's dataset, the case's
// input fields; and the writers that put those rows in a file (JSONL, CSV,
// Parquet through parquet-go), each to a temporary file renamed into place
// so no half-written export is ever left. Rows stream from the store: memory
// does not grow with the run.
//
// It reads the store and the dataset; it must not import the runner, the
// providers, the scorers, analysis or report.
package export

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/assay-eval/assay/internal/record"
)

// Verdict is one scorer's verdict on a row.
type Verdict struct {
	Pass   bool
	Value  float64
	Shape  string
	Kind   string
	Reason string
	// Fields is a field scorer's per-field outcome as a JSON object, field
	// → ok | wrong | missing (nil for other scorers).
	Fields json.RawMessage
	// ParseNote is what the scoring's parser tolerated around the value
	// (fenced, prose; "" when nothing).
	ParseNote string
}

// Row is one case × target × epoch of a run.
type Row struct {
	RunID  string
	CaseID string
	Line   int
	Target string
	Epoch  int
	// Inputs is the case's fields as a JSON object; nil when inputs are
	// not exported.
	Inputs json.RawMessage
	// Expected is the case's expected value as JSON (nil when it has none).
	Expected json.RawMessage
	// Tags is the case's slice keys as a JSON object (nil when none).
	Tags       json.RawMessage
	Raw        string
	Parsed     json.RawMessage // nil when the output was not parsed
	ParseError string
	// ToolCalls is the calls the model made, in order, as a JSON list of
	// {id, name, arguments} (arguments the text the model wrote, valid
	// JSON or not); nil when it made none.
	ToolCalls json.RawMessage
	// Turns is an agent loop's trajectory as a JSON list, one object per
	// model call (its text, calls, the tool results that answered them,
	// tokens, cost, latency: record.Turn); nil for a single call.
	Turns        json.RawMessage
	FinishReason string
	// Scorer names the headline scorer ("primary" for a combination of
	// several); Headline is its verdict, nil when the row has none.
	Scorer   string
	Headline *Verdict
	// Scores are the verdicts in the order of Columns.Scorers; nil where a
	// scorer did not score this row.
	Scores       []*Verdict
	InputTokens  int
	OutputTokens int
	CachedTokens int
	CostUSD      float64 // paid: 0 for a reply served from the cache
	SavedUSD     float64 // a cached reply's price, not billed again
	LatencyMS    float64
	FirstTokenMS float64
	FromCache    bool
	Model        string
	ErrorKind    string
	Error        string
	Attempts     int
	Retries      int
}

// Columns fixes the shape of an export: the scorers with a column group
// each, in this order, and whether inputs are exported.
type Columns struct {
	Scorers []string
	Inputs  bool
}

// Source is what Rows reads besides the store.
type Source struct {
	Store   record.Reader
	Run     *record.Run
	Scoring int
	Columns Columns
	// Inputs gives a case's fields (nil when Columns.Inputs is false).
	Inputs *Inputs
}

// Rows streams the rows of one scoring of a run to fn in the store's order
// (the case's line in the dataset, case ID, target, epoch). Results, scores
// and cases are read as three ordered streams and merged, so memory does
// not grow with the run.
func Rows(ctx context.Context, src Source, fn func(*Row) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	scores := make(chan record.Score, 512)
	cases := make(chan record.Case, 64)
	errs := make(chan error, 2)
	go func() {
		defer close(scores)
		errs <- src.Store.Scores(ctx, src.Run.ID, src.Scoring, func(s record.Score) error {
			select {
			case scores <- s:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	go func() {
		defer close(cases)
		errs <- src.Store.Cases(ctx, src.Run.ID, func(c record.Case) error {
			select {
			case cases <- c:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()

	index := make(map[string]int, len(src.Columns.Scorers))
	for i, name := range src.Columns.Scorers {
		index[name] = i
	}
	var cur *record.Case
	var tags json.RawMessage
	var pending *record.Score
	row := &Row{}
	err := src.Store.Results(ctx, src.Run.ID, func(r record.Result) error {
		for cur == nil || cur.ID != r.CaseID {
			c, ok := <-cases
			if !ok {
				return fmt.Errorf("result (case %q, target %q, epoch %d) has no recorded case, or is out of the cases' order", r.CaseID, r.Target, r.Epoch)
			}
			cur, tags = &c, nil
			if len(c.Tags) > 0 {
				tags, _ = json.Marshal(c.Tags)
			}
		}
		*row = Row{
			RunID: r.RunID, CaseID: r.CaseID, Line: cur.Line, Target: r.Target, Epoch: r.Epoch,
			Expected: nullable(cur.Expected), Tags: tags,
			Raw: r.Raw, ParseError: r.ParseError, FinishReason: r.FinishReason,
			Scores:      make([]*Verdict, len(src.Columns.Scorers)),
			InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, CachedTokens: r.CachedTokens,
			CostUSD: r.CostUSD, SavedUSD: r.SavedUSD, LatencyMS: r.LatencyMS, FirstTokenMS: r.FirstTokenMS, FromCache: r.FromCache,
			Model: r.Model, ErrorKind: r.ErrorKind, Error: r.Error, Attempts: r.Attempts, Retries: r.Retries,
		}
		if r.Parsed != "" {
			row.Parsed = json.RawMessage(r.Parsed)
			if !json.Valid(row.Parsed) {
				// Stored parsed output is JSON; anything else is kept as a string.
				row.Parsed, _ = json.Marshal(r.Parsed)
			}
		}
		var err error
		if row.ToolCalls, err = listJSON(r.ToolCalls); err != nil {
			return fmt.Errorf("result (case %q, target %q, epoch %d): tool calls: %w", r.CaseID, r.Target, r.Epoch, err)
		}
		if row.Turns, err = listJSON(r.Turns); err != nil {
			return fmt.Errorf("result (case %q, target %q, epoch %d): turns: %w", r.CaseID, r.Target, r.Epoch, err)
		}
		if src.Inputs != nil {
			in, err := src.Inputs.Fields(r.CaseID)
			if err != nil {
				return err
			}
			row.Inputs = in
		}
		for {
			if pending == nil {
				s, ok := <-scores
				if !ok {
					break
				}
				pending = &s
			}
			if pending.CaseID != r.CaseID || pending.Target != r.Target || pending.Epoch != r.Epoch {
				break
			}
			v := &Verdict{Pass: pending.Pass, Value: pending.Value, Shape: pending.Shape, Kind: pending.Kind, Reason: pending.Reason,
				Fields: fieldsObject(pending.Fields), ParseNote: pending.ParseNote}
			if i, ok := index[pending.Scorer]; ok {
				row.Scores[i] = v
			}
			// The headline: the combination of several primary scorers
			// when there is one, else the primary scorer.
			if pending.Scorer == "primary" || (pending.Primary && row.Scorer != "primary" && row.Headline == nil) {
				row.Scorer, row.Headline = pending.Scorer, v
			}
			pending = nil
		}
		return fn(row)
	})
	cancel()
	// Drain so both readers finish, then collect their errors.
	for range scores {
	}
	for range cases {
	}
	var readErr error
	for range 2 {
		if e := <-errs; e != nil && !errors.Is(e, context.Canceled) {
			readErr = errors.Join(readErr, e)
		}
	}
	if err != nil {
		return fmt.Errorf("exporting run %s: %w", src.Run.ID, err)
	}
	if readErr != nil {
		return fmt.Errorf("exporting run %s: %w", src.Run.ID, readErr)
	}
	if pending != nil {
		return fmt.Errorf("exporting run %s: a score (case %q, target %q, epoch %d, scorer %q) matches no result in order", src.Run.ID, pending.CaseID, pending.Target, pending.Epoch, pending.Scorer)
	}
	return nil
}

func nullable(b []byte) json.RawMessage {
	if len(b) == 0 || string(b) == "null" {
		return nil
	}
	return json.RawMessage(b)
}

// fieldsObject is per-field verdicts as one JSON object in the scorer's
// field order (nil for none), the shape a dataframe user expands into
// columns.
func fieldsObject(fs []record.FieldVerdict) json.RawMessage {
	if len(fs) == 0 {
		return nil
	}
	var b []byte
	b = append(b, '{')
	for i, f := range fs {
		if i > 0 {
			b = append(b, ',')
		}
		k, _ := json.Marshal(f.Field)
		v, _ := json.Marshal(f.Status)
		b = append(append(append(b, k...), ':'), v...)
	}
	return append(b, '}')
}

// listJSON is a result's tool calls or turns as a JSON list, nil when it
// has none.
func listJSON[E any](list []E) (json.RawMessage, error) {
	if len(list) == 0 {
		return nil, nil
	}
	return json.Marshal(list)
}
