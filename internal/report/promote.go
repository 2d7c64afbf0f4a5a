package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/assay-eval/assay/internal/blind"
	"github.com/assay-eval/assay/internal/promote"
	"github.com/assay-eval/assay/internal/units"
)

// PromoteFormats are `assay promote`'s formats.
func PromoteFormats() []Format[*promote.Result] {
	return []Format[*promote.Result]{
		{Name: "text", Aliases: []string{""}, Render: PromoteText},
		JSONFormat[*promote.Result](),
	}
}

// BlindExportFormats are `assay export --blind`'s formats.
func BlindExportFormats() []Format[*blind.ExportResult] {
	return []Format[*blind.ExportResult]{
		{Name: "text", Aliases: []string{""}, Render: BlindExportText},
		JSONFormat[*blind.ExportResult](),
	}
}

// BlindImportFormats are `assay import`'s formats.
func BlindImportFormats() []Format[*blind.ImportResult] {
	return []Format[*blind.ImportResult]{
		{Name: "text", Aliases: []string{""}, Render: BlindImportText},
		JSONFormat[*blind.ImportResult](),
	}
}

// PromoteText says what promote added, what it skipped and why. Inputs
// and reasons come from production traffic: they are quoted.
func PromoteText(w io.Writer, r *promote.Result) error {
	p := &errWriter{w: w}
	verb := "added"
	if r.DryRun {
		verb = "would add (dry run, nothing written)"
	}
	p.printf("run %s (sample %s), verdict %s of scoring %d", r.Run, ShowData(r.Sample, 80), orNone(r.Scorer), r.Scoring)
	if r.Labels {
		p.printf(", with people's labels")
	}
	p.printf("\n%d failed, %d labeled fail: %d candidate trace(s), checked against %d case(s) (near-duplicate at token overlap ≥ %s)\n",
		r.Failed, r.LabeledFail, r.Candidates, r.Compared, units.Plain(r.Threshold))
	p.printf("%s %d case(s) to %s\n", verb, len(r.Added), ShowData(r.Dataset, 200))
	for _, a := range r.Added {
		at := ""
		if a.Line > 0 {
			at = fmt.Sprintf(" line %d", a.Line)
			if a.ID != "" {
				at += " id " + strconv.Quote(a.ID)
			}
		}
		p.printf("  + trace %s%s (%s): %s\n      reason: %s\n", ShowData(a.TraceID, 80), at, ShowData(a.Because, 80), strconv.Quote(a.Input), strconv.Quote(a.Reason))
	}
	if len(r.Skipped) > 0 {
		p.printf("skipped %d:\n", len(r.Skipped))
	}
	for _, s := range r.Skipped {
		what := ""
		switch {
		case s.Of != nil:
			what = fmt.Sprintf(" of case %s (line %d)", strconv.Quote(s.Of.ID), s.Of.Line)
		case s.OfTrace != "":
			what = " of trace " + ShowData(s.OfTrace, 80) + " (this batch)"
		}
		if s.Why == promote.SkipNear {
			what += fmt.Sprintf(", similarity %s", units.Plain(s.Similarity))
		}
		p.printf("  - trace %s: %s%s\n", ShowData(s.TraceID, 80), s.Why, what)
	}
	if r.Before != r.After {
		p.printf("the file's version: %s → %s\n", short12(r.Before), short12(r.After))
	}
	for _, w := range r.Warnings {
		p.printf("warning: %s\n", w)
	}
	return p.err
}

// BlindExportText says what was written and what to keep.
func BlindExportText(w io.Writer, r *blind.ExportResult) error {
	p := &errWriter{w: w}
	p.printf("wrote %d of %d case(s) of %s, shuffled (seed %d), to %s\n", r.Cases, r.Population, r.Spec, r.Seed, r.Sample)
	p.printf("send %s; keep the key %s (it maps the sample's IDs back to the cases; never send it)\n", r.Sample, r.Key)
	p.printf("then: assay import ANSWERS.jsonl --key %s --as VENDOR\n", r.Key)
	return p.err
}

// BlindImportText says which run holds the vendor's answers.
func BlindImportText(w io.Writer, r *blind.ImportResult) error {
	p := &errWriter{w: w}
	p.printf("%s\n", r.RunID)
	if r.Into {
		others := slices.DeleteFunc(slices.Clone(r.Targets), func(t string) bool { return t == r.Target })
		p.printf("%s: %d answer(s) of %s added as target %s beside %s, scored in scoring(s) %s\n",
			r.RunID, r.Cases, r.Responses, r.Target, strings.Join(others, ", "), joinInts(r.Scorings))
		if r.Cases < r.RunCases {
			p.printf("the answers cover %d of the run's %d cases: comparisons with %s pair those %d\n", r.Cases, r.RunCases, r.Target, r.Cases)
		}
		p.printf("report: assay report %s\n", r.RunID)
		return p.err
	}
	p.printf("%s: %d answer(s) of %s stored as target %s of %s and scored (%s)\n", r.RunID, r.Cases, r.Responses, r.Target, r.Spec, r.Status)
	p.printf("report: assay report %s\n", r.RunID)
	return p.err
}

func orNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

func short12(h string) string {
	if h == "" {
		return "(none)"
	}
	if len(h) > 19 {
		return h[:19]
	}
	return h
}

// errWriter keeps the first write error.
type errWriter struct {
	w   io.Writer
	err error
}

func (p *errWriter) printf(format string, args ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, args...)
	}
}

func joinInts(xs []int) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = strconv.Itoa(x)
	}
	return strings.Join(s, ", ")
}
