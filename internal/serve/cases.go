package serve

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"net/url"
	"os"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/export"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/report"
	"github.com/assay-eval/assay/internal/scorer"
	"github.com/assay-eval/assay/internal/store"
	"github.com/assay-eval/assay/internal/task"
	"github.com/assay-eval/assay/internal/traces"
	"github.com/assay-eval/assay/internal/units"
)

// caseRoutes registers the case explorer and a case's page.
func (s *Server) caseRoutes() {
	s.mux.HandleFunc("GET /runs/{id}/cases", s.casesList)
	s.mux.HandleFunc("GET /runs/{id}/cases/{case}", s.casePage)
	s.mux.HandleFunc("POST /runs/{id}/cases/{case}/expected", s.setExpected) // expected.go
}

// casesPerPage is how many results one explorer page lists.
const casesPerPage = 50

// casesSearchTime bounds how long one explorer page looks for matches: a
// filter that matches little shows what it found by then and a link that
// searches on from where it stopped.
const casesSearchTime = time.Second

// eagerIndex is the most cases a run may have for the explorer to index
// them (tags, inputs) on its first page; a bigger run's are indexed by its
// first text search.
const eagerIndex = 20_000

// maxTagChoices bounds the tag values the explorer's form offers.
const maxTagChoices = 500

// shapes are the failure shapes a score has.
var shapes = []string{"pass", "loud", "silent"}

// failureKinds are the kinds the form suggests (a free text field: a
// provider's error kinds are kinds too).
var failureKinds = []string{scorer.KindWrong, scorer.KindComplied, scorer.KindEmpty, scorer.KindRefusal, scorer.KindUnparseable,
	scorer.KindInvalidFormat, scorer.KindTooSlow, scorer.KindTooLong, scorer.KindOverBudget, scorer.KindScorerError,
	scorer.KindJudgeError, scorer.KindNoCall, scorer.KindInvalidArguments, scorer.KindWrongTool, scorer.KindUnexpectedCall}

// casesFilter is the explorer's form, as the query string gives it.
type casesFilter struct {
	Target, Tag, Scorer, Verdict, Shape, Kind, Q string
	// Scoring is the scoring asked for (0: the latest complete one).
	Scoring int
}

// values is the filter as a query string's values.
func (f casesFilter) values() url.Values {
	v := url.Values{}
	for _, kv := range [][2]string{{"target", f.Target}, {"tag", f.Tag}, {"scorer", f.Scorer}, {"verdict", f.Verdict},
		{"shape", f.Shape}, {"kind", f.Kind}, {"q", f.Q}} {
		if kv[1] != "" {
			v.Set(kv[0], kv[1])
		}
	}
	if f.Scoring > 0 {
		v.Set("scoring", strconv.Itoa(f.Scoring))
	}
	return v
}

// storeFilter is the filter as the store reads it (the cases whose inputs
// match the text are the caller's to add).
func (f casesFilter) storeFilter() store.ResultFilter {
	return store.ResultFilter{Target: f.Target, Tag: f.Tag, Scorer: f.Scorer, Verdict: f.Verdict, Shape: f.Shape, Kind: f.Kind, Text: f.Q}
}

// casesURL is the explorer's URL for a run, a filter and a cursor.
func casesURL(runID string, f casesFilter, after string) string {
	v := f.values()
	if after != "" {
		v.Set("after", after)
	}
	u := "/runs/" + url.PathEscape(runID) + "/cases"
	if len(v) > 0 {
		u += "?" + v.Encode()
	}
	return u
}

// parseCasesFilter reads the filter and checks its values.
func parseCasesFilter(q url.Values, latest int) (casesFilter, error) {
	f := casesFilter{Target: q.Get("target"), Tag: q.Get("tag"), Scorer: q.Get("scorer"), Verdict: q.Get("verdict"),
		Shape: q.Get("shape"), Kind: q.Get("kind"), Q: q.Get("q")}
	if f.Verdict != "" && f.Verdict != "pass" && f.Verdict != "fail" {
		return f, badRequest("verdict=%q: want pass or fail (or nothing)", f.Verdict)
	}
	if f.Shape != "" && !slices.Contains(shapes, f.Shape) {
		return f, badRequest("shape=%q: want one of %s (or nothing)", f.Shape, strings.Join(shapes, ", "))
	}
	if f.Tag != "" && !strings.Contains(f.Tag, "=") {
		return f, badRequest("tag=%q: want key=value", f.Tag)
	}
	if v := q.Get("scoring"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > max(latest, 1) {
			return f, badRequest("scoring=%q: the run has scorings 1 to %d", v, latest)
		}
		f.Scoring = n
	}
	return f, nil
}

