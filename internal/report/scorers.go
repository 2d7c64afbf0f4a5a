package report

import (
	"fmt"
	"io"
	"sort"
	"strings"
	"text/tabwriter"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/units"
)

// The per-scorer, per-field and judge sections every format shows. Rows
// are built here once, unescaped; each format escapes every name (a
// target's, a scorer's, a field's) as it writes it.

// scorerRow is one scorer's rate on one target, with its judge health.
type scorerRow struct {
	target, scorer string
	primary        bool
	rate           analysis.Rate
	judge          *analysis.JudgeStats
}

// scorerOrder is a target's scorers: the primary first, then by name.
func scorerOrder(t analysis.Target) []string {
	names := make([]string, 0, len(t.Scorers))
	for s := range t.Scorers {
		if s != t.Primary.Scorer {
			names = append(names, s)
		}
	}
	sort.Strings(names)
	if _, ok := t.Scorers[t.Primary.Scorer]; ok && t.Primary.Scorer != "" {
		names = append([]string{t.Primary.Scorer}, names...)
	}
	return names
}

// scorerRows are every target's scorers, target by target; nil when no
// target has more than the primary scorer and none has a judge.
func scorerRows(rep *analysis.Report) []scorerRow {
	var rows []scorerRow
	worth := false
	for _, t := range rep.Targets {
		judges := map[string]*analysis.JudgeStats{}
		for i := range t.Judges {
			judges[t.Judges[i].Scorer] = &t.Judges[i]
		}
		if len(t.Scorers) > 1 || len(t.Judges) > 0 {
			worth = true
		}
		for _, s := range scorerOrder(t) {
			r := t.Scorers[s]
			if s == t.Primary.Scorer {
				r = t.Primary
			}
			rows = append(rows, scorerRow{target: t.Name, scorer: s, primary: s == t.Primary.Scorer, rate: r, judge: judges[s]})
		}
	}
	if !worth {
		return nil
	}
	return rows
}

// intervalWord names how a rate's interval was made.
func intervalWord(method string) string {
	switch method {
	case "", stats.MethodWilson:
		return "Wilson"
	case stats.MethodClopperPearson:
		return "Clopper–Pearson"
	case stats.MethodJeffreys:
		return "Jeffreys"
	case "cr1_t":
		return "cluster-robust (CR1, t on G−1 df)"
	case stats.EpochRateMethod:
		return "Wilson (on the epochs' effective n)"
	case "epoch_mean_se":
		return "epochs averaged per case, normal interval"
	case "clustered_se":
		return "clustered by the cluster tag, normal interval"
	}
	return strings.ReplaceAll(method, "_", " ")
}

// rateWord names the intervals of the report's slice rates (Wilson, unless
// --ci chose another, or several epochs or clustered cases made them as
// the targets' are): every method they use, joined with "or" (a slice
// that holds a single cluster keeps the passed/n interval).
func rateWord(rep *analysis.Report) string { return sliceRateWord(rep, "") }

