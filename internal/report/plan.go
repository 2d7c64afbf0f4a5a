package report

import (
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/assay-eval/assay/internal/plan"
	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/units"
)

// Renderers for `assay plan`: each of its four results (plan.Paired,
// plan.Rates, plan.Run, plan.Gate) as text; JSON is the result itself.
// Numbers are the units package's plan forms (units.Num, Points,
// PctShort; the user's own values by GivenPct and GivenPoints).

// PlanText writes any plan result as text.
func PlanText(w io.Writer, r plan.Result) error {
	switch d := r.(type) {
	case *plan.Paired:
		return PlanPairedText(w, d)
	case *plan.Rates:
		return PlanRatesText(w, d)
	case *plan.Run:
		return PlanRunText(w, d)
	case *plan.Gate:
		return PlanGateText(w, d)
	}
	return fmt.Errorf("report: no text form for a plan of type %T", r)
}

// PlanPairedText writes a paired design's plan.
func PlanPairedText(w io.Writer, d *plan.Paired) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Paired design: both targets on the same cases, the McNemar score test the report uses (power by Connor 1987), two-sided alpha %s, power %s\n", units.Plain(d.Alpha), units.GivenPct(d.Power))
	b.WriteString("  (for one pair; a report of k targets splits alpha over k(k-1)/2 pairs: plan with --alpha alpha/pairs)\n")
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  discordant cases\t%s\n", units.GivenPct(d.PDisc))
	if d.Delta != nil {
		fmt.Fprintf(tw, "  difference to detect\t%s\n", units.GivenPoints(*d.Delta))
		fmt.Fprintf(tw, "  cases needed\t%d", *d.CasesNeeded)
		if d.AchievedPower != nil {
			fmt.Fprintf(tw, " (power at that size %s)", units.PctShort(*d.AchievedPower))
		}
		fmt.Fprintln(tw)
	}
	if d.Cases != nil {
		fmt.Fprintf(tw, "  minimum detectable difference of %d cases\t%s\n", *d.Cases, units.Points(*d.MDD))
		if d.PowerAtCases != nil {
			fmt.Fprintf(tw, "  power of %d cases to detect %s\t%s\n", *d.Cases, units.GivenPoints(*d.Delta), units.PctShort(*d.PowerAtCases))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// PlanRatesText writes the plan of two independent samples.
func PlanRatesText(w io.Writer, d *plan.Rates) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Two independent samples (Cohen's h), two-sided alpha %s, power %s\n", units.Plain(d.Alpha), units.GivenPct(d.Power))
	tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "  pass rates\t%s vs %s (difference %s)\n", units.GivenPct(d.P1), units.GivenPct(d.P2), units.GivenPoints(d.Delta))
	fmt.Fprintf(tw, "  cases needed\t%d per target\n", d.CasesPerTarget)
	if d.PairedCasesIfIndependent != nil {
		fmt.Fprintf(tw, "  paired, if outcomes were independent\t%d cases (%s discordant)\n", *d.PairedCasesIfIndependent, units.PctShort(d.PDiscIfIndependent))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	b.WriteString("\n" + wrapWords(d.Note, 78, "") + "\n")
	_, err := io.WriteString(w, b.String())
	return err
}

// PlanRunText writes the plan of a run's pairs (and, when d.BySlice, of
// their slices).
func PlanRunText(w io.Writer, d *plan.Run) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Run %s (scoring %d): McNemar score test, two-sided alpha %s", d.RunID, d.Scoring, units.Plain(d.Alpha))
	if d.AlphaPerPair > 0 && d.AlphaPerPair != d.Alpha {
		fmt.Fprintf(&b, " split over %d pairs (%s each)", plan.PairsOf(d), units.Plain(units.RoundSig(d.AlphaPerPair)))
	}
	fmt.Fprintf(&b, ", power %s", units.GivenPct(d.Power))
	if d.Delta != nil {
		fmt.Fprintf(&b, ", difference to detect %s", units.GivenPoints(*d.Delta))
	}
	b.WriteString("\n")
	header := func(first string) string {
		h := first + "\tN\tDISCORDANT\tOBSERVED\tMDD\tCASES FOR OBSERVED"
		if d.Delta != nil {
			h += "\tCASES FOR " + strings.ToUpper(units.GivenPoints(*d.Delta))
		}
		return h + "\tVERDICT\t\n"
	}
	row := func(name, verdict string, e plan.Estimate) string {
		cells := []string{name, fmt.Sprint(e.N)}
		if e.PDisc == nil { // epochs: not planned, see the notes
			cells = append(cells, "-", "-", "-", "-")
		} else {
			cells = append(cells, fmt.Sprintf("%d (%s)", e.AOnly+e.BOnly, units.PctShort(*e.PDisc)),
				units.SignedPoints(*e.ObservedDelta), planOptPoints(e.MDD), planOptInt(e.CasesForObservedDelta))
		}
		if d.Delta != nil {
			cells = append(cells, planOptInt(e.CasesForDelta))
		}
		flag := ""
		if e.TooSmall {
			// No verdict beside it: "too few cases" is why there is none.
			verdict, flag = "-", "too few cases"
		}
		cells = append(cells, verdict, flag)
		return strings.Join(cells, "\t") + "\n"
	}
	if len(d.Pairs) > 0 {
		b.WriteString("\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		io.WriteString(tw, header("PAIR"))
		for _, p := range d.Pairs {
			io.WriteString(tw, row(p.A+" vs "+p.B, p.Verdict, p.Estimate))
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if d.BySlice {
		for _, p := range d.Pairs {
			fmt.Fprintf(&b, "\n%s vs %s by slice:\n", p.A, p.B)
			if len(p.Slices) == 0 {
				b.WriteString("  (no tagged cases)\n")
				continue
			}
			tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
			io.WriteString(tw, header("SLICE"))
			for _, s := range p.Slices {
				io.WriteString(tw, row(s.Key+"="+s.Value, s.Verdict, s.Estimate))
			}
			if err := tw.Flush(); err != nil {
				return err
			}
		}
	}
	var notes []string
	for _, p := range d.Pairs {
		for _, n := range p.Notes {
			notes = append(notes, p.A+" vs "+p.B+": "+n)
		}
	}
	notes = append(notes, d.Notes...)
	if len(d.Pairs) > 0 {
		legend := "OBSERVED is the first target's pass rate minus the second's, in points. " +
			"MDD is the smallest difference these cases detect with this power at their discordance (none: not even a difference as large as the discordance). " +
			"CASES FOR ... are the paired cases needed at the observed discordance (-: no difference observed, or the difference exceeds the discordance, so it cannot occur). " +
			fmt.Sprintf("\"too few cases\" (in place of a verdict): the report found no difference, and the observed one is below the MDD, or fewer than %d cases are discordant, too few for the McNemar score test at alpha %s.", plan.MinDiscordant(stats.TestMcNemarScore, d.AlphaPerPair), units.Plain(units.RoundSig(d.AlphaPerPair)))
		if d.BySlice {
			legend += " Each slice's reasons are in --json."
		}
		b.WriteString("\n" + wrapWords(legend, 78, "") + "\n")
	}
	return writePlanText(w, &b, notes)
}

// PlanGateText writes the gate's power on a run.
func PlanGateText(w io.Writer, d *plan.Gate) error {
	var b strings.Builder
	fmt.Fprintf(&b, "Gate power on run %s: %d checks share the false-fail rate %s (Holm): a check that fails alone is tested one-sided at %s\n",
		d.RunID, d.Checks, units.PctShort(d.Alpha), units.Plain(units.RoundSig(d.AlphaPerCheck)))
	if len(d.Rules) > 0 {
		b.WriteString("\n")
		tw := tabwriter.NewWriter(&b, 0, 0, 2, ' ', 0)
		io.WriteString(tw, "TARGET\tRULE\tN\tLIMIT\tWORSENING\tDISCORDANT\tPOWER\n")
		for _, r := range d.Rules {
			disc, power := "-", "-"
			if r.PDisc > 0 {
				disc = units.PctShort(r.PDisc)
				if r.PDiscAssumed {
					disc += " (assumed)"
				}
			}
			if r.Power != nil {
				power = units.PctShort(*r.Power)
			}
			fmt.Fprintf(tw, "%s\t%s\t%d\t%s\t%s\t%s\t%s\n", r.Target, r.Rule, r.N, units.Num(100*r.Limit)+" pts", units.Num(100*r.Worsening)+" pts", disc, power)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
		b.WriteString("\n" + wrapWords("POWER is the chance that the gate fails a candidate whose rate is truly worse by WORSENING (twice the LIMIT) on N cases like these, "+
			"when DISCORDANT of cases change verdict: the one-sided McNemar score (Tango) test at the limit, at the level a check that fails alone faces. "+
			"Below 80%, a real regression of that size passes the gate often: add cases, or accept a wider limit.", 78, "") + "\n")
	}
	var notes []string
	for _, r := range d.Rules {
		for _, n := range r.Notes {
			notes = append(notes, r.Target+" "+r.Rule+": "+n)
		}
	}
	notes = append(notes, d.Notes...)
	return writePlanText(w, &b, notes)
}

// writePlanText writes a plan's text with its notes after it, without the
// trailing blanks tables pad their last column with (they help no reader).
func writePlanText(w io.Writer, b *strings.Builder, notes []string) error {
	if len(notes) > 0 {
		b.WriteString("\nNotes:\n")
		for _, n := range notes {
			b.WriteString(wrapWords("- "+n, 78, "  ") + "\n")
		}
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	_, err := io.WriteString(w, strings.Join(lines, "\n"))
	return err
}

func planOptPoints(x *float64) string {
	if x == nil {
		return "none"
	}
	return units.Num(100 * *x)
}

func planOptInt(x *int) string {
	if x == nil {
		return "-"
	}
	return strconv.Itoa(*x)
}

// wrapWords breaks s at spaces into lines of at most width runes;
// continuation lines start with indent.
func wrapWords(s string, width int, indent string) string {
	var b strings.Builder
	line := 0
	for i, word := range strings.Fields(s) {
		wl := len([]rune(word))
		if i > 0 {
			if line+1+wl > width {
				b.WriteString("\n" + indent)
				line = len(indent)
			} else {
				b.WriteByte(' ')
				line++
			}
		}
		b.WriteString(word)
		line += wl
	}
	return b.String()
}