// casesLead is what the explorer shows before it searches: the run and
// the filter's form.
type casesLead struct {
	RunID, Spec string
	Filter      casesFilter
	// Targets, Scorers, Kinds and Shapes are the form's choices.
	Targets, Scorers, Kinds, Shapes []string
	Scorings                        []int
	Latest                          int
	// Size says how many results the run has, from its record.
	Size string
}

// casesBody is the explorer's list.
type casesBody struct {
	Lead casesLead
	// Tags are the tag values the form offers, once the run's cases are
	// indexed.
	Tags []string
	Rows []caseRow
	// Next is the URL of the page after this one ("" on the last); First
	// the first page's, when this is not it.
	Next, First string
	// Stopped says the page stopped looking before it was full: more
	// results are left to search (Next).
	Stopped bool
	// Reached says where a stopped search got to ("case X, line N of M").
	Reached string
	// InputsNote says why the text search covered outputs only.
	InputsNote string
	// Inputs counts the cases whose inputs matched the text; InputCases
	// links the first maxInputLinks of them (their results are among the
	// rows where the list reaches them).
	Inputs     int
	InputCases []caseLink
}

// caseLink is a link to a case's page.
type caseLink struct{ ID, Href string }

// maxInputLinks bounds the cases the explorer links whose inputs match.
const maxInputLinks = 100

// caseRow is one result as the explorer lists it.
type caseRow struct {
	CaseID, Href, Target string
	Epoch                int
	Verdict              string // pass, fail, or "" when not scored
	Scorer, Shape, Kind  string
	// KindHref filters the list by this row's kind.
	KindHref  string
	Snippet   string
	More      bool   // the output is longer than the snippet
	Size      string // the output's length
	ToolCalls int
	Latency   string
	Cost      string
	Cached    bool
	ErrorKind string
}

