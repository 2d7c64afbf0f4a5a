// Package promote owns `assay promote`: failing or labeled-bad production
// traces turned into dataset cases (input, context, the failure reason, the
// expected value left for a labeler), deduplicated against the dataset by
// content and near-duplicates, appended as a new dataset version with their
// provenance.
//
// It reads a score-traces run (its verdicts and labels) and the traces
// from the store, the dataset through internal/dataset, and appends through
// dataset.AppendAll. It must not import the runner or provider
// implementations.
package promote

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/spec"
)

// Provenance fields every promoted case carries, beside the mapped input
// fields and dataset.ReasonField (the failure reason).
const (
	FieldTraceID   = "trace_id"
	FieldTraceTime = "trace_time"
	FieldModel     = "trace_model"
	FieldFrom      = "promoted_from"
)

// Why a candidate trace was not added.
const (
	SkipExact     = "duplicate"        // its input is a case's, normalised
	SkipNear      = "near-duplicate"   // its input's tokens overlap a case's at the threshold
	SkipPromoted  = "already promoted" // a case carries its trace ID
	SkipNoInput   = "no user message"
	SkipNoTrace   = "trace not stored"
	SkipLimit     = "over --limit"
	SkipLabelPass = "labeled pass" // people's latest label passes the output the scorer failed
)

// Source is what promote reads from the store.
type Source interface {
	LatestScoring(ctx context.Context, runID string) (int, error)
	ScorerNames(ctx context.Context, runID string, scoring int) ([]string, error)
	Scores(ctx context.Context, runID string, scoring int, fn func(record.Score) error) error
	Labels(ctx context.Context, runID string, fn func(record.Label) error) error
	Trace(ctx context.Context, id string) (*record.Trace, error)
}

// Options say what to promote.
type Options struct {
	// Scorer is the verdict read (""): the primary verdict — the
	// combination "primary" when the run stores one, else the primary
	// scorer's).
	Scorer string
	// Labels adds the traces people labeled fail (their latest label), and
	// keeps back a failed verdict people labeled pass.
	Labels bool
	// Limit adds at most this many cases (0: no limit).
	Limit int
	// DryRun says what would be added without writing.
	DryRun bool
	// Threshold is the near-duplicate threshold (0: dataset's default).
	Threshold float64
}

// Result is what `assay promote` did.
type Result struct {
	Run     string `json:"run"`
	Sample  string `json:"sample"`
	Dataset string `json:"dataset"` // the JSONL file appended to
	// Scorer is the verdict read, Scoring its scoring.
	Scorer  string `json:"scorer"`
	Scoring int    `json:"scoring"`
	Labels  bool   `json:"labels"`
	DryRun  bool   `json:"dry_run"`
	// Failed counts the traces the verdict failed, LabeledFail those people
	// labeled fail; Candidates the distinct traces of both.
	Failed      int `json:"failed"`
	LabeledFail int `json:"labeled_fail"`
	Candidates  int `json:"candidates"`
	// Threshold is the near-duplicate threshold; Compared how many cases
	// of the dataset the candidates were checked against.
	Threshold float64 `json:"threshold"`
	Compared  int     `json:"compared"`
	Added     []Added `json:"added"`
	Skipped   []Skip  `json:"skipped"`
	// Before and After are the file's SHA-256 before and after (equal when
	// nothing was written): the dataset's new version.
	Before   string   `json:"sha256_before"`
	After    string   `json:"sha256_after"`
	Warnings []string `json:"warnings,omitempty"`
}

// Added is one case added (or, on a dry run, that would be).
type Added struct {
	TraceID string `json:"trace_id"`
	// Because is why the trace was promoted: "scorer <name>" or "label by
	// <labeler>"; Reason the failure reason written with the case.
	Because string `json:"because"`
	Reason  string `json:"reason"`
	Input   string `json:"input"` // cut to 120 characters
	Line    int    `json:"line,omitempty"`
	ID      string `json:"id,omitempty"`
}

// Skip is one candidate trace not added.
type Skip struct {
	TraceID string `json:"trace_id"`
	Why     string `json:"why"`
	// Of is the dataset case it duplicates (exact, near or already
	// promoted); OfTrace the trace of this batch it duplicates.
	Of         *dataset.CaseRef `json:"of,omitempty"`
	OfTrace    string           `json:"of_trace,omitempty"`
	Similarity float64          `json:"similarity,omitempty"`
	Input      string           `json:"input,omitempty"`
}

