package report

import (
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/blind"
	"github.com/assay-eval/assay/internal/calibrate"
	"github.com/assay-eval/assay/internal/difficulty"
	"github.com/assay-eval/assay/internal/gate"
	"github.com/assay-eval/assay/internal/plan"
	"github.com/assay-eval/assay/internal/probe"
	"github.com/assay-eval/assay/internal/promote"
	"github.com/assay-eval/assay/internal/record"
	"github.com/assay-eval/assay/internal/sample"
	"github.com/assay-eval/assay/internal/selftest/findings"
	"github.com/assay-eval/assay/internal/traces"
	"github.com/assay-eval/assay/internal/trend"
)

// Registry is every document assay prints, each with the formats it
// renders in: the one place a command finds how to print its result (and
// completion and --help the --format values). NewRegistry builds it; there
// is no package-level registry.
type Registry struct {
	// Report is `assay report`: a run's analysis.
	Report *Document[RunReport]
	// Compare is `assay compare`: two runs before and after.
	Compare *Document[*analysis.RunComparison]
	// Diff and Drift are `assay diff` and `assay drift`.
	Diff  *Document[*analysis.RunDiff]
	Drift *Document[*analysis.DriftReport]
	// Gate is `assay gate`'s verdict.
	Gate *Document[*gate.Result]
	// Plan is `assay plan`'s answer (--json is its json format).
	Plan *Document[plan.Result]
	// Selftest and Probe are `assay selftest` and `assay probe
	// contamination`.
	Selftest *Document[*findings.Report]
	Probe    *Document[*probe.Report]
	// Validate is `assay validate` (with --deep, the dataset's health).
	Validate *Document[*Validation]
	// Calibrate is `assay calibrate`: a judge against people's labels.
	Calibrate *Document[*calibrate.Report]
	// Production traffic: `assay ingest`, `assay sample`, `assay
	// score-traces`, `assay trend`, `assay promote`, `assay export
	// --blind` and `assay import`. Each one's formats are listed by the
	// file that renders it.
	Ingest      *Document[*traces.IngestResult]
	Sample      *Document[*record.Sample]
	TraceScores *Document[*sample.ScoreReport]
	Trend       *Document[*trend.Report]
	Promote     *Document[*promote.Result]
	BlindExport *Document[*blind.ExportResult]
	BlindImport *Document[*blind.ImportResult]
	// Difficulty and Mismatch are `assay difficulty` and `assay mismatch`.
	Difficulty *Document[*difficulty.Fitted]
	Mismatch   *Document[*difficulty.Mismatch]
	// Load is `assay load`, and `assay report` of a load run.
	Load *Document[*LoadReport]
	// LoadGate is `assay gate` of two load runs.
	LoadGate *Document[*LoadGateReport]
}

// RunReport is what `assay report` renders: the analysis, and for the
// junit format every result row under the primary scorer
// (analysis.Rows); the other formats need no rows.
type RunReport struct {
	Report *analysis.Report
	Rows   []analysis.ResultRow
}