// sliceRateWord is rateWord over the slices of one tag key ("" for all).
func sliceRateWord(rep *analysis.Report, key string) string {
	seen := map[string]bool{}
	var words []string
	add := func(method string) {
		if w := intervalWord(method); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	for _, t := range rep.Targets {
		for k, byValue := range t.Slices {
			if key != "" && k != key {
				continue
			}
			for _, r := range byValue {
				add(r.CIMethod)
			}
		}
	}
	if len(words) == 0 {
		for _, t := range rep.Targets {
			for _, r := range t.Scorers {
				if r.CIMethod == stats.MethodClopperPearson || r.CIMethod == stats.MethodJeffreys {
					add(r.CIMethod)
				}
			}
		}
	}
	if len(words) == 0 {
		return "Wilson"
	}
	sort.Strings(words)
	return strings.Join(words, " or ")
}

// judgeErrText is a judge scorer's errors, as loud as they deserve: ""
// with none.
func judgeErrText(j *analysis.JudgeStats) string {
	if j == nil || j.Errors == 0 {
		return ""
	}
	s := fmt.Sprintf("judge errors: %s of %s (%s)", units.Count(j.Errors), units.Count(j.N), units.Pct(j.ErrorRate))
	if j.NotEvidence() {
		s += " — this scorer's rate is not evidence"
	}
	return s
}

// fieldScorers are the field scorers any target has per-field rates for,
// sorted, each with its fields in the scorer's order.
func fieldScorers(rep *analysis.Report) (scorers []string, fields map[string][]string) {
	fields = map[string][]string{}
	for _, t := range rep.Targets {
		for s, frs := range t.Fields {
			if _, ok := fields[s]; !ok {
				scorers = append(scorers, s)
			}
			for _, f := range frs {
				if !containsString(fields[s], f.Field) {
					fields[s] = append(fields[s], f.Field)
				}
			}
		}
	}
	sort.Strings(scorers)
	return scorers, fields
}

func containsString(xs []string, x string) bool {
	for _, y := range xs {
		if y == x {
			return true
		}
	}
	return false
}

// fieldRate is a target's rate on one field of a field scorer.
func fieldRate(t analysis.Target, scorer, field string) (analysis.FieldRate, bool) {
	for _, f := range t.Fields[scorer] {
		if f.Field == field {
			return f, true
		}
	}
	return analysis.FieldRate{}, false
}

// fieldCounts says how a field's failures split: "2 wrong, 1 missing,
// 1 unscored" ("" when it has none).
func fieldCounts(f analysis.FieldRate) string {
	var parts []string
	for _, c := range []struct {
		n    int
		word string
	}{{f.Wrong, "wrong"}, {f.Missing, "missing"}, {f.Unscored, "unscored"}} {
		if c.n > 0 {
			parts = append(parts, units.Count(c.n)+" "+c.word)
		}
	}
	return strings.Join(parts, ", ")
}

// fieldNote explains the field tables in every format.
const fieldNote = "Per field: outputs whose field equals the expected value (ok) out of every output the field applies to (tool_call: the results whose case expects that argument), with a 95% interval made as the target's rates are. " +
	"Wrong: present and different; missing: absent from the output; unscored: the output could not be compared field by field (unparseable, a failed call), counted as not ok."

// failuresHint says how many failures a report lists of how many, and how
// to list them all; "" when it lists them all.
func failuresHint(rep *analysis.Report) string {
	if failureCount(rep) <= len(rep.Worst) {
		return ""
	}
	return fmt.Sprintf("%s of %s failures shown; assay report %s --failures all lists every one",
		units.Count(len(rep.Worst)), units.Count(failureCount(rep)), rep.Run.ID)
}

// failureCount is how many failures the run has (at least those listed).
func failureCount(rep *analysis.Report) int { return max(rep.FailureCount, len(rep.Worst)) }

// rescoredLine says which scoring a report reads when the run was rescored,
// and the scorers hash it was made with; "" for the run's own scoring.
func rescoredLine(r analysis.RunInfo) string {
	if r.Scoring <= 1 {
		return ""
	}
	h := r.ScoringScorersHash
	if h == "" {
		h = "not recorded"
	}
	return fmt.Sprintf("scoring %d (rescored; the run's own is 1), scorers hash %s", r.Scoring, h)
}

// textScorers writes every scorer's rate per target and the judges'
// errors and cost.
func textScorers(w io.Writer, rep *analysis.Report) error {
	rows := scorerRows(rep)
	if len(rows) == 0 {
		return nil
	}
	methods, judges := scorerColumns(rows)
	head := "target\tscorer\tpassed/n\trate\t95% CI"
	if methods {
		fmt.Fprintln(w, "\nscorers (passed/n, 95% CI; * primary)")
		head += "\tinterval"
	} else {
		fmt.Fprintf(w, "\nscorers (passed/n, %s 95%% CI; * primary)\n", rateWord(rep))
	}
	if judges {
		head += "\tjudge cost $\tjudge errors"
	}
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, head)
	for _, r := range rows {
		name := term(r.scorer)
		if r.primary {
			name += " *"
		}
		rate, ci := units.Missing, units.Missing
		if r.rate.N > 0 {
			rate, ci = units.Pct(r.rate.Rate), units.PctCI(r.rate.CI)
		}
		cost, errs := "", ""
		if r.judge != nil {
			cost = units.USDCell(r.judge.CostUSD)
			errs = "0"
			if e := judgeErrText(r.judge); e != "" {
				errs = e
			}
		}
		fmt.Fprintf(tw, "%s\t%s\t%d/%d\t%s\t%s", term(r.target), name, r.rate.Passed, r.rate.N, rate, ci)
		if methods {
			fmt.Fprintf(tw, "\t%s", intervalWord(r.rate.CIMethod))
		}
		if judges {
			fmt.Fprintf(tw, "\t%s\t%s", cost, errs)
		}
		fmt.Fprintln(tw)
	}
	return tw.Flush()
}

