package serve

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/labels"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/store"
)

// labelRoutes registers the labeling pages: every queue's progress, the
// form that makes a queue over a run, and a queue's items shown blind.
func (s *Server) labelRoutes() {
	s.mux.HandleFunc("GET /labels", s.labelsList)
	s.mux.HandleFunc("GET /runs/{id}/queues", s.queueForm)
	s.mux.HandleFunc("POST /runs/{id}/queues", s.createQueue)
	s.mux.HandleFunc("GET /runs/{id}/queues/{name}", s.queueItem)
	s.mux.HandleFunc("POST /runs/{id}/queues/{name}/label", s.saveLabel)
	s.mux.HandleFunc("POST /runs/{id}/queues/{name}/undo", s.undoLabel)
	s.mux.HandleFunc("POST /runs/{id}/cases/{case}/add", s.addToDataset) // add.go
}

// labeler cookie: the name labels are stored under, remembered per browser.
const labelerCookie = "assay_labeler"

// maxLabeler bounds a labeler's name (in runes).
const maxLabeler = 80

// labelerOf is the labeler's name: the form's field when given, else the
// cookie, else Options.Labeler, else "anonymous".
func (s *Server) labelerOf(r *http.Request) string {
	if r.Method == http.MethodPost {
		if n := cleanLabeler(r.PostForm.Get("labeler")); n != "" {
			return n
		}
	}
	if c, err := r.Cookie(labelerCookie); err == nil {
		if v, err := url.QueryUnescape(c.Value); err == nil {
			if n := cleanLabeler(v); n != "" {
				return n
			}
		}
	}
	if n := cleanLabeler(s.o.Labeler); n != "" {
		return n
	}
	return "anonymous"
}

// cleanLabeler trims a name, drops control characters and bounds it.
func cleanLabeler(n string) string {
	n = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == utf8.RuneError {
			return -1
		}
		return r
	}, strings.TrimSpace(n))
	if utf8.RuneCountInString(n) > maxLabeler {
		n = string([]rune(n)[:maxLabeler])
	}
	return strings.TrimSpace(n)
}

func rememberLabeler(w http.ResponseWriter, name string) {
	http.SetCookie(w, &http.Cookie{Name: labelerCookie, Value: url.QueryEscape(name), Path: "/", MaxAge: 365 * 24 * 3600,
		HttpOnly: true, SameSite: http.SameSiteStrictMode})
}

// labelsPage lists every queue with its progress.
type labelsPage struct {
	Queues []queueRow
}

type queueRow struct {
	store.QueueProgress
	Percent int
}

func (s *Server) labelsList(w http.ResponseWriter, r *http.Request) {
	qs, err := s.o.Store.Queues(r.Context(), "")
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p := labelsPage{}
	for _, q := range qs {
		p.Queues = append(p.Queues, queueRow{QueueProgress: q, Percent: percent(q.Labeled, q.Items)})
	}
	s.renderPage(w, r, "labels", page{Title: "labels", Nav: "labels", Body: p})
}

func percent(n, of int) int {
	if of <= 0 {
		return 0
	}
	return n * 100 / of
}

// queueFormPage is the form that makes a queue over a run, with the run's
// queues so far.
type queueFormPage struct {
	Run     *record.Run
	Scorers []string
	TagKeys []string
	Queues  []queueRow
	// What the form holds (the defaults, or what was posted).
	Name   string
	Size   string
	Seed   string
	Judge  string
	Slices map[string]bool
	Error  string
}

func (s *Server) queueForm(w http.ResponseWriter, r *http.Request) {
	run, ok := s.pathRun(w, r)
	if !ok {
		return
	}
	p, err := s.queueFormData(r.Context(), run)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p.Name = fmt.Sprintf("queue-%d", len(p.Queues)+1)
	p.Size = "50"
	p.Seed = strconv.FormatInt(s.o.Now().UnixNano()%1_000_000, 10)
	s.renderPage(w, r, "queues", page{Title: "new labeling queue", Nav: "labels", Body: p})
}

// queueFormData is what the queue form offers for a run: its scorers in
// the latest scoring, its cases' tag keys and its queues.
func (s *Server) queueFormData(ctx context.Context, run *record.Run) (*queueFormPage, error) {
	p := &queueFormPage{Run: run, Slices: map[string]bool{}}
	p.Scorers = runScorers(run)
	var err error
	if p.TagKeys, err = s.tagKeys(ctx, run); err != nil {
		return nil, err
	}
	qs, err := s.o.Store.Queues(ctx, run.ID)
	if err != nil {
		return nil, err
	}
	for _, q := range qs {
		p.Queues = append(p.Queues, queueRow{QueueProgress: q, Percent: percent(q.Labeled, q.Items)})
	}
	return p, nil
}

