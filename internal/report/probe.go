package report

import (
	"fmt"
	"io"
	"math"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode"

	"github.com/assay-eval/assay/internal/probe"
	"github.com/assay-eval/assay/internal/units"
)

// Renderers for `assay probe contamination`: a probe.Report as text (JSON
// is the report itself).

// ProbeText writes a contamination probe for people. Case IDs and the
// rewriter's replies are data: they are shown Go-quoted.
func ProbeText(w io.Writer, r *probe.Report) error {
	b := &strings.Builder{}
	fmt.Fprintf(b, "contamination probe of %s: %d cases paired with a twin\n", strconv.Quote(r.Spec), r.Cases.Paired)
	fmt.Fprintf(b, "twin set %s (%s; %d twins stored before, %d added)\n", r.TwinSet.ID, r.TwinSet.Source, r.TwinSet.Stored, r.TwinSet.Added)
	if r.TwinSet.RewritePromptHash != "" {
		fmt.Fprintf(b, "  rewritten fields: %s; rewrite prompt %s\n", strings.Join(r.TwinSet.Fields, ", "), probe.ShortID(r.TwinSet.RewritePromptHash))
	}
	fmt.Fprintf(b, "runs: originals %s, twins %s (assay report RUN shows either)\n\n", r.Runs.Original, r.Runs.Twins)

	tw := tabwriter.NewWriter(b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "target\toriginal\ttwin\tdrop [%s CI]\tp (Holm)\tverdict\n", units.PctWhole(r.Method.CILevel))
	for _, f := range r.Targets {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\n", f.Target, probeRate(f.Original), probeRate(f.Twin), probeDrop(f), probeP(f.PAdjusted), f.Verdict)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	across := "the target probed"
	if r.Method.Family != 1 {
		across = fmt.Sprintf("the %d targets probed", r.Method.Family)
	}
	fmt.Fprintf(b, "\ndrop = original rate − twin rate, in points, on the cases scored on both.\n"+
		"contaminated?: the drop exceeds %s points, the %s interval's lower end (a one-sided\n"+
		"%s bound) is above 0, and the one-sided exact McNemar p-value, Holm-adjusted across\n"+
		"%s, is below %s. inconclusive: a drop above %s points that fails either test.\n"+
		"A flag says the target does worse on new wording of the same questions: memorised\n"+
		"test data is one cause, twins harder than their originals another.\n",
		units.Plain(100*r.Method.MinDrop), units.PctWhole(r.Method.CILevel), units.PctWhole(1-r.Method.Alpha),
		across, units.Plain(r.Method.Alpha), units.Plain(100*r.Method.MinDrop))
	if len(r.Cases.NoTwinIDs) > 0 {
		fmt.Fprintf(b, "\ncases without a twin: %s", probeQuoted(r.Cases.NoTwinIDs))
		if more := r.Cases.NoTwin - len(r.Cases.NoTwinIDs); more > 0 {
			fmt.Fprintf(b, " … and %d more", more)
		}
		b.WriteString("\n")
	}
	if len(r.Cases.RewriteFailures) > 0 {
		b.WriteString("\nrewrites left out:\n")
		for _, f := range r.Cases.RewriteFailures {
			fmt.Fprintf(b, "  %s: %s: %s\n", strconv.Quote(f.CaseID), f.Kind, probeOneLine(f.Reason))
		}
		if more := r.Cases.RewriteFailed - len(r.Cases.RewriteFailures); more > 0 {
			fmt.Fprintf(b, "  … and %d more\n", more)
		}
	}
	if len(r.Warnings) > 0 {
		b.WriteString("\nwarnings:\n")
		for _, w := range r.Warnings {
			fmt.Fprintf(b, "  - %s\n", w)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func probeRate(r probe.Rate) string {
	if r.N == 0 {
		return "–"
	}
	return fmt.Sprintf("%d/%d %s", r.Passed, r.N, units.Pct(float64(r.Rate)))
}

func probeDrop(f probe.Finding) string {
	if f.N == 0 || math.IsNaN(float64(f.Drop)) {
		return "–"
	}
	return units.SignedPts(float64(f.Drop)) + " [" + units.SignedPts(float64(f.CI[0])) + ", " + units.SignedPts(float64(f.CI[1])) + "]"
}

func probeP(p probe.Num) string {
	x := float64(p)
	switch {
	case math.IsNaN(x):
		return "–"
	}
	return units.PValue(x)
}

func probeQuoted(ids []string) string {
	q := make([]string, len(ids))
	for i, id := range ids {
		q[i] = strconv.Quote(id)
	}
	return strings.Join(q, ", ")
}

// oneLine keeps a reason on one line and printable: reasons quote replies
// already, but a provider's error text may hold line breaks or control
// characters from the server.
func probeOneLine(s string) string {
	s = strings.Map(func(r rune) rune {
		if !unicode.IsPrint(r) {
			return ' '
		}
		return r
	}, s)
	return strings.Join(strings.Fields(s), " ")
}
