package serve

import (
	"bytes"
	"html/template"
	"net/http"
	"slices"

	"github.com/assay-eval/assay/internal/calibrate"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/report"
)

// calibrateRoutes registers the calibration page.
func (s *Server) calibrateRoutes() {
	s.mux.HandleFunc("GET /runs/{id}/calibrate", s.calibration)
}

// calibratePage is a judge held up against the run's labels (all of them,
// or one queue's), with pickers for the judge and the queue.
type calibratePage struct {
	Run     *record.Run
	Judge   string
	Queue   string
	Scorers []string
	Queues  []string
	// Labels counts the labels the calibration read.
	Labels int
	// Report is report.CalibrationHTML's fragment: the report package
	// escapes everything in it that came from labels or the spec.
	Report template.HTML
	Error  string
}

// calibration renders ?judge=SCORER (&queue=NAME) as `assay calibrate`
// would, with the thresholds of the run's spec.
func (s *Server) calibration(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	run, err := s.o.Store.GetRun(ctx, r.PathValue("id"))
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p := calibratePage{Run: run, Judge: r.URL.Query().Get("judge"), Queue: r.URL.Query().Get("queue")}
	scoring, err := s.o.Store.LatestScoring(ctx, run.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	if scoring > 0 {
		if p.Scorers, err = s.o.Store.ScorerNames(ctx, run.ID, scoring); err != nil {
			s.fail(w, r, err)
			return
		}
	}
	qs, err := s.o.Store.Queues(ctx, run.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	for _, q := range qs {
		p.Queues = append(p.Queues, q.Name)
	}
	if p.Queue != "" && !slices.Contains(p.Queues, p.Queue) {
		s.fail(w, r, &httpError{code: http.StatusNotFound, msg: "run " + run.ID + " has no labeling queue " + p.Queue})
		return
	}
	if p.Judge == "" {
		// The judge of the queue asked for, else of the newest queue.
		for i := len(qs) - 1; i >= 0; i-- {
			if qs[i].Judge != "" && (p.Queue == "" || qs[i].Name == p.Queue) {
				p.Judge = qs[i].Judge
				break
			}
		}
	}
	if p.Judge == "" {
		s.renderPage(w, r, "calibrate", page{Title: "calibrate · " + run.ID, Nav: "labels", Body: p})
		return
	}
	if !slices.Contains(p.Scorers, p.Judge) {
		p.Error = "the run has no scorer " + p.Judge + " in its latest scoring: pick one of its scorers"
		s.renderCode(w, r, http.StatusNotFound, "calibrate", page{Title: "calibrate · " + run.ID, Nav: "labels", Body: p})
		return
	}
	var ls []record.Label
	if err := s.o.Store.Labels(ctx, run.ID, func(l record.Label) error {
		if p.Queue == "" || l.Queue == p.Queue {
			ls = append(ls, l)
		}
		return nil
	}); err != nil {
		s.fail(w, r, err)
		return
	}
	p.Labels = len(ls)
	th, err := calibrate.ThresholdsOf(run)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	queues, err := calibrate.ReadQueues(ctx, s.o.Store, run.ID, ls, record.ErrNotFound)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	rep, err := calibrate.Calibrate(ctx, s.o.Store, run, p.Judge, ls, th, queues)
	if err != nil {
		p.Error = err.Error()
		s.renderCode(w, r, http.StatusBadRequest, "calibrate", page{Title: "calibrate · " + run.ID, Nav: "labels", Body: p})
		return
	}
	var b bytes.Buffer
	if err := report.CalibrationHTML(&b, rep); err != nil {
		s.fail(w, r, err)
		return
	}
	// The fragment is the report package's escaped rendering, not data.
	p.Report = template.HTML(b.String())
	s.renderPage(w, r, "calibrate", page{Title: "calibrate · " + run.ID, Nav: "labels", Body: p})
}