// scorerColumns says whether any rate's interval is not Wilson (then each
// row names its method) and whether any scorer is a judge.
func scorerColumns(rows []scorerRow) (methods, judges bool) {
	for _, r := range rows {
		if intervalWord(r.rate.CIMethod) != "Wilson" {
			methods = true
		}
		if r.judge != nil {
			judges = true
		}
	}
	return methods, judges
}

// textFields writes one table per field scorer: a row per field, a column
// per target.
func textFields(w io.Writer, rep *analysis.Report) error {
	scorers, fields := fieldScorers(rep)
	for _, s := range scorers {
		fmt.Fprintf(w, "\nfields of %s (ok/n, 95%% CI)\n", term(s))
		tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprint(tw, "field\t")
		for _, t := range rep.Targets {
			fmt.Fprintf(tw, "%s\t", term(t.Name))
		}
		fmt.Fprintln(tw)
		for _, f := range fields[s] {
			fmt.Fprintf(tw, "%s\t", term(f))
			for _, t := range rep.Targets {
				fr, ok := fieldRate(t, s, f)
				if !ok || fr.N == 0 {
					fmt.Fprint(tw, "—\t")
					continue
				}
				fmt.Fprintf(tw, "%d/%d %s %s\t", fr.Passed, fr.N, units.Pct(fr.Rate.Rate), units.PctCI(fr.CI))
			}
			fmt.Fprintln(tw)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	if len(scorers) > 0 {
		fmt.Fprintln(w, fieldNote)
	}
	return nil
}

// textMaxOutput bounds the characters of a failure's output the text
// report shows (on one line).
const textMaxOutput = 160

// textWorst lists the failures the report carries, costliest first.
func textWorst(w io.Writer, rep *analysis.Report) {
	if len(rep.Worst) == 0 {
		return
	}
	fmt.Fprintf(w, "\nworst failures (%s of %s; costliest first, silent before loud)\n",
		units.Count(len(rep.Worst)), units.Count(failureCount(rep)))
	for _, f := range rep.Worst {
		head := []string{term(f.Target), "case " + term(f.CaseID)}
		if f.Epoch > 1 {
			head = append(head, fmt.Sprintf("epoch %d", f.Epoch))
		}
		head = append(head, term(f.Shape)+"/"+term(f.Kind))
		if f.ErrorCost > 0 {
			head = append(head, "error cost "+units.USD(f.ErrorCost))
		}
		fmt.Fprintf(w, "  %s\n", strings.Join(head, "  "))
		if f.Reason != "" {
			fmt.Fprintf(w, "    reason: %s\n", oneLine(cutRunes(f.Reason, textMaxOutput)))
		}
		if f.Expected != "" {
			fmt.Fprintf(w, "    expected: %s\n", oneLine(cutRunes(f.Expected, textMaxOutput)))
		}
		switch {
		case f.Raw != "":
			fmt.Fprintf(w, "    output: %s\n", oneLine(cutRunes(f.Raw, textMaxOutput)))
		case len(f.Calls) == 0:
			fmt.Fprintln(w, "    output: (empty)")
		}
		if len(f.Calls) > 0 {
			fmt.Fprintf(w, "    calls: %s\n", oneLine(cutRunes(callsLine(f.Calls), textMaxOutput)))
		}
	}
	if h := failuresHint(rep); h != "" {
		fmt.Fprintf(w, "  %s\n", term(h))
	}
}

// cutRunes cuts s to at most n runes, marking the cut with "…".
func cutRunes(s string, n int) string { return cutAt(s, n, "…") }

// cutAt cuts s to at most n runes, appending mark when it cut.
func cutAt(s string, n int, mark string) string {
	i := 0
	for j := range s {
		if i == n {
			return s[:j] + mark
		}
		i++
	}
	return s
}

// mdScorers writes every scorer's rate per target, with the judges' errors
// (bold) and cost.
func mdScorers(b *strings.Builder, rep *analysis.Report) {
	rows := scorerRows(rep)
	if len(rows) == 0 {
		return
	}
	methods, judges := scorerColumns(rows)
	b.WriteString("\n### Scorers\n\n| target | scorer | pass rate [95% CI] | passed / n |")
	align := "|:--|:--|--:|--:|"
	if methods {
		b.WriteString(" interval |")
		align += ":--|"
	}
	if judges {
		b.WriteString(" judge cost | judge errors |")
		align += "--:|:--|"
	}
	b.WriteString("\n" + align + "\n")
	for _, r := range rows {
		name := mdText(r.scorer)
		if r.primary {
			name += " (primary)"
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s / %s |", mdText(r.target), name, rateCI(r.rate), units.Count(r.rate.Passed), units.Count(r.rate.N))
		if methods {
			b.WriteString(" " + intervalWord(r.rate.CIMethod) + " |")
		}
		if judges {
			cost, errs := "", ""
			if r.judge != nil {
				cost, errs = units.USD(r.judge.CostUSD), "0"
				if e := judgeErrText(r.judge); e != "" {
					errs = "**" + mdText(e) + "**"
				}
			}
			b.WriteString(" " + cost + " | " + errs + " |")
		}
		b.WriteString("\n")
	}
	if !methods {
		b.WriteString("\nEvery scorer's rate is passed/n with a " + rateWord(rep) + " 95% interval.\n")
	}
}

// mdFields writes one table per field scorer: a row per field, a column
// per target.
func mdFields(b *strings.Builder, rep *analysis.Report) {
	scorers, fields := fieldScorers(rep)
	for _, s := range scorers {
		fmt.Fprintf(b, "\n### Fields: %s\n\n| field |", mdText(s))
		align := "|:--|"
		for _, t := range rep.Targets {
			b.WriteString(" " + mdText(t.Name) + " |")
			align += "--:|"
		}
		b.WriteString("\n" + align + "\n")
		for _, f := range fields[s] {
			b.WriteString("| " + mdText(f) + " |")
			for _, t := range rep.Targets {
				fr, ok := fieldRate(t, s, f)
				if !ok || fr.N == 0 {
					b.WriteString(" — |")
					continue
				}
				cell := rateCI(fr.Rate) + " (" + units.Count(fr.Passed) + "/" + units.Count(fr.N) + ")"
				if c := fieldCounts(fr); c != "" {
					cell += " · " + c
				}
				b.WriteString(" " + cell + " |")
			}
			b.WriteString("\n")
		}
	}
	if len(scorers) > 0 {
		b.WriteString("\n" + fieldNote + "\n")
	}
}

// htmlScorer is one row of the HTML scorers table, formatted.
type htmlScorer struct {
	Target, Scorer, Rate, CI, Passed, Method, Cost, Errors string
	Primary, JudgeErrors                                   bool
}

// htmlFieldTable is one field scorer's table: a row per field.
type htmlFieldTable struct {
	Scorer  string
	Targets []string
	Rows    []htmlSliceRow
}

// htmlScorersAndFields fills the page's scorer and field sections.
func htmlScorersAndFields(p *htmlPage, rep *analysis.Report) {
	rows := scorerRows(rep)
	p.ScorerMethods, p.ScorerJudges = scorerColumns(rows)
	for _, r := range rows {
		h := htmlScorer{Target: visible(r.target, false), Scorer: visible(r.scorer, false), Rate: "—", Primary: r.primary,
			Passed: units.Count(r.rate.Passed) + "/" + units.Count(r.rate.N), Method: intervalWord(r.rate.CIMethod)}
		if r.rate.N > 0 {
			h.Rate, h.CI = units.Pct(r.rate.Rate), units.PctCI(r.rate.CI)
		}
		if r.judge != nil {
			h.Cost, h.Errors = units.USD(r.judge.CostUSD), "0"
			if e := judgeErrText(r.judge); e != "" {
				h.Errors = e
			}
			h.JudgeErrors = r.judge.Errors > 0
		}
		p.Scorers = append(p.Scorers, h)
	}
	scorers, fields := fieldScorers(rep)
	for _, s := range scorers {
		ft := htmlFieldTable{Scorer: visible(s, false), Targets: targetNames(rep)}
		for _, f := range fields[s] {
			row := htmlSliceRow{Value: visible(f, false)}
			for _, t := range rep.Targets {
				fr, ok := fieldRate(t, s, f)
				if !ok || fr.N == 0 {
					row.Cells = append(row.Cells, htmlCell{Text: "—"})
					continue
				}
				sub := units.PctCI(fr.CI) + " · " + units.Count(fr.Passed) + "/" + units.Count(fr.N)
				if c := fieldCounts(fr); c != "" {
					sub += " · " + c
				}
				row.Cells = append(row.Cells, htmlCell{Text: units.Pct(fr.Rate.Rate), Sub: sub})
			}
			ft.Rows = append(ft.Rows, row)
		}
		p.Fields = append(p.Fields, ft)
	}
	p.FieldNote = fieldNote
}
