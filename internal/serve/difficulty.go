package serve

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/sample"
	"github.com/assay-eval/assay/internal/spec"
)

// Rating difficulty: when a run's spec names difficulty.tag and that tag
// is read from a plain field of a JSONL dataset, a person rates cases'
// difficulty on their pages, and the rating queue offers a seeded sample
// of the run's unrated cases. A rating is written into the case's line
// with dataset.SetField (that line only; never over a value already
// there): a new dataset version, read by the next run and by assay
// difficulty and mismatch.

func (s *Server) difficultyRoutes() {
	s.mux.HandleFunc("GET /runs/{id}/difficulty", s.difficultyQueue)
	s.mux.HandleFunc("POST /runs/{id}/cases/{case}/difficulty", s.rateDifficulty)
}

// Bounds of the rating queue's sample (?n=).
const (
	defaultRateSample = 50
	maxRateSample     = 200
	// maxRating bounds a rating's text: a level (spec.MaxDifficultyLevel)
	// or a number.
	maxRating = spec.MaxDifficultyLevel
)

// difficultyScale is what a run's spec says about rating difficulty.
type difficultyScale struct {
	// Tag is the spec's difficulty.tag; Field the dataset field it is
	// read from (dataset.tags maps Tag to a field name, or Tag itself
	// when dataset.tags does not name it).
	Tag, Field string
	// Levels are the spec's difficulty.levels, easiest first; none: the
	// ratings are numbers.
	Levels []string
	// File is the dataset file as the spec names it; path resolved.
	File, path string
	idField    string
	// Declared says dataset.tags names the tag: a run records a case's
	// rating as its tag.
	Declared bool
	// Why says why the run's cases cannot be rated here ("" when they
	// can); Tag is "" when the spec names no difficulty tag at all.
	Why string
}

// Numeric says the scale's ratings are numbers (no levels).
func (d *difficultyScale) Numeric() bool { return len(d.Levels) == 0 }

// fieldName is a tag expression that reads a plain field (as dataset's
// tags do: a bare identifier other than a CEL literal).
var fieldName = regexp.MustCompile(`^[A-Za-z_][A-Za-z0-9_]*$`)

// difficultyOf reads the run's difficulty scale from its spec. A run
// whose spec does not read gives the error; one without difficulty.tag a
// scale whose Tag is "".
func difficultyOf(run *record.Run) (*difficultyScale, error) {
	sp, err := runSpec(run)
	if err != nil {
		return nil, err
	}
	d := &difficultyScale{}
	if sp.Difficulty == nil || strings.TrimSpace(sp.Difficulty.Tag) == "" {
		d.Why = fmt.Sprintf("run %s's spec names no difficulty tag: add a difficulty: section with tag: (the dataset field the ratings go into) and, for named levels, levels: (easiest first), then run the spec again", run.ID)
		return d, nil
	}
	d.Tag, d.Levels = sp.Difficulty.Tag, sp.Difficulty.Levels
	d.File, d.path, d.idField = sp.Dataset.Path, sp.Resolve(sp.Dataset.Path), sp.Dataset.ID
	d.Field = d.Tag
	for _, t := range sp.Dataset.Tags {
		if t.Key == d.Tag {
			d.Field, d.Declared = strings.TrimSpace(t.Expr), true
		}
	}
	switch {
	case run.Sample != "":
		d.Why = fmt.Sprintf("run %s scored a sample of traces, not a dataset: there is no dataset line to write a rating into", run.ID)
	case d.Field == "true" || d.Field == "false" || d.Field == "null" || !fieldName.MatchString(d.Field):
		d.Why = fmt.Sprintf("the difficulty tag %q is computed by the expression dataset.tags.%s, not read from one field: a rating has no field to go into (map the tag to a field, or rate the field the expression reads)", d.Tag, d.Tag)
	case sp.Dataset.Format == "csv":
		d.Why = fmt.Sprintf("the dataset %s is CSV: ratings are written only into a JSONL file's lines (edit a CSV file by hand)", d.File)
	}
	return d, nil
}