// ErrNotTraceRun is Promote's answer for a run that scored no sample.
var ErrNotTraceRun = errors.New("the run is not a score-traces run")

// UnknownScorerError is Promote's answer when the verdict asked for (or a
// primary one) is not in the run's scoring.
type UnknownScorerError struct {
	Scorer  string
	Scorers []string
}

func (e *UnknownScorerError) Error() string {
	if e.Scorer == "" {
		return fmt.Sprintf("the run's scoring has no primary verdict: name the scorer with --scorer (the run's scorers are %s)", strings.Join(e.Scorers, ", "))
	}
	return fmt.Sprintf("scorer %q has no verdicts in the run's latest scoring (the run's scorers are %s)", e.Scorer, strings.Join(e.Scorers, ", "))
}

// candidate is a trace to promote and why.
type candidate struct {
	traceID string
	because string
	reason  string
}

// Promote turns the failed and labeled-bad traces of the score-traces run
// into cases of sp's dataset: appended to the file sp's traces.promote.to
// names (else labels.add_to, else the dataset when it is JSONL), unless
// o.DryRun.
func Promote(ctx context.Context, src Source, run *record.Run, sp *spec.Spec, o Options) (*Result, error) {
	if run.Sample == "" {
		return nil, fmt.Errorf("run %s: %w (it scored no sample of traces): promote reads the verdicts assay score-traces gave production traces", run.ID, ErrNotTraceRun)
	}
	m := Mapping(sp)
	to := Destination(sp)
	if to == "" {
		return nil, fmt.Errorf("promoted cases go to a JSONL file: the dataset %s is not one; set traces.promote.to (or labels.add_to) in the spec to a .jsonl file", sp.Dataset.Path)
	}
	for _, f := range []string{m.Input, m.Messages, m.Context} {
		if f != "" && (slices.Contains([]string{FieldTraceID, FieldTraceTime, FieldModel, FieldFrom, dataset.ReasonField}, f) || (f == sp.Dataset.ID && f != spec.DefaultID)) {
			return nil, fmt.Errorf("traces.promote maps a trace onto field %q, which holds the case's ID or its provenance: name another field", f)
		}
	}
	res := &Result{Run: run.ID, Sample: run.Sample, Dataset: to, Labels: o.Labels, DryRun: o.DryRun, Added: []Added{}, Skipped: []Skip{}}
	cands, err := candidates(ctx, src, run, o, res)
	if err != nil {
		return nil, err
	}
	dd, err := dataset.NewDeduper(o.Threshold)
	if err != nil {
		return nil, err
	}
	res.Threshold = dd.Threshold()
	promoted, err := existing(sp, to, m.Input, dd, res)
	if err != nil {
		return nil, err
	}
	if res.Before, err = fileHash(to); err != nil {
		return nil, err
	}

	var adds []dataset.Addition
	var added []int              // index in res.Added of each addition
	batch := map[string]string{} // a candidate's reference in dd → its trace
	for _, c := range cands {
		if o.Limit > 0 && len(adds) >= o.Limit {
			res.Skipped = append(res.Skipped, Skip{TraceID: c.traceID, Why: SkipLimit})
			continue
		}
		if ref, ok := promoted[c.traceID]; ok {
			res.Skipped = append(res.Skipped, Skip{TraceID: c.traceID, Why: SkipPromoted, Of: &ref})
			continue
		}
		t, err := src.Trace(ctx, c.traceID)
		if errors.Is(err, record.ErrNotFound) {
			res.Skipped = append(res.Skipped, Skip{TraceID: c.traceID, Why: SkipNoTrace})
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("reading trace %s: %w", c.traceID, err)
		}
		input, ok := lastUser(t)
		if !ok {
			res.Skipped = append(res.Skipped, Skip{TraceID: c.traceID, Why: SkipNoInput})
			continue
		}
		if d, ok := dd.Find(input); ok {
			s := Skip{TraceID: c.traceID, Why: SkipNear, Similarity: d.Similarity, Input: clip(input)}
			if d.Exact {
				s.Why = SkipExact
			}
			if tr, inBatch := batch[d.Of.ID]; inBatch && d.Of.Line == 0 {
				s.OfTrace = tr
			} else {
				ref := d.Of
				s.Of = &ref
			}
			res.Skipped = append(res.Skipped, s)
			continue
		}
		ref := "\x00" + t.ID // no case ID starts with NUL
		batch[ref] = t.ID
		dd.Add(dataset.CaseRef{ID: ref}, input)
		fields := map[string]any{
			m.Input:        input,
			FieldTraceID:   t.ID,
			FieldTraceTime: t.Time.UTC().Format(time.RFC3339Nano),
			FieldFrom:      "run " + run.ID + ", " + c.because,
		}
		if t.Model != "" {
			fields[FieldModel] = t.Model
		}
		if m.Messages != "" {
			fields[m.Messages] = t.Input
		}
		if m.Context != "" {
			fields[m.Context] = t.System // "" when the trace had none: the prompt may read the field
		}
		adds = append(adds, dataset.Addition{Fields: fields, BaseID: "trace", IDField: sp.Dataset.ID, Reason: c.reason})
		res.Added = append(res.Added, Added{TraceID: t.ID, Because: c.because, Reason: c.reason, Input: clip(input)})
		added = append(added, len(res.Added)-1)
	}
	res.After = res.Before
	if o.DryRun || len(adds) == 0 {
		return res, nil
	}
	if err := os.MkdirAll(filepath.Dir(to), 0o755); err != nil {
		return nil, err
	}
	out, err := dataset.AppendAll(to, adds)
	if err != nil {
		return nil, err
	}
	for i, a := range out {
		r := &res.Added[added[i]]
		r.Line, r.ID = a.Line, a.ID
	}
	if res.After, err = fileHash(to); err != nil {
		return nil, err
	}
	return res, nil
}