// casesList is the case explorer: a run's results filtered by target, tag,
// scorer verdict, shape, kind and text in inputs and outputs, a page at a
// time (?after= is the store's cursor).
func (s *Server) casesList(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	run, ok := s.pathRun(w, r)
	if !ok {
		return
	}
	latest, err := s.o.Store.LatestScoring(ctx, run.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f, err := parseCasesFilter(r.URL.Query(), latest)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	after := r.URL.Query().Get("after")
	lead := casesLead{RunID: run.ID, Spec: run.Spec, Filter: f, Targets: run.Targets, Kinds: failureKinds, Shapes: shapes, Latest: latest,
		Size: fmt.Sprintf("%s cases × %d targets × %d epochs", units.Count(run.Cases), len(run.Targets), max(run.Epochs, 1))}
	for n := 1; n <= latest; n++ {
		lead.Scorings = append(lead.Scorings, n)
	}
	if sp, err := runSpec(run); err == nil {
		for _, sc := range sp.Scorers {
			lead.Scorers = append(lead.Scorers, sc.Name)
		}
	}
	key, stamp := s.indexKey(run, latest)
	notice := ""
	if f.Q != "" && !s.cache.has(key, stamp) {
		notice = fmt.Sprintf("Reading the inputs of %s cases from the run's dataset…", units.Count(run.Cases))
	}
	p := page{Title: "cases · " + run.ID, Nav: "runs", Body: lead}
	s.stream(w, r, "cases", p, notice, func() (any, error) {
		return s.findCases(ctx, run, latest, lead, after)
	})
}

// findCases fills one explorer page: store pages until casesPerPage rows,
// the end, or casesSearchTime.
func (s *Server) findCases(ctx context.Context, run *record.Run, latest int, lead casesLead, after string) (*casesBody, error) {
	f := lead.Filter
	body := &casesBody{Lead: lead}
	if after != "" {
		body.First = casesURL(run.ID, f, "")
	}
	sf := f.storeFilter()
	if key, stamp := s.indexKey(run, latest); f.Q != "" || run.Cases <= eagerIndex || s.cache.has(key, stamp) {
		idx, err := s.caseIndex(ctx, run, latest)
		if err != nil {
			return nil, err
		}
		body.Tags = idx.tags
	}
	if f.Q != "" {
		idx, err := s.caseIndex(ctx, run, latest)
		if err != nil {
			return nil, err
		}
		if idx.inputsErr != "" {
			body.InputsNote = idx.inputsErr
		} else {
			sf.TextCases = idx.search(f.Q)
			body.Inputs = len(sf.TextCases)
			for _, id := range sf.TextCases[:min(len(sf.TextCases), maxInputLinks)] {
				body.InputCases = append(body.InputCases, caseLink{ID: line(id), Href: caseURL(run.ID, id)})
			}
		}
	}
	deadline := s.o.Now().Add(casesSearchTime)
	cur := after
	for {
		rows, next, err := s.o.Store.BrowseResults(ctx, run.ID, f.Scoring, sf, cur, casesPerPage-len(body.Rows))
		if errors.Is(err, store.ErrBadCursor) {
			return nil, fmt.Errorf("after=%q: %w", after, err)
		}
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			body.Rows = append(body.Rows, s.caseRowOf(run.ID, f, row))
		}
		cur = next
		if next == "" || len(body.Rows) >= casesPerPage {
			break
		}
		if s.o.Now().After(deadline) {
			body.Stopped = true
			break
		}
	}
	if cur != "" {
		body.Next = casesURL(run.ID, f, cur)
		if id, ln, ok := s.o.Store.CursorPosition(cur); ok && body.Stopped {
			if ln > 0 {
				body.Reached = fmt.Sprintf("case %s, line %s of %s", line(id), units.Count(ln), units.Count(run.Cases))
			} else {
				body.Reached = fmt.Sprintf("case %s, among the results whose case the run never recorded", line(id))
			}
		}
	}
	return body, nil
}

func (s *Server) caseRowOf(runID string, f casesFilter, r store.ResultRow) caseRow {
	row := caseRow{CaseID: line(r.CaseID), Href: caseURL(runID, r.CaseID), Target: line(r.Target), Epoch: r.Epoch,
		Scorer: r.Scorer, Shape: r.Shape, Kind: r.Kind, Snippet: text(r.Snippet), More: r.RawBytes > len(r.Snippet),
		Size: units.Count(r.RawBytes) + " B", ToolCalls: r.ToolCalls, Latency: units.MS(r.LatencyMS), Cost: units.USD(r.CostUSD),
		Cached: r.FromCache, ErrorKind: r.ErrorKind}
	if r.Scored {
		row.Verdict = "fail"
		if r.Pass {
			row.Verdict = "pass"
		}
	}
	if r.Kind != "" {
		kf := f
		kf.Kind = r.Kind
		row.KindHref = casesURL(runID, kf, "")
	}
	return row
}

// caseURL is a case's page.
func caseURL(runID, caseID string) string {
	return "/runs/" + url.PathEscape(runID) + "/cases/" + url.PathEscape(caseID)
}

// text and line show outside text (a model's output, a dataset's field)
// with control and bidirectional-override characters as escapes,
// html/template escaping the rest: text keeps line breaks (for <pre>), line
// writes them as ↵.
func text(s string) string { return report.Visible(s, true) }
func line(s string) string { return report.Visible(s, false) }

// caseIndex is what the explorer knows of a run's cases beyond the store:
// the tag values for the form, and each case's input fields read from the
// run's dataset (hash-checked by export.OpenInputs), with their text for
// the search.
type caseIndex struct {
	tags []string
	// inputsErr says why the inputs could not be read ("" when they were).
	inputsErr string
	ids       []string
	// text holds each case's field values, lowercased, case i at
	// text[offs[i]:offs[i+1]].
	text   []byte
	offs   []int
	fields map[string]json.RawMessage
}

