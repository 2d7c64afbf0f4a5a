package serve

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
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
	run, ok := s.pathRun(w, r)
	if !ok {
		return
	}
	p := calibratePage{Run: run, Judge: r.URL.Query().Get("judge"), Queue: r.URL.Query().Get("queue")}
	scoring, err := s.o.Store.LatestScoring(ctx, run.ID)
	if err != nil {
		s.fail(w, r, err)
		return
	}
	p.Scorers = runScorers(run)
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
	if !slices.Contains(p.Scorers, p.Judge) && !s.scoredBy(ctx, run.ID, scoring, p.Judge) {
		p.Error = "the run has no scorer " + p.Judge + " in its latest scoring: pick one of its scorers"
		s.renderCode(w, r, http.StatusNotFound, "calibrate", page{Title: "calibrate · " + run.ID, Nav: "labels", Body: p})
		return
	}
	var ls []record.Label
	stamp := sha256.New()
	if err := s.o.Store.Labels(ctx, run.ID, func(l record.Label) error {
		if p.Queue == "" || l.Queue == p.Queue {
			ls = append(ls, l)
			fmt.Fprintf(stamp, "%q %q %d %q %q %q %q %q %d\n", l.CaseID, l.Target, l.Epoch, l.Queue, l.Labeler, l.Verdict, l.Reason, l.OutputHash, l.Created.UnixNano())
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
	// On a big run the judge's verdicts take seconds to read: the page's
	// head and pickers go first, the report follows, kept per run, judge,
	// queue and labels (a new label, an undo or a rescore computes anew).
	key := "calibrate\x00" + run.ID + "\x00" + p.Judge + "\x00" + p.Queue
	version := s.runStamp(run, scoring) + "|" + hex.EncodeToString(stamp.Sum(nil))
	st := step{Block: "content", Compute: func() (any, error) {
		return s.cache.get(key, version, func() (any, error) {
			return s.calibrationReport(context.WithoutCancel(ctx), run, p, ls, th)
		})
	}}
	if !s.cache.has(key, version) {
		st.Notice = fmt.Sprintf("Reading judge %s's verdicts on the run's %d cases × %d targets × %d epochs…", p.Judge, run.Cases, len(run.Targets), max(run.Epochs, 1))
	}
	s.streamSteps(w, r, "calibrate", page{Title: "calibrate · " + run.ID, Nav: "labels", Body: p}, st)
}

// calibrationReport is the page's report (or the reason there is none),
// computed as `assay calibrate` computes it: the labels weighed by their
// queues' selection probabilities.
func (s *Server) calibrationReport(ctx context.Context, run *record.Run, p calibratePage, ls []record.Label, th calibrate.Thresholds) (calibratePage, error) {
	queues, err := calibrate.ReadQueues(ctx, s.o.Store, run.ID, ls, record.ErrNotFound)
	if err != nil {
		return p, err
	}
	rep, err := calibrate.Calibrate(ctx, s.o.Store, run, p.Judge, ls, th, queues)
	if err != nil {
		p.Error = err.Error()
		return p, nil
	}
	var b bytes.Buffer
	if err := report.CalibrationHTML(&b, rep); err != nil {
		return p, err
	}
	// The fragment is the report package's escaped rendering, not data.
	p.Report = template.HTML(b.String())
	return p, nil
}

// runScorers are the scorers of a run's spec, read from its stored
// configuration, for a page to offer: listing them reads no score, where
// the store's ScorerNames reads every score of a scoring (half a second
// on a million results, before the page's first byte). Nil when the
// configuration does not say.
func runScorers(run *record.Run) []string {
	sp, err := runSpec(run)
	if err != nil {
		return nil
	}
	var out []string
	for _, sc := range sp.Scorers {
		name := sc.Name
		if name == "" {
			name = sc.Type
		}
		if name != "" && !slices.Contains(out, name) {
			out = append(out, name)
		}
	}
	return out
}

// scoredBy reports whether a scorer the spec does not name (a rescore's
// own) has scores in a scoring: the slow lookup, only for such a name.
func (s *Server) scoredBy(ctx context.Context, runID string, scoring int, scorer string) bool {
	if scoring == 0 || scorer == "" {
		return false
	}
	names, err := s.o.Store.ScorerNames(ctx, runID, scoring)
	return err == nil && slices.Contains(names, scorer)
}
