package serve

import (
	"bytes"
	"context"
	"fmt"
	"html/template"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/report"
)

// runRoutes registers the runs list, a run's report and two runs compared.
func (s *Server) runRoutes() {
	s.mux.HandleFunc("GET /{$}", s.runsList)
	s.mux.HandleFunc("GET /runs/{id}", s.runPage)
	s.mux.HandleFunc("GET /compare", s.comparePage)
	s.mux.HandleFunc("GET /assets/report.css", s.reportStyle)
}

// runsPerPage is how many runs the list shows at once.
const runsPerPage = 100

// runsList is the runs page's data.
type runsList struct {
	// Spec and Experiment are the filter; Specs and Experiments the values
	// the store has, for the filter's choices.
	Spec, Experiment   string
	Specs, Experiments []string
	Runs               []runRow
	// Matching counts the runs the filter keeps; Next is the ID the next
	// page starts after ("" on the last page).
	Matching int
	Next     string
}

// runChoice is a run in the compare form's lists.
type runChoice struct{ ID, Label string }

func choiceOf(run *record.Run) runChoice {
	return runChoice{ID: run.ID, Label: report.Visible(run.ID+" · "+run.Spec+" · "+strings.Join(run.Targets, ", "), false)}
}

// compareChoices bounds the compare form's lists.
const compareChoices = 500

// runRow is one run as the list shows it.
type runRow struct {
	ID, Spec, Experiment, Status string
	Targets                      string
	Cases, Epochs, Scorings      int
	Started, Ended               string
}

func newRunRow(r *record.Run) runRow {
	row := runRow{ID: r.ID, Spec: report.Visible(r.Spec, false), Experiment: report.Visible(r.Experiment, false), Status: r.Status,
		Targets: report.Visible(strings.Join(r.Targets, ", "), false),
		Cases:   r.Cases, Epochs: r.Epochs, Started: stamp(r.Started)}
	if !r.Ended.IsZero() {
		row.Ended = stamp(r.Ended)
	}
	return row
}