// tagKeys are the tag keys of a run's cases, sorted (one pass over the
// cases, cached until the run changes).
func (s *Server) tagKeys(ctx context.Context, run *record.Run) ([]string, error) {
	// The spec's dataset.tags name them (a case has no tag they do not
	// name): no case need be read. A run whose configuration does not
	// read has its cases read once.
	if sp, err := runSpec(run); err == nil {
		keys := make([]string, 0, len(sp.Dataset.Tags))
		for _, t := range sp.Dataset.Tags {
			keys = append(keys, t.Key)
		}
		slices.Sort(keys)
		return slices.Compact(keys), nil
	}
	v, err := s.cache.get("tagkeys\x00"+run.ID, fmt.Sprintf("%s/%d", run.Status, run.Cases), func() (any, error) {
		seen := map[string]bool{}
		err := s.o.Store.Cases(ctx, run.ID, func(c record.Case) error {
			for k := range c.Tags {
				seen[k] = true
			}
			return nil
		})
		keys := make([]string, 0, len(seen))
		for k := range seen {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		return keys, err
	})
	if err != nil {
		return nil, err
	}
	return v.([]string), nil
}

// maxQueueSize bounds a queue (a person labels tens, not thousands).
const maxQueueSize = 10000

func (s *Server) createQueue(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	run, ok := s.pathRun(w, r)
	if !ok {
		return
	}
	p, err := s.queueFormData(ctx, run)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f := r.PostForm
	p.Name, p.Size, p.Seed, p.Judge = strings.TrimSpace(f.Get("name")), strings.TrimSpace(f.Get("size")), strings.TrimSpace(f.Get("seed")), f.Get("judge")
	q := labels.QueueSpec{Name: p.Name, Judge: p.Judge}
	var problems []string
	switch {
	case p.Name == "":
		problems = append(problems, "name the queue")
	case len(p.Name) > 100 || strings.ContainsAny(p.Name, "/\\?#%") || strings.IndexFunc(p.Name, unicode.IsControl) >= 0:
		problems = append(problems, "a queue's name is at most 100 characters, without / \\ ? # % or control characters")
	}
	if n, err := strconv.Atoi(p.Size); err != nil || n < 1 || n > maxQueueSize {
		problems = append(problems, fmt.Sprintf("the size is a whole number from 1 to %d (30–50 labels calibrate a judge)", maxQueueSize))
	} else {
		q.Size = n
	}
	if n, err := strconv.ParseUint(p.Seed, 10, 64); err != nil {
		problems = append(problems, "the seed is a whole number from 0 up")
	} else {
		q.Seed = n
	}
	if p.Judge != "" && !slices.Contains(p.Scorers, p.Judge) {
		problems = append(problems, fmt.Sprintf("the run has no scorer %q (its scorers: %s)", p.Judge, strings.Join(p.Scorers, ", ")))
	}
	for _, k := range f["slices"] {
		if !slices.Contains(p.TagKeys, k) {
			problems = append(problems, fmt.Sprintf("the run's cases have no tag %q (their tags: %s)", k, strings.Join(p.TagKeys, ", ")))
			continue
		}
		p.Slices[k] = true
		q.Slices = append(q.Slices, k)
	}
	if len(problems) == 0 {
		queue, err := labels.NewQueue(ctx, s.o.Store, run, q, s.o.Now())
		switch {
		case err != nil:
			problems = append(problems, err.Error())
		case len(queue.Items) == 0:
			problems = append(problems, "the run has no output to label (failed calls are left out)")
		default:
			err := s.o.Store.CreateQueue(ctx, queue)
			if errors.Is(err, store.ErrQueueExists) {
				problems = append(problems, fmt.Sprintf("the run already has a queue named %q: choose another name", q.Name))
			} else if err != nil {
				s.fail(w, r, err)
				return
			}
		}
	}
	if len(problems) > 0 {
		p.Error = strings.Join(problems, "; ")
		s.renderCode(w, r, http.StatusBadRequest, "queues", page{Title: "new labeling queue", Nav: "labels", Body: p})
		return
	}
	http.Redirect(w, r, queueURL(run.ID, q.Name), http.StatusSeeOther)
}

func queueURL(runID, name string) string {
	return "/runs/" + url.PathEscape(runID) + "/queues/" + url.PathEscape(name)
}

// itemPage is one queue item shown blind: the case's input and the output,
// nothing that names the target, the model or any verdict. Reveal is the
// previous item's outcome, shown once it is labeled.
type itemPage struct {
	RunID   string
	Queue   string
	Labeler string
	// Done counts the labeler's labeled items, Total the queue's.
	Done, Total int
	Percent     int
	// Finished is set when every item is labeled (no Item then); Judge
	// is then the queue's judge, for the link to its calibration (never
	// named while an item is shown blind).
	Finished bool
	Judge    string
	Item     *blindItem
	Reveal   *reveal
	Error    string
	// What the form held when it was refused (a fail without reason).
	Reason, Corrected string
}

// blindItem is what a labeler sees of an output.
type blindItem struct {
	Position int
	Number   int // Position + 1
	CaseID   string
	Hash     string
	Fields   []field
	// InputNote says why the input may not be the one the run sent.
	InputNote string
	// Replaced is set when the stored output is not the one the queue drew
	// (a retried failed call replaced it): it can only be skipped.
	Replaced  bool
	Raw       string
	ToolCalls []string
	Turns     []blindTurn
}

type field struct {
	Name, Value string
}

// blindTurn is an agent loop's model call: its text, calls and the tool
// results (no cost, no latency, nothing of the model).
type blindTurn struct {
	Number    int
	Text      string
	ToolCalls []string
	Results   []string
}

// reveal is a labeled item's outcome: the label and the judge's verdict.
type reveal struct {
	Number    int
	CaseID    string
	Verdict   string
	Reason    string
	Corrected string
	Judge     string // the judge scorer ("" when the queue has none)
	// JudgeVerdict is "pass", "fail" or "" (no verdict stored).
	JudgeVerdict string
	JudgeReason  string
	Agrees       bool
}

// labelerLabels are the labeler's labels in a queue, by position.
func (s *Server) labelerLabels(ctx context.Context, q *record.Queue, labeler string) (map[int]record.Label, error) {
	byKey := make(map[record.Key]int, len(q.Items))
	for _, it := range q.Items {
		byKey[it.Key()] = it.Position
	}
	got := map[int]record.Label{}
	err := s.o.Store.Labels(ctx, q.RunID, func(l record.Label) error {
		if l.Queue != q.Name || l.Labeler != labeler {
			return nil
		}
		if pos, ok := byKey[l.Key()]; ok {
			got[pos] = l
		}
		return nil
	})
	return got, err
}

func (s *Server) loadQueue(r *http.Request) (*record.Run, *record.Queue, error) {
	run, err := s.o.Store.GetRun(r.Context(), r.PathValue("id"))
	if err != nil {
		return nil, nil, err
	}
	q, err := s.o.Store.Queue(r.Context(), run.ID, r.PathValue("name"))
	if err != nil {
		return nil, nil, err
	}
	return run, q, nil
}

// queueItem shows the labeler's next unlabeled item (or ?at=POSITION when
// that one is unlabeled), and ?done=POSITION's outcome once it is labeled.
func (s *Server) queueItem(w http.ResponseWriter, r *http.Request) {
	run, q, err := s.loadQueue(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p, err := s.itemPageFor(r, run, q, s.labelerOf(r))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	s.renderPage(w, r, "queue", page{Title: "label · " + q.Name, Nav: "labels", Body: p})
}

func (s *Server) itemPageFor(r *http.Request, run *record.Run, q *record.Queue, labeler string) (*itemPage, error) {
	ctx := r.Context()
	done, err := s.labelerLabels(ctx, q, labeler)
	if err != nil {
		return nil, err
	}
	p := &itemPage{RunID: run.ID, Queue: q.Name, Labeler: labeler, Done: len(done), Total: len(q.Items)}
	p.Percent = percent(p.Done, p.Total)
	if pos, err := strconv.Atoi(r.URL.Query().Get("done")); err == nil {
		if l, ok := done[pos]; ok {
			if p.Reveal, err = s.revealOf(ctx, run, q, pos, l); err != nil {
				return nil, err
			}
		}
	}
	next := -1
	if pos, err := strconv.Atoi(r.URL.Query().Get("at")); err == nil && pos >= 0 && pos < len(q.Items) {
		if _, ok := done[pos]; !ok {
			next = pos
		}
	}
	if next < 0 {
		for _, it := range q.Items {
			if _, ok := done[it.Position]; !ok {
				next = it.Position
				break
			}
		}
	}
	if next < 0 {
		p.Finished, p.Judge = true, q.Judge
		return p, nil
	}
	p.Item, err = s.blind(ctx, run, q, next)
	return p, err
}

// item is the queue's item at a position.
func item(q *record.Queue, pos int) (*record.QueueItem, bool) {
	for i := range q.Items {
		if q.Items[i].Position == pos {
			return &q.Items[i], true
		}
	}
	return nil, false
}

// blind builds what the labeler sees of the item at pos.
func (s *Server) blind(ctx context.Context, run *record.Run, q *record.Queue, pos int) (*blindItem, error) {
	it, ok := item(q, pos)
	if !ok {
		return nil, badRequest("the queue has no item %d", pos)
	}
	res, err := s.o.Store.Result(ctx, run.ID, it.Key())
	if err != nil {
		return nil, fmt.Errorf("item %d of queue %s: %w", pos+1, q.Name, err)
	}
	b := &blindItem{Position: pos, Number: pos + 1, CaseID: it.CaseID, Hash: record.LabelOutputHash(res), Raw: res.Raw}
	b.Replaced = b.Hash != it.OutputHash
	for _, c := range res.ToolCalls {
		b.ToolCalls = append(b.ToolCalls, c.String())
	}
	for i, t := range res.Turns {
		bt := blindTurn{Number: i + 1, Text: t.Text}
		for _, c := range t.ToolCalls {
			bt.ToolCalls = append(bt.ToolCalls, c.String())
		}
		for _, tr := range t.Results {
			s := tr.Name + " → " + tr.Content
			if tr.Error != "" {
				s += " (error: " + tr.Error + ")"
			}
			bt.Results = append(bt.Results, s)
		}
		b.Turns = append(b.Turns, bt)
	}
	ids := make([]string, len(q.Items))
	for i, x := range q.Items {
		ids[i] = x.CaseID
	}
	in, err := s.inputsOf(ctx, run, ids)
	switch {
	case err != nil:
		b.InputNote = "the case's input cannot be shown: " + err.Error()
	case in.Fields[it.CaseID] == nil:
		b.InputNote = fmt.Sprintf("case %s is not in the run's dataset file any more", it.CaseID)
	default:
		b.InputNote = in.Note
		vars := in.Fields[it.CaseID]
		names := make([]string, 0, len(vars))
		for k := range vars {
			names = append(names, k)
		}
		slices.Sort(names)
		for _, k := range names {
			b.Fields = append(b.Fields, field{Name: k, Value: fieldText(vars[k])})
		}
	}
	return b, nil
}

// fieldText is a dataset value as a person reads it: a string as it is,
// anything else as JSON.
func fieldText(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return string(mustJSON(v))
}

// judgeVerdict is the judge scorer's verdict on one labeled item.
type judgeVerdict struct {
	Pass   bool
	Reason string
}

// judgeVerdictOf reads the judge's verdict on one item in the run's latest
// scoring from its case's scores (a few rows, however big the run); ok is
// false when the judge gave none.
func (s *Server) judgeVerdictOf(ctx context.Context, run *record.Run, judge string, k record.Key) (v judgeVerdict, ok bool, err error) {
	scoring, err := s.o.Store.LatestScoring(ctx, run.ID)
	if err != nil {
		return v, false, err
	}
	scores, err := s.o.Store.CaseScores(ctx, run.ID, k.CaseID)
	if err != nil {
		return v, false, err
	}
	for _, sc := range scores {
		if sc.Scoring == scoring && sc.Scorer == judge && sc.Target == k.Target && sc.Epoch == k.Epoch {
			return judgeVerdict{Pass: sc.Pass, Reason: sc.Reason}, true, nil
		}
	}
	return v, false, nil
}

func (s *Server) revealOf(ctx context.Context, run *record.Run, q *record.Queue, pos int, l record.Label) (*reveal, error) {
	rv := &reveal{Number: pos + 1, CaseID: l.CaseID, Verdict: l.Verdict, Reason: l.Reason, Corrected: l.Corrected, Judge: q.Judge}
	if q.Judge == "" {
		return rv, nil
	}
	v, ok, err := s.judgeVerdictOf(ctx, run, q.Judge, l.Key())
	if err != nil {
		return nil, err
	}
	if ok {
		rv.JudgeVerdict = record.LabelFail
		if v.Pass {
			rv.JudgeVerdict = record.LabelPass
		}
		rv.JudgeReason = v.Reason
		rv.Agrees = rv.JudgeVerdict == l.Verdict
	}
	return rv, nil
}

// maxReason bounds a reason and a corrected output (in bytes; the body is
// bounded by MaxBody as well).
const maxReason = 64 << 10

// saveLabel stores the labeler's verdict on one item and shows the next,
// with this one's judge verdict revealed. A fail needs a reason: without
// one the same item is shown again with what was typed.
func (s *Server) saveLabel(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	run, q, err := s.loadQueue(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	f := r.PostForm
	labeler := s.labelerOf(r)
	pos, err := strconv.Atoi(f.Get("position"))
	if err != nil {
		s.fail(w, r, badRequest("the form names no item (position %q)", f.Get("position")))
		return
	}
	it, ok := item(q, pos)
	if !ok {
		s.fail(w, r, badRequest("queue %s has no item at position %d", q.Name, pos))
		return
	}
	l := record.Label{
		RunID: run.ID, CaseID: it.CaseID, Target: it.Target, Epoch: it.Epoch, OutputHash: it.OutputHash,
		Queue: q.Name, Labeler: labeler, Verdict: f.Get("verdict"),
		Reason:    strings.TrimSpace(strings.ReplaceAll(f.Get("reason"), "\r\n", "\n")),
		Corrected: strings.ReplaceAll(f.Get("corrected"), "\r\n", "\n"),
		Created:   s.o.Now().UTC(),
	}
	var problem string
	switch {
	case l.Verdict != record.LabelPass && l.Verdict != record.LabelFail && l.Verdict != record.LabelSkip:
		problem = fmt.Sprintf("choose pass, fail or skip (got %q)", l.Verdict)
	case l.Verdict == record.LabelFail && l.Reason == "":
		problem = "a fail needs a reason: say what is wrong with the output (it is what makes the label useful), then press fail again"
	case len(l.Reason) > maxReason || len(l.Corrected) > maxReason:
		problem = fmt.Sprintf("the reason and the corrected output are at most %d KiB each", maxReason>>10)
	}
	if problem == "" {
		res, err := s.o.Store.Result(ctx, run.ID, it.Key())
		if err != nil {
			s.fail(w, r, err)
			return
		}
		switch h := record.LabelOutputHash(res); {
		case h != f.Get("hash"):
			problem = "this output changed since the page was shown (the run's failed calls were retried): the label was not saved; look at it again"
		case h != it.OutputHash && l.Verdict != record.LabelSkip:
			problem = "this output replaced the one the queue drew (a retried failed call), so a label of it would not count: skip it"
		}
	}
	if problem == "" {
		if err := labels.Check(&l); err != nil {
			problem = err.Error()
		}
	}
	if problem != "" {
		p, err := s.itemPageFor(r, run, q, labeler)
		if err != nil {
			s.fail(w, r, err)
			return
		}
		if b, err := s.blind(ctx, run, q, pos); err == nil {
			p.Item, p.Finished = b, false
		}
		p.Error, p.Reason, p.Corrected = problem, f.Get("reason"), f.Get("corrected")
		s.renderCode(w, r, http.StatusBadRequest, "queue", page{Title: "label · " + q.Name, Nav: "labels", Body: p})
		return
	}
	if _, err := s.o.Store.PutLabels(ctx, []record.Label{l}); err != nil {
		s.fail(w, r, err)
		return
	}
	rememberLabeler(w, labeler)
	http.Redirect(w, r, queueURL(run.ID, q.Name)+"?done="+strconv.Itoa(pos), http.StatusSeeOther)
}

// undoLabel deletes the labeler's last label in the queue and shows that
// item again.
func (s *Server) undoLabel(w http.ResponseWriter, r *http.Request) {
	run, q, err := s.loadQueue(r)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	labeler := s.labelerOf(r)
	l, err := s.o.Store.UndoLabel(r.Context(), run.ID, q.Name, labeler)
	if errors.Is(err, store.ErrNotFound) {
		http.Redirect(w, r, queueURL(run.ID, q.Name), http.StatusSeeOther)
		return
	}
	if err != nil {
		s.fail(w, r, err)
		return
	}
	at := ""
	for _, it := range q.Items {
		if it.Key() == l.Key() {
			at = "?at=" + strconv.Itoa(it.Position)
		}
	}
	http.Redirect(w, r, queueURL(run.ID, q.Name)+at, http.StatusSeeOther)
}

// renderCode renders a page with a status other than 200 (a refused form
// shown again with its message).
func (s *Server) renderCode(w http.ResponseWriter, r *http.Request, code int, name string, p page) {
	t, ok := s.pages[name]
	if !ok {
		s.fail(w, r, fmt.Errorf("no page template %q", name))
		return
	}
	p.CSRF = csrfToken(w, r)
	var buf strings.Builder
	if err := t.Execute(&buf, p); err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.WriteHeader(code)
	_, _ = w.Write([]byte(buf.String()))
}

func mustJSON(v any) []byte {
	b, err := json.Marshal(v)
	if err != nil {
		return []byte(fmt.Sprint(v))
	}
	return b
}