// check is the rating a person submitted, as the JSON SetField writes, or
// a message saying why it is refused.
func (d *difficultyScale) check(rating string) (json.RawMessage, string) {
	if strings.TrimSpace(rating) == "" {
		if d.Numeric() {
			return nil, "the rating is empty: give a number"
		}
		return nil, "the rating is empty: choose one of " + strings.Join(d.Levels, ", ")
	}
	if len(rating) > maxRating {
		return nil, fmt.Sprintf("the rating is longer than %d bytes", maxRating)
	}
	if !d.Numeric() {
		if !slices.Contains(d.Levels, rating) {
			return nil, fmt.Sprintf("%s is not a level of difficulty tag %q: rate with one of %s (the spec's difficulty.levels, easiest first)", strconv.QuoteToGraphic(rating), d.Tag, strings.Join(d.Levels, ", "))
		}
		return dataset.JSONString(rating), ""
	}
	v, ok := ratingNumber(rating)
	if !ok {
		return nil, fmt.Sprintf("%s is not a number: the spec gives difficulty tag %q no levels, so a rating is a number such as 3 or 2.5 (to rate with named levels, list them easiest first in difficulty.levels)", strconv.QuoteToGraphic(rating), d.Tag)
	}
	return json.RawMessage(strconv.FormatFloat(v, 'g', -1, 64)), ""
}

// ratingNumber reads a rating on a numeric scale: a finite number.
func ratingNumber(s string) (float64, bool) {
	v, err := strconv.ParseFloat(strings.TrimSpace(s), 64)
	return v, err == nil && !math.IsInf(v, 0) && !math.IsNaN(v)
}

// caseDifficulty is the difficulty part of a case's page.
type caseDifficulty struct {
	RunID, CaseID, Tag, Field, File string
	// Value is the case's difficulty ("" unknown); Level its 1-based
	// level of Levels (0 on a numeric scale, or a value not a level).
	Value string
	Level int
	// Since says Value was written into the file after the run read it
	// (the run records the tag but recorded none): a new dataset version.
	Since bool
	// Rate says the case's line lacks the field: the page offers the
	// rating form. Note says why it does not when it cannot.
	Rate bool
	Note string
	// Fields are the case's fields as its line in the file holds them
	// now (with the form).
	Fields  []inputField
	Levels  []string
	Numeric bool
	// Seed and N carry the rating queue the page was opened from, so the
	// page after a rating links the queue's next case.
	Seed, N string
}

// caseDifficultyOf is what the case's page shows of its difficulty, nil
// when the run's spec names no difficulty tag. It reads the case's line
// from the dataset as it is now (another person may have rated it).
func (s *Server) caseDifficultyOf(run *record.Run, caseID string, c *record.Case, seed, n string) *caseDifficulty {
	d, err := difficultyOf(run)
	if err != nil || d.Tag == "" {
		return nil
	}
	out := &caseDifficulty{RunID: run.ID, CaseID: caseID, Tag: d.Tag, Field: d.Field, File: d.File, Levels: d.Levels, Numeric: d.Numeric()}
	if c != nil {
		out.Value = c.Tags[d.Tag]
	}
	if _, _, ok := queueParams(seed, n); ok {
		out.Seed, out.N = seed, n
	}
	defer out.setLevel()
	switch {
	case out.Value != "":
		// The run recorded it: the file need not be read.
		return out
	case d.Why != "":
		out.Note = d.Why
		return out
	}
	// The file as it is now: another person may have rated the case.
	rec, _, err := dataset.CaseFields(d.path, d.idField, caseID, d.Field)
	v, has := rec[d.Field]
	switch {
	case err != nil:
		out.Note = "the case cannot be rated: " + err.Error()
	case !has:
		out.Rate = true
		// Shown beside the form: the rater reads the case, not the
		// targets' outputs, and once a rating has changed the file the
		// run's inputs section no longer shows the run's version.
		for _, k := range slices.Sorted(maps.Keys(rec)) {
			out.Fields = append(out.Fields, inputField{Name: line(k), Value: text(valueText(rec[k]))})
		}
	case v == nil:
		out.Note = fmt.Sprintf("the case's line holds %q as null: edit the file to rate it (a value in the file is never overwritten here)", d.Field)
	default:
		out.Value, out.Since = dataset.Stringify(v), d.Declared
	}
	return out
}

func (c *caseDifficulty) setLevel() {
	c.Level = slices.Index(c.Levels, c.Value) + 1
}

// difficultySet is the page after a rating: what was written, and the
// rating queue's next case.
type difficultySet struct {
	RunID, CaseID, Tag, Field, File, Value string
	*dataset.FieldSet
	// Next is the next unrated case of the queue the rating came from
	// ("" none or not from a queue); Queue that queue's URL.
	Next, NextURL, Queue string
	Left                 int
}