// search returns the cases whose inputs contain q (case-insensitively).
func (x *caseIndex) search(q string) []string {
	needle := bytes.ToLower([]byte(q))
	var out []string
	for at := 0; at < len(x.text); {
		i := bytes.Index(x.text[at:], needle)
		if i < 0 {
			break
		}
		c := sort.SearchInts(x.offs, at+i+1) - 1 // the case whose text holds the match
		out = append(out, x.ids[c])
		at = x.offs[c+1]
	}
	if out == nil {
		out = []string{}
	}
	return out
}

// indexKey is the cache key and stamp of a run's case index: the run's
// state and its dataset file's size and time, so an edited dataset is
// checked again.
func (s *Server) indexKey(run *record.Run, latest int) (string, string) {
	stamp := s.runStamp(run, latest)
	if sp, err := runSpec(run); err == nil {
		if st, err := os.Stat(sp.Resolve(sp.Dataset.Path)); err == nil {
			stamp += fmt.Sprintf("|%d|%d", st.Size(), st.ModTime().UnixNano())
		} else {
			stamp += "|gone"
		}
	}
	return "cases\x00" + run.ID, stamp
}

// caseIndex returns the run's case index, building it once (concurrent
// requests wait for the one build).
func (s *Server) caseIndex(ctx context.Context, run *record.Run, latest int) (*caseIndex, error) {
	key, stamp := s.indexKey(run, latest)
	v, err := s.cache.get(key, stamp, func() (any, error) { return s.buildIndex(context.WithoutCancel(ctx), run) })
	if err != nil {
		return nil, err
	}
	return v.(*caseIndex), nil
}