// Mapping is the spec's traces.promote with its defaults.
func Mapping(sp *spec.Spec) spec.TracePromote {
	var m spec.TracePromote
	if sp.Traces != nil && sp.Traces.Promote != nil {
		m = *sp.Traces.Promote
	}
	if m.Input == "" {
		m.Input = "input"
	}
	return m
}

// Destination is the JSONL file promoted cases are appended to:
// traces.promote.to, else labels.add_to, else the dataset when it is JSONL
// ("" when none), resolved against the spec's directory.
func Destination(sp *spec.Spec) string {
	if sp.Traces != nil && sp.Traces.Promote != nil && sp.Traces.Promote.To != "" {
		return sp.Resolve(sp.Traces.Promote.To)
	}
	return sp.AddToPath()
}

// candidates reads the run's failed verdicts (and, with o.Labels, its fail
// labels), in the order of the run's scores, then labels.
func candidates(ctx context.Context, src Source, run *record.Run, o Options, res *Result) ([]candidate, error) {
	scoring, err := src.LatestScoring(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	res.Scoring = scoring
	names, err := src.ScorerNames(ctx, run.ID, scoring)
	if err != nil {
		return nil, err
	}
	scorer := o.Scorer
	primary := scorer == ""
	if primary && slices.Contains(names, "primary") {
		scorer = "primary"
	}
	var fails []record.Score
	found := false
	err = src.Scores(ctx, run.ID, scoring, func(s record.Score) error {
		if scorer == "" && s.Primary {
			scorer = s.Scorer
		}
		if s.Scorer != scorer {
			return nil
		}
		found = true
		if !s.Pass {
			fails = append(fails, s)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if !found && (o.Scorer != "" || !o.Labels) {
		return nil, &UnknownScorerError{Scorer: o.Scorer, Scorers: names}
	}
	res.Scorer = scorer

	// People's latest verdict on each trace's output.
	latest := map[string]record.Label{}
	if o.Labels {
		err := src.Labels(ctx, run.ID, func(l record.Label) error {
			if l.Verdict == record.LabelSkip {
				return nil
			}
			if p, ok := latest[l.CaseID]; !ok || !l.Created.Before(p.Created) {
				latest[l.CaseID] = l
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("reading the run's labels: %w", err)
		}
	}
	var out []candidate
	seen := map[string]bool{}
	for _, s := range fails {
		if seen[s.CaseID] {
			continue
		}
		seen[s.CaseID] = true
		res.Failed++
		if l, ok := latest[s.CaseID]; ok && l.Verdict == record.LabelPass {
			res.Skipped = append(res.Skipped, Skip{TraceID: s.CaseID, Why: SkipLabelPass})
			continue
		}
		reason := s.Reason
		if reason == "" {
			reason = s.Kind
		}
		if l, ok := latest[s.CaseID]; ok && l.Verdict == record.LabelFail && l.Reason != "" {
			reason = l.Reason // the person's reason says more than the scorer's
		}
		out = append(out, candidate{traceID: s.CaseID, because: "scorer " + scorer, reason: reason})
	}
	var labeled []string
	for id, l := range latest {
		if l.Verdict == record.LabelFail {
			res.LabeledFail++
			if !seen[id] {
				labeled = append(labeled, id)
			}
		}
	}
	slices.Sort(labeled)
	for _, id := range labeled {
		l := latest[id]
		seen[id] = true
		out = append(out, candidate{traceID: id, because: "label by " + l.Labeler, reason: l.Reason})
	}
	res.Candidates = len(out)
	for _, s := range res.Skipped {
		if s.Why == SkipLabelPass {
			res.Candidates++
		}
	}
	return out, nil
}

// existing holds the input of every case of the dataset and of the file
// appended to (when another) in dd, and returns the cases that carry a
// trace ID (promoted before) by trace.
func existing(sp *spec.Spec, to, field string, dd *dataset.Deduper, res *Result) (map[string]dataset.CaseRef, error) {
	promoted := map[string]dataset.CaseRef{}
	files := []string{sp.Resolve(sp.Dataset.Path)}
	if to != files[0] {
		if _, err := os.Stat(to); err == nil {
			files = append(files, to)
		}
	}
	withField := 0
	for i, f := range files {
		// f is resolved already; dataset.Open resolves against the spec's
		// directory again unless the path is absolute.
		abs, err := filepath.Abs(f)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, err)
		}
		cp := *sp
		cp.Dataset = spec.Dataset{Path: abs, Format: sp.Dataset.Format, ID: sp.Dataset.ID}
		if i > 0 {
			cp.Dataset.Format = "jsonl"
		}
		r, err := dataset.Open(&cp)
		if err != nil {
			return nil, fmt.Errorf("reading %s: %w", f, err)
		}
		for {
			c, err := r.Next()
			if err == io.EOF {
				break
			}
			var ps spec.Problems
			if errors.As(err, &ps) {
				continue // a row that is no case (validate reports it)
			}
			if err != nil {
				r.Close()
				return nil, err
			}
			ref := dataset.CaseRef{ID: c.ID, Line: c.Line}
			if i > 0 {
				ref.ID = filepath.Base(f) + ":" + c.ID
			}
			if v, ok := c.Vars[FieldTraceID]; ok {
				if _, dup := promoted[dataset.Stringify(v)]; !dup {
					promoted[dataset.Stringify(v)] = ref
				}
			}
			if v, ok := c.Vars[field]; ok && v != nil {
				dd.Add(ref, dataset.Stringify(v))
				withField++
			}
			res.Compared++
		}
		r.Close()
	}
	if res.Compared > 0 && withField == 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("no case of the dataset has the field %q promoted inputs go to, so none could be found a duplicate: set traces.promote.input to the field the prompt reads", field))
	}
	return promoted, nil
}

// lastUser is the content of the conversation's last user message.
func lastUser(t *record.Trace) (string, bool) {
	for i := len(t.Input) - 1; i >= 0; i-- {
		if t.Input[i].Role == "user" && strings.TrimSpace(t.Input[i].Content) != "" {
			return t.Input[i].Content, true
		}
	}
	return "", false
}

// fileHash is "sha256:<hex>" of a file's bytes ("" when it does not
// exist).
func fileHash(path string) (string, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", nil
	}
	if err != nil {
		return "", err
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", err
	}
	return "sha256:" + hex.EncodeToString(h.Sum(nil)), nil
}

func clip(s string) string {
	r := []rune(strings.Join(strings.Fields(s), " "))
	if len(r) <= 120 {
		return string(r)
	}
	return string(r[:120]) + "…"
}