// rateDifficulty writes a person's difficulty rating into the case's line
// of the run's JSONL dataset (dataset.SetField: that line only; a value
// already there is never overwritten). The run's results do not change:
// the file is a new dataset version.
func (s *Server) rateDifficulty(w http.ResponseWriter, r *http.Request) {
	run, ok := s.pathRun(w, r)
	if !ok {
		return
	}
	caseID := r.PathValue("case")
	d, err := difficultyOf(run)
	if err != nil {
		s.fail(w, r, badRequest("%v", err))
		return
	}
	if d.Why != "" {
		s.fail(w, r, badRequest("%s", d.Why))
		return
	}
	rating := r.PostForm.Get("difficulty")
	value, why := d.check(rating)
	if why != "" {
		s.fail(w, r, badRequest("%s", why))
		return
	}
	appendMu.Lock() // the file add.go appends to and expected.go writes
	got, err := dataset.SetField(d.path, d.idField, caseID, d.Field, value)
	appendMu.Unlock()
	switch {
	case errors.Is(err, dataset.ErrHasField):
		s.fail(w, r, badRequest("%v (another person may have rated it: reload the case's page)", err))
		return
	case errors.Is(err, dataset.ErrDuplicateID), errors.Is(err, dataset.ErrNotJSONL):
		s.fail(w, r, badRequest("%v", err))
		return
	case errors.Is(err, dataset.ErrNoCase):
		s.fail(w, r, fmt.Errorf("%v: %w", err, record.ErrNotFound))
		return
	case err != nil:
		s.fail(w, r, err)
		return
	}
	p := difficultySet{RunID: run.ID, CaseID: caseID, Tag: d.Tag, Field: d.Field, File: d.File, Value: rating, FieldSet: got}
	if d.Numeric() {
		p.Value = string(value)
	}
	if seed, n, ok := queueParams(r.PostForm.Get("seed"), r.PostForm.Get("n")); ok {
		p.Queue = rateQueueURL(run.ID, seed, n)
		if q, err := s.rateQueue(r.Context(), run, d, seed, n); err == nil {
			p.Left = q.Unrated
			if len(q.Sample) > 0 {
				p.Next, p.NextURL = q.Sample[0].ID, q.Sample[0].URL
			}
		}
	}
	s.render(w, r, "difficultyset", "difficulty rated", p)
}

// queueParams reads a rating queue's seed and size; ok is false when
// either is not valid.
func queueParams(seed, n string) (uint64, int, bool) {
	sd, err := strconv.ParseUint(seed, 10, 64)
	if err != nil {
		return 0, 0, false
	}
	k, err := strconv.Atoi(n)
	if err != nil || k < 1 || k > maxRateSample {
		return 0, 0, false
	}
	return sd, k, true
}

func rateQueueURL(runID string, seed uint64, n int) string {
	return fmt.Sprintf("/runs/%s/difficulty?n=%d&seed=%d", url.PathEscape(runID), n, seed)
}

// rateQueuePage is the rating queue: counts, the distribution of the
// ratings so far, and a seeded sample of the unrated cases.
type rateQueuePage struct {
	RunID string
	Scale *difficultyScale
	Seed  uint64
	N     int
	// Cases counts the run's cases; Rated those whose line holds a
	// rating, Unrated those whose line lacks the field, Null those whose
	// line holds it as null, Gone those the file no longer holds.
	Cases, Rated, Unrated, Null, Gone int
	Dist                              []distRow
	// Outside are ratings that are not a level (or not a number on a
	// numeric scale): assay difficulty cannot place them.
	Outside []distRow
	Sample  []rateItem
	Error   string
}

type distRow struct {
	Label string
	Count int
	Max   int
}

type rateItem struct {
	ID, URL string
	Line    int
}

// difficultyQueue shows the run's rating queue (?n= the sample's size,
// default 50, at most 200; ?seed= its seed, default 1).
func (s *Server) difficultyQueue(w http.ResponseWriter, r *http.Request) {
	run, ok := s.pathRun(w, r)
	if !ok {
		return
	}
	q := r.URL.Query()
	seed, n := uint64(1), defaultRateSample
	if v := q.Get("n"); v != "" {
		k, err := strconv.Atoi(v)
		if err != nil || k < 1 || k > maxRateSample {
			s.fail(w, r, badRequest("n=%s: the sample's size is a whole number from 1 to %d (50–100 rated cases characterise a workload)", strconv.QuoteToGraphic(v), maxRateSample))
			return
		}
		n = k
	}
	if v := q.Get("seed"); v != "" {
		sd, err := strconv.ParseUint(v, 10, 64)
		if err != nil {
			s.fail(w, r, badRequest("seed=%s: the seed is a whole number from 0 up", strconv.QuoteToGraphic(v)))
			return
		}
		seed = sd
	}
	d, err := difficultyOf(run)
	if err != nil {
		s.fail(w, r, badRequest("%v", err))
		return
	}
	page := &rateQueuePage{RunID: run.ID, Scale: d, Seed: seed, N: n}
	if d.Why == "" {
		got, err := s.rateQueue(r.Context(), run, d, seed, n)
		if err != nil {
			page.Error = err.Error()
		} else {
			page = got
		}
	}
	s.render(w, r, "difficulty", "rate difficulty · "+run.ID, page)
}