func (s *Server) buildIndex(ctx context.Context, run *record.Run) (*caseIndex, error) {
	x := &caseIndex{}
	tags := map[string]bool{}
	err := s.o.Store.Cases(ctx, run.ID, func(c record.Case) error {
		x.ids = append(x.ids, c.ID)
		for k, v := range c.Tags {
			tags[k+"="+v] = true
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	x.tags = sortedKeys(tags)
	if len(x.tags) > maxTagChoices {
		x.tags = x.tags[:maxTagChoices]
	}
	fieldsOf, done, err := s.caseFieldReader(ctx, run, x.ids)
	if err != nil {
		x.inputsErr = err.Error()
		return x, nil
	}
	defer done()
	x.fields = make(map[string]json.RawMessage, len(x.ids))
	x.offs = make([]int, 0, len(x.ids)+1)
	for _, id := range x.ids {
		raw, err := fieldsOf(id)
		if err != nil {
			*x = caseIndex{tags: x.tags, inputsErr: err.Error()}
			return x, nil
		}
		x.offs = append(x.offs, len(x.text))
		x.fields[id] = raw
		x.text = appendSearchText(x.text, raw)
		x.text = append(x.text, 0)
	}
	x.offs = append(x.offs, len(x.text))
	return x, nil
}

// caseFieldReader reads cases' input fields as JSON objects: from the
// run's dataset (hash-checked by export.OpenInputs), or, for a
// score-traces run, from the stored traces of ids (traces.Vars). done
// releases what it holds.
func (s *Server) caseFieldReader(ctx context.Context, run *record.Run, ids []string) (fields func(id string) (json.RawMessage, error), done func(), err error) {
	if run.Sample == "" {
		in, err := export.OpenInputs(run)
		if err != nil {
			return nil, nil, err
		}
		return in.Fields, func() { in.Close() }, nil
	}
	m := make(map[string]json.RawMessage, len(ids))
	err = s.o.Store.Traces(ctx, store.TraceFilter{IDs: ids}, func(t *record.Trace) error {
		raw, err := json.Marshal(traces.Vars(t))
		m[t.ID] = raw
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("reading the run's traces: %w", err)
	}
	return func(id string) (json.RawMessage, error) {
		if raw, ok := m[id]; ok {
			return raw, nil
		}
		return nil, fmt.Errorf("the store no longer holds trace %q", id)
	}, func() {}, nil
}

// appendSearchText appends the lowercased text of a case's field values
// (a JSON object as json.Marshal writes it): each string unescaped, each
// other value as written, keys (of nested objects too) left out, one value
// a line. Text that is not such JSON is appended as it is, lowercased.
func appendSearchText(b []byte, fields json.RawMessage) []byte {
	start := len(b)
	whole := func() []byte { return append(b[:start], bytes.ToLower(fields)...) }
	// open holds, per open container, whether it is an object and whether
	// its next string is a key.
	type container struct{ object, key bool }
	var open []container
	for i := 0; i < len(fields); i++ {
		switch c := fields[i]; c {
		case '{', '[':
			open = append(open, container{object: c == '{', key: c == '{'})
		case '}', ']':
			if len(open) == 0 {
				return whole()
			}
			open = open[:len(open)-1]
		case ',':
			if n := len(open); n > 0 {
				open[n-1].key = open[n-1].object
			}
		case ':':
			if n := len(open); n > 0 {
				open[n-1].key = false
			}
		case ' ', '\t', '\n', '\r':
		case '"':
			end, esc := stringEnd(fields, i)
			if end < 0 {
				return whole()
			}
			if n := len(open); n == 0 || !open[n-1].key {
				if esc {
					var str string
					if json.Unmarshal(fields[i:end+1], &str) != nil {
						return whole()
					}
					b = append(b, str...)
				} else {
					b = append(b, fields[i+1:end]...)
				}
				b = append(b, '\n')
			}
			i = end
		default:
			// A number, true, false or null: up to the next delimiter.
			j := i
			for j < len(fields) && !strings.ContainsRune(",]} \t\n\r", rune(fields[j])) {
				j++
			}
			b = append(append(b, fields[i:j]...), '\n')
			i = j - 1
		}
	}
	return lower(b, start)
}

// stringEnd returns the index of the quote closing the JSON string that
// opens at i (-1 when none), and whether the string has escapes.
func stringEnd(s []byte, i int) (int, bool) {
	esc := false
	for j := i + 1; j < len(s); j++ {
		switch s[j] {
		case '\\':
			esc = true
			j++
		case '"':
			return j, esc
		}
	}
	return -1, esc
}

// lower lowercases b[start:]: ASCII letters in place, through
// bytes.ToLower when the text has other characters.
func lower(b []byte, start int) []byte {
	for i := start; i < len(b); i++ {
		c := b[i]
		if c >= utf8.RuneSelf {
			return append(b[:start], bytes.ToLower(b[start:])...)
		}
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return b
}

// valueText is a field's value as text: a string as it is, anything else
// as JSON without HTML escapes.
func valueText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	if err := e.Encode(v); err != nil {
		return fmt.Sprint(v)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// prettyJSON indents JSON (without HTML escapes); text that is not JSON
// comes back as it is.
func prettyJSON(s string) string {
	var v any
	d := json.NewDecoder(strings.NewReader(s))
	d.UseNumber()
	if d.Decode(&v) != nil {
		return s
	}
	var buf bytes.Buffer
	e := json.NewEncoder(&buf)
	e.SetEscapeHTML(false)
	e.SetIndent("", "  ")
	if e.Encode(v) != nil {
		return s
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

// casePageLead is what a case's page shows at once.
type casePageLead struct {
	RunID, Spec, CaseID string
	Explorer            string
}

// casePageBody is a case's page: what the run recorded of the case, and
// every target's and epoch's output with every scorer's verdict.
type casePageBody struct {
	RunID, CaseID string
	// Known says the run recorded the case (line, tags, expected value).
	Known    bool
	Line     int
	Tags     []string
	Expected string
	Weight   string
	Results  []resultView
	// ExpectedField, when not "", is the spec's dataset.expected field,
	// which the case's line in the dataset file lacks: the page offers
	// the form that writes it (expected.go).
	ExpectedField string
	// Difficulty is the case's difficulty and its rating form
	// (difficulty.go); nil when the run's spec names no difficulty tag.
	Difficulty *caseDifficulty
}

// caseInputsBody is the case's input fields from the run's dataset
// (InputsNote: why they are not shown) and the prompt as the run's spec
// renders it for them (PromptNote: why not).
type caseInputsBody struct {
	Inputs     []inputField
	InputsNote string
	Prompt     []promptMessage
	PromptNote string
}

type inputField struct{ Name, Value string }

type promptMessage struct {
	Role, Content, ToolCallID string
	ToolCalls                 []string
}

// resultView is one output with its scores.
type resultView struct {
	Target, Model, Fingerprint string
	// RawTarget is the target's name as stored, for the add-to-dataset
	// form (Target is shown).
	RawTarget                 string
	Epoch                     int
	Raw, Parsed, ParseError   string
	FinishReason              string
	ToolCalls                 []string
	Turns                     []turnView
	InputTokens, OutputTokens int
	CachedTokens              int
	Cost, Saved               string
	Latency, FirstToken       string
	Attempts, Retries         int
	Redactions                int
	ErrorKind, Error          string
	FromCache                 bool
	Created                   string
	Scorings                  []scoringView
	// Labels are people's labels of this output (assay serve's queues,
	// assay labels import), oldest first.
	Labels []labelView
}

// labelView is one person's label of an output; Stale when the output was
// replaced since (a --retry-errors): the label judged the one before.
type labelView struct {
	Labeler, Verdict, Reason, Corrected, Queue, Created string
	Stale                                               bool
}

type turnView struct {
	N                         int
	Text, FinishReason        string
	ToolCalls                 []string
	Results                   []toolResultView
	InputTokens, OutputTokens int
	Cost, Latency             string
	FromCache                 bool
}

type toolResultView struct{ CallID, Name, Content, Error, Latency string }

// scoringView is one scoring's verdicts on an output.
type scoringView struct {
	Scoring int
	Pending bool
	Scores  []scoreView
}

type scoreView struct {
	Scorer                    string
	Primary, Pass             bool
	Value                     string
	Shape, Kind, Reason, Note string
	Fields                    []string
	JudgeCost                 string
}

// casePage shows one case of a run: all targets and epochs.
func (s *Server) casePage(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	run, ok := s.pathRun(w, r)
	if !ok {
		return
	}
	caseID := r.PathValue("case")
	c, results, err := s.o.Store.CaseResults(ctx, run.ID, caseID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	lead := casePageLead{RunID: run.ID, Spec: run.Spec, CaseID: line(caseID), Explorer: casesURL(run.ID, casesFilter{}, "")}
	p := page{Title: "case " + line(caseID) + " · " + run.ID, Nav: "runs", Body: lead}
	// The outputs come from the store at once; the inputs from the dataset,
	// which on a big run not yet indexed is read up to the case.
	notice := ""
	if latest, err := s.o.Store.LatestScoring(ctx, run.ID); err == nil {
		if key, stamp := s.indexKey(run, latest); !s.cache.has(key, stamp) && run.Cases > eagerIndex {
			notice = "Reading the case's inputs from the run's dataset…"
		}
	}
	s.streamSteps(w, r, "case", p,
		step{Block: "content", Compute: func() (any, error) {
			b, err := s.caseBody(ctx, run, caseID, c, results)
			if b != nil {
				b.Difficulty = s.caseDifficultyOf(run, caseID, c, r.URL.Query().Get("seed"), r.URL.Query().Get("n"))
			}
			return b, err
		}},
		step{Block: "inputs", Notice: notice, Compute: func() (any, error) { return s.caseInputs(ctx, run, caseID, c != nil), nil }})
}

func (s *Server) caseBody(ctx context.Context, run *record.Run, caseID string, c *record.Case, results []record.Result) (*casePageBody, error) {
	b := &casePageBody{RunID: run.ID, CaseID: caseID}
	if c != nil {
		b.Known, b.Line = true, c.Line
		for _, k := range slices.Sorted(maps.Keys(c.Tags)) {
			b.Tags = append(b.Tags, line(k+"="+c.Tags[k]))
		}
		if c.Expected != nil {
			b.Expected = text(prettyJSON(string(c.Expected)))
		}
		if c.Weight != nil {
			b.Weight = strconv.FormatFloat(*c.Weight, 'g', -1, 64)
		}
		b.ExpectedField = s.expectedMissing(run, caseID, c)
	}
	scores, err := s.o.Store.CaseScores(ctx, run.ID, caseID)
	if err != nil {
		return nil, err
	}
	labeled := map[record.Key][]record.Label{}
	err = s.o.Store.Labels(ctx, run.ID, func(l record.Label) error {
		if l.CaseID == caseID {
			labeled[l.Key()] = append(labeled[l.Key()], l)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	for i := range results {
		v := resultViewOf(&results[i], scores)
		hash := record.LabelOutputHash(&results[i])
		for _, l := range labeled[results[i].Key()] {
			v.Labels = append(v.Labels, labelView{Labeler: line(l.Labeler), Verdict: l.Verdict, Reason: text(l.Reason), Corrected: text(l.Corrected),
				Queue: line(l.Queue), Created: l.Created.UTC().Format("2006-01-02 15:04:05Z"), Stale: l.OutputHash != hash})
		}
		b.Results = append(b.Results, v)
	}
	return b, nil
}

// caseInputs is a case's inputs and the prompt rendered from them.
func (s *Server) caseInputs(ctx context.Context, run *record.Run, caseID string, known bool) *caseInputsBody {
	b := &caseInputsBody{}
	fields, note := s.caseFields(ctx, run, caseID)
	if fields == nil && !known {
		note = "the run never recorded this case (its results are stored without it), and " + note
	}
	b.InputsNote = note
	if fields == nil {
		b.PromptNote = "the prompt is rendered from the case's inputs, which are not available"
		return b
	}
	for _, k := range slices.Sorted(maps.Keys(fields)) {
		b.Inputs = append(b.Inputs, inputField{Name: line(k), Value: text(valueText(fields[k]))})
	}
	if run.Sample != "" {
		b.Prompt, b.PromptNote = s.tracePrompt(ctx, caseID)
		return b
	}
	b.Prompt, b.PromptNote = renderPrompt(run, fields)
	return b
}

// tracePrompt is what a production trace's model was sent: its system
// instructions and conversation as the trace recorded them (the spec's
// prompt did not make them).
func (s *Server) tracePrompt(ctx context.Context, traceID string) ([]promptMessage, string) {
	t, err := s.o.Store.Trace(ctx, traceID)
	if err != nil {
		return nil, "reading the trace: " + err.Error()
	}
	var out []promptMessage
	if t.System != "" {
		out = append(out, promptMessage{Role: "system", Content: text(t.System)})
	}
	for _, m := range t.Input {
		pm := promptMessage{Role: line(m.Role), Content: text(m.Content), ToolCallID: line(m.ToolCallID)}
		for _, tc := range m.ToolCalls {
			pm.ToolCalls = append(pm.ToolCalls, line(tc.String()))
		}
		out = append(out, pm)
	}
	return out, ""
}

// caseFields reads a case's input fields: from the run's case index when it
// is built, else by reading the dataset up to the case. note says why
// there are none.
func (s *Server) caseFields(ctx context.Context, run *record.Run, caseID string) (map[string]any, string) {
	if run.Sample != "" {
		in, err := s.traceInputs(ctx, run, []string{caseID})
		if err != nil {
			return nil, err.Error()
		}
		if f := in.Fields[caseID]; f != nil {
			return f, ""
		}
		return nil, in.Note
	}
	var raw json.RawMessage
	latest, err := s.o.Store.LatestScoring(ctx, run.ID)
	if err != nil {
		return nil, err.Error()
	}
	if key, stamp := s.indexKey(run, latest); s.cache.has(key, stamp) {
		x, err := s.caseIndex(ctx, run, latest)
		if err != nil {
			return nil, err.Error()
		}
		if x.inputsErr != "" {
			return nil, x.inputsErr
		}
		if raw = x.fields[caseID]; raw == nil {
			return nil, "the run's dataset has no case " + strconv.Quote(caseID)
		}
	} else {
		in, err := export.OpenInputs(run)
		if err != nil {
			return nil, err.Error()
		}
		defer in.Close()
		if raw, err = in.Fields(caseID); err != nil {
			return nil, err.Error()
		}
	}
	var m map[string]any
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	if err := d.Decode(&m); err != nil {
		return nil, "reading the case's fields: " + err.Error()
	}
	return m, ""
}

// renderPrompt renders the run's prompt for a case's fields as the run
// did (task.CompilePrompt on the run's resolved spec), or says why not.
func renderPrompt(run *record.Run, fields map[string]any) ([]promptMessage, string) {
	sp, err := runSpec(run)
	if err != nil {
		return nil, err.Error()
	}
	t, err := task.CompilePrompt(sp)
	if err != nil {
		return nil, "the run's prompt does not compile: " + err.Error()
	}
	msgs, err := t.Render(fields)
	if err != nil {
		return nil, "rendering the prompt for this case: " + err.Error()
	}
	out := make([]promptMessage, 0, len(msgs))
	for _, m := range msgs {
		pm := promptMessage{Role: m.Role, Content: text(m.Content), ToolCallID: line(m.ToolCallID)}
		for _, tc := range m.ToolCalls {
			pm.ToolCalls = append(pm.ToolCalls, line(tc.Name+"("+tc.Arguments+")"))
		}
		out = append(out, pm)
	}
	return out, ""
}

func resultViewOf(r *record.Result, scores []store.CaseScore) resultView {
	v := resultView{Target: line(r.Target), RawTarget: r.Target, Model: line(r.Model), Fingerprint: line(r.Fingerprint), Epoch: r.Epoch,
		Raw: text(r.Raw), ParseError: text(r.ParseError), FinishReason: line(r.FinishReason),
		InputTokens: r.InputTokens, OutputTokens: r.OutputTokens, CachedTokens: r.CachedTokens,
		Cost: units.USD(r.CostUSD), Latency: units.MS(r.LatencyMS), Attempts: r.Attempts, Retries: r.Retries,
		Redactions: r.Redactions, ErrorKind: line(r.ErrorKind), Error: text(r.Error), FromCache: r.FromCache}
	if r.Parsed != "" {
		v.Parsed = text(prettyJSON(r.Parsed))
	}
	if r.SavedUSD != 0 {
		v.Saved = units.USD(r.SavedUSD)
	}
	if r.FirstTokenMS != 0 {
		v.FirstToken = units.MS(r.FirstTokenMS)
	}
	if !r.CreatedAt.IsZero() {
		v.Created = stamp(r.CreatedAt)
	}
	for _, tc := range r.ToolCalls {
		v.ToolCalls = append(v.ToolCalls, line(tc.String()))
	}
	for i, t := range r.Turns {
		tv := turnView{N: i + 1, Text: text(t.Text), FinishReason: line(t.FinishReason), InputTokens: t.InputTokens,
			OutputTokens: t.OutputTokens, Cost: units.USD(t.CostUSD), Latency: units.MS(t.LatencyMS), FromCache: t.FromCache}
		for _, tc := range t.ToolCalls {
			tv.ToolCalls = append(tv.ToolCalls, line(tc.String()))
		}
		for _, tr := range t.Results {
			tv.Results = append(tv.Results, toolResultView{CallID: line(tr.CallID), Name: line(tr.Name), Content: text(tr.Content),
				Error: line(tr.Error), Latency: units.MS(tr.LatencyMS)})
		}
		v.Turns = append(v.Turns, tv)
	}
	for _, sc := range scores {
		if sc.Target != r.Target || sc.Epoch != r.Epoch {
			continue
		}
		if n := len(v.Scorings); n == 0 || v.Scorings[n-1].Scoring != sc.Scoring {
			v.Scorings = append(v.Scorings, scoringView{Scoring: sc.Scoring, Pending: sc.Pending})
		}
		sv := scoreView{Scorer: line(sc.Scorer), Primary: sc.Primary, Pass: sc.Pass, Value: strconv.FormatFloat(sc.Value, 'g', 4, 64),
			Shape: sc.Shape, Kind: line(sc.Kind), Reason: text(sc.Reason), Note: line(sc.ParseNote)}
		for _, fv := range sc.Fields {
			sv.Fields = append(sv.Fields, line(fv.Field+": "+fv.Status))
		}
		if sc.JudgeCost != 0 || sc.JudgeSaved != 0 {
			sv.JudgeCost = units.USD(sc.JudgeCost + sc.JudgeSaved)
		}
		last := &v.Scorings[len(v.Scorings)-1]
		last.Scores = append(last.Scores, sv)
	}
	return v
}