func stamp(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") }

// runsList lists the runs, newest first, runsPerPage at a time
// (?after=ID), filtered by ?spec= and ?experiment=.
func (s *Server) runsList(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	q := r.URL.Query()
	runs, err := s.o.Store.ListRuns(ctx, 0)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p := runsList{Spec: q.Get("spec"), Experiment: q.Get("experiment")}
	specs, exps := map[string]bool{}, map[string]bool{}
	var kept []*record.Run
	for i := range runs {
		run := &runs[i]
		specs[run.Spec] = true
		if run.Experiment != "" {
			exps[run.Experiment] = true
		}
		if (p.Spec == "" || run.Spec == p.Spec) && (p.Experiment == "" || run.Experiment == p.Experiment) {
			kept = append(kept, run)
		}
	}
	p.Specs, p.Experiments = sortedKeys(specs), sortedKeys(exps)
	p.Matching = len(kept)
	if after := q.Get("after"); after != "" {
		i := slices.IndexFunc(kept, func(run *record.Run) bool { return run.ID == after })
		if i < 0 {
			s.fail(w, r, badRequest("after=%q: no such run in this list (it may have been deleted); start from the first page", after))
			return
		}
		kept = kept[i+1:]
	}
	if len(kept) > runsPerPage {
		p.Next = kept[runsPerPage-1].ID
		kept = kept[:runsPerPage]
	}
	for _, run := range kept {
		row := newRunRow(run)
		if row.Scorings, err = s.o.Store.LatestScoring(ctx, run.ID); err != nil {
			s.fail(w, r, err)
			return
		}
		p.Runs = append(p.Runs, row)
	}
	s.renderPage(w, r, "runs", page{Title: "runs", Nav: "runs", Body: p})
}

// sortedKeys are a set's members, sorted.
func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

// runLead is what a run's page shows before its report is computed.
type runLead struct {
	Run runRow
	// Scoring is the scoring shown, Latest the run's latest complete one,
	// Scorings every scoring to choose from (1 … Latest).
	Scoring, Latest int
	Scorings        []int
	// RateDifficulty says the run's spec names a difficulty tag: the page
	// links the rating queue (difficulty.go).
	RateDifficulty bool
}

// runReport is a run's report, rendered.
type runReport struct {
	// HTML is the report's body as report.HTMLBody writes it: rendered by
	// html/template from the analysis, every value escaped there.
	HTML template.HTML
	// Empty says the run has no scores yet.
	Empty bool
}

// runPage shows a run's report — the HTML report's findings and charts,
// rendered by the report's own renderer — for ?scoring=N (default the
// latest). The page's head leaves at once; the report follows when it is
// computed (seconds for a million results) and is cached per run and
// scoring.
func (s *Server) runPage(w http.ResponseWriter, r *http.Request) {
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
	lead := runLead{Run: newRunRow(run), Scoring: latest, Latest: latest}
	if d, err := difficultyOf(run); err == nil && d.Tag != "" {
		lead.RateDifficulty = true
	}
	lead.Run.Scorings = latest
	for n := 1; n <= latest; n++ {
		lead.Scorings = append(lead.Scorings, n)
	}
	if v := r.URL.Query().Get("scoring"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > latest {
			s.fail(w, r, badRequest("scoring=%q: run %s has scorings 1 to %d", v, run.ID, latest))
			return
		}
		lead.Scoring = n
	}
	p := page{Title: run.ID + " · " + run.Spec, Nav: "runs", Styles: []string{"/assets/report.css"}, Body: lead}
	if latest == 0 {
		s.stream(w, r, "report", p, "", func() (any, error) { return runReport{Empty: true}, nil })
		return
	}
	key, stamp := "report\x00"+run.ID+"\x00"+strconv.Itoa(lead.Scoring), s.runStamp(run, latest)
	st := step{Block: "content", Compute: func() (any, error) {
		// The report outlives a visitor who leaves: the next visit finds it.
		return s.cache.get(key, stamp, func() (any, error) { return s.renderReport(context.WithoutCancel(ctx), run, lead.Scoring) })
	}}
	if !s.cache.has(key, stamp) {
		st.Notice = fmt.Sprintf("Computing the report of %d cases × %d targets × %d epochs…", run.Cases, len(run.Targets), max(run.Epochs, 1))
	}
	s.streamSteps(w, r, "report", p, st)
}

// runStamp is what a cached value computed from a run depends on: its
// status, end, case count and latest scoring. A run still being written
// changes without those changing, so its stamp also turns every 30 s.
func (s *Server) runStamp(run *record.Run, latest int) string {
	st := fmt.Sprintf("%s|%s|%d|%d", run.Status, run.Ended.UTC().Format(time.RFC3339Nano), run.Cases, latest)
	if run.Status == record.StatusRunning {
		st += "|" + s.o.Now().Truncate(30*time.Second).Format(time.RFC3339)
	}
	return st
}

// renderReport computes a run's analysis the way `assay report` does (the
// spec's volume prices the month; every other option its default) and
// renders its HTML body.
func (s *Server) renderReport(ctx context.Context, run *record.Run, scoring int) (runReport, error) {
	pending, err := s.o.Store.ScoringPending(ctx, run.ID, scoring)
	if err != nil {
		return runReport{}, err
	}
	if pending {
		return runReport{}, fmt.Errorf("scoring %d of run %s is incomplete (its rescore is running or was stopped)", scoring, run.ID)
	}
	var volume float64
	if sp, err := runSpec(run); err == nil {
		volume = sp.Volume.RequestsPerMonth
	}
	rep, err := analysis.Analyze(ctx, s.o.Store, run, analysis.Options{Scoring: scoring, RequestsPerMonth: volume})
	if err != nil {
		return runReport{}, err
	}
	var b bytes.Buffer
	if err := report.HTMLBody(&b, rep); err != nil {
		return runReport{}, err
	}
	// report.HTMLBody is html/template output: every value in it escaped.
	return runReport{HTML: template.HTML(b.String())}, nil
}

// reportStyle serves the report's stylesheet, which the report's own page
// carries inline (this server's CSP allows no inline style).
func (s *Server) reportStyle(w http.ResponseWriter, r *http.Request) {
	css, err := report.HTMLStyle()
	if err != nil {
		s.fail(w, r, err)
		return
	}
	w.Header().Set("Content-Type", "text/css; charset=utf-8")
	_, _ = w.Write([]byte(css))
}