// rateQueue reads the run's cases from the store and the field from the
// dataset file as it is now, and orders the unrated cases by a hash of
// the seed and the case ID (sample.Rank, as assay sample draws traces):
// the first n are the sample. A rating takes its case out and the next in
// that order comes in; the others stay.
func (s *Server) rateQueue(ctx context.Context, run *record.Run, d *difficultyScale, seed uint64, n int) (*rateQueuePage, error) {
	fv, err := dataset.FieldValuesOf(d.path, d.idField, d.Field)
	if err != nil {
		return nil, err
	}
	p := &rateQueuePage{RunID: run.ID, Scale: d, Seed: seed, N: n}
	type cand struct {
		key  uint64
		id   string
		line int
	}
	var unrated []cand
	var values []string
	err = s.o.Store.Cases(ctx, run.ID, func(c record.Case) error {
		p.Cases++
		if v, ok := fv.Values[c.ID]; ok {
			p.Rated++
			values = append(values, v)
			return nil
		}
		if fv.Null[c.ID] {
			p.Null++
			return nil
		}
		if !fv.Without[c.ID] {
			p.Gone++
			return nil
		}
		p.Unrated++
		unrated = append(unrated, cand{key: sample.Rank(seed, c.ID), id: c.ID, line: c.Line})
		return nil
	})
	if err != nil {
		return nil, err
	}
	slices.SortFunc(unrated, func(a, b cand) int { return cmp.Or(cmp.Compare(a.key, b.key), cmp.Compare(a.id, b.id)) })
	for _, c := range unrated[:min(n, len(unrated))] {
		p.Sample = append(p.Sample, rateItem{ID: line(c.id), Line: c.line,
			URL: caseURL(run.ID, c.id) + fmt.Sprintf("?seed=%d&n=%d#difficulty", seed, n)})
	}
	p.Dist, p.Outside = distribution(d, values)
	return p, nil
}

// distribution counts the ratings: per level in order on a named scale;
// per value (at most 20 distinct) or in 10 equal-width bins on a numeric
// one. Values that are not a level (not a number) are counted apart.
func distribution(d *difficultyScale, values []string) (dist, outside []distRow) {
	other := map[string]int{}
	if !d.Numeric() {
		counts := make([]int, len(d.Levels))
		for _, v := range values {
			if i := slices.Index(d.Levels, v); i >= 0 {
				counts[i]++
			} else {
				other[v]++
			}
		}
		for i, l := range d.Levels {
			dist = append(dist, distRow{Label: line(l), Count: counts[i]})
		}
	} else {
		byValue := map[float64]int{}
		for _, v := range values {
			x, ok := ratingNumber(v)
			if !ok {
				other[v]++
				continue
			}
			byValue[x]++
		}
		keys := slices.Sorted(maps.Keys(byValue))
		if len(keys) <= 20 {
			for _, k := range keys {
				dist = append(dist, distRow{Label: strconv.FormatFloat(k, 'g', -1, 64), Count: byValue[k]})
			}
		} else {
			lo, hi := keys[0], keys[len(keys)-1]
			const bins = 10
			counts := make([]int, bins)
			for k, c := range byValue {
				i := min(int((k-lo)/(hi-lo)*bins), bins-1)
				counts[i] += c
			}
			for i := range bins {
				a, b := lo+(hi-lo)*float64(i)/bins, lo+(hi-lo)*float64(i+1)/bins
				closing := ")"
				if i == bins-1 {
					closing = "]"
				}
				dist = append(dist, distRow{Label: fmt.Sprintf("[%.4g, %.4g%s", a, b, closing), Count: counts[i]})
			}
		}
	}
	top := 0
	for _, r := range dist {
		top = max(top, r.Count)
	}
	for i := range dist {
		dist[i].Max = max(top, 1)
	}
	for _, k := range slices.Sorted(maps.Keys(other)) {
		outside = append(outside, distRow{Label: line(k), Count: other[k]})
	}
	return dist, outside
}