// NewRegistry registers every document's formats.
func NewRegistry() *Registry {
	return &Registry{
		Report: newDocument("report",
			Format[RunReport]{Name: "text", Aliases: []string{""}, Render: func(w io.Writer, r RunReport) error { return Text(w, r.Report) }},
			Format[RunReport]{Name: "json", Render: func(w io.Writer, r RunReport) error { return JSON(w, r.Report) }},
			Format[RunReport]{Name: "markdown", Aliases: []string{"md"}, Render: func(w io.Writer, r RunReport) error { return Markdown(w, r.Report) }},
			Format[RunReport]{Name: "html", Render: func(w io.Writer, r RunReport) error { return HTML(w, r.Report) }},
			Format[RunReport]{Name: "junit", Render: func(w io.Writer, r RunReport) error {
				if r.Rows == nil {
					// JUnit lists every result; the report alone does not carry them.
					return errors.New("the junit format needs the run's results: give RunReport.Rows (analysis.Rows)")
				}
				return JUnit(w, r.Report, r.Rows)
			}},
		),
		Compare: newDocument("compare",
			Format[*analysis.RunComparison]{Name: "text", Render: RunComparisonText},
			JSONFormat[*analysis.RunComparison](),
		),
		Diff: newDocument("diff",
			Format[*analysis.RunDiff]{Name: "text", Aliases: []string{""}, Render: RunDiffText},
			JSONFormat[*analysis.RunDiff](),
			Format[*analysis.RunDiff]{Name: "markdown", Aliases: []string{"md"}, Render: RunDiffMarkdown},
		),
		Drift: newDocument("drift",
			Format[*analysis.DriftReport]{Name: "text", Aliases: []string{""}, Render: DriftText},
			JSONFormat[*analysis.DriftReport](),
			Format[*analysis.DriftReport]{Name: "markdown", Aliases: []string{"md"}, Render: DriftMarkdown},
		),
		Gate: newDocument("gate",
			Format[*gate.Result]{Name: "text", Render: GateText},
			Format[*gate.Result]{Name: "markdown", Render: GateMarkdown},
			Format[*gate.Result]{Name: "json", Render: GateJSON},
			Format[*gate.Result]{Name: "junit", Render: GateJUnit},
		),
		Plan: newDocument("plan",
			Format[plan.Result]{Name: "text", Render: PlanText},
			JSONFormat[plan.Result](),
		),
		Selftest: newDocument("selftest",
			Format[*findings.Report]{Name: "text", Render: SelftestText},
			JSONFormat[*findings.Report](),
		),
		Probe: newDocument("probe",
			Format[*probe.Report]{Name: "text", Render: ProbeText},
			JSONFormat[*probe.Report](),
		),
		Validate: newDocument("validate",
			Format[*Validation]{Name: "text", Render: ValidationText},
			Format[*Validation]{Name: "json", Render: ValidationJSON},
		),
		Calibrate:   calibrateDocument(),
		Ingest:      newDocument("ingest", IngestFormats()...),
		Sample:      newDocument("sample", SampleFormats()...),
		TraceScores: newDocument("score-traces", TraceScoresFormats()...),
		Trend:       newDocument("trend", TrendFormats()...),
		Promote:     newDocument("promote", PromoteFormats()...),
		BlindExport: newDocument("export-blind", BlindExportFormats()...),
		BlindImport: newDocument("import", BlindImportFormats()...),
		Difficulty:  newDocument("difficulty", DifficultyFormats()...),
		Mismatch:    newDocument("mismatch", MismatchFormats()...),
		Load:        newDocument("load", LoadFormats()...),
		LoadGate:    newDocument("gate-load", LoadGateFormats()...),
	}
}

// names are the documents and their formats, by document name.
func (r *Registry) names() map[string][]string {
	return map[string][]string{
		r.Report.Name:      r.Report.Names(),
		r.Compare.Name:     r.Compare.Names(),
		r.Diff.Name:        r.Diff.Names(),
		r.Drift.Name:       r.Drift.Names(),
		r.Gate.Name:        r.Gate.Names(),
		r.Plan.Name:        r.Plan.Names(),
		r.Selftest.Name:    r.Selftest.Names(),
		r.Probe.Name:       r.Probe.Names(),
		r.Validate.Name:    r.Validate.Names(),
		r.Calibrate.Name:   r.Calibrate.Names(),
		r.Ingest.Name:      r.Ingest.Names(),
		r.Sample.Name:      r.Sample.Names(),
		r.TraceScores.Name: r.TraceScores.Names(),
		r.Trend.Name:       r.Trend.Names(),
		r.Promote.Name:     r.Promote.Names(),
		r.BlindExport.Name: r.BlindExport.Names(),
		r.BlindImport.Name: r.BlindImport.Names(),
		r.Difficulty.Name:  r.Difficulty.Names(),
		r.Mismatch.Name:    r.Mismatch.Names(),
		r.Load.Name:        r.Load.Names(),
		r.LoadGate.Name:    r.LoadGate.Names(),
	}
}

// Formats are the format names of the document named doc; an unknown
// document is an error naming the documents there are.
func (r *Registry) Formats(doc string) ([]string, error) {
	all := r.names()
	if fs, ok := all[doc]; ok {
		return fs, nil
	}
	docs := make([]string, 0, len(all))
	for d := range all {
		docs = append(docs, d)
	}
	sort.Strings(docs)
	return nil, fmt.Errorf("unknown document %q (documents are: %s)", doc, strings.Join(docs, ", "))
}
