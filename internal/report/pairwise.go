package report

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/units"
)

// pairwiseNote says how to read the pairwise judges' rows, in every format.
const pairwiseNote = "A pairwise judge compares each output with its baseline target's, in both orders: a win is better in both, a loss worse in both, " +
	"anything else a tie (ties are neither, not failures). Win and loss rates are of the decided comparisons with Wilson 95% intervals; " +
	"net is (wins − losses)/n in points with Tango's paired score interval and the McNemar score test's p; judge errors are undecided and in no rate."

// pairwiseRow is one target × pairwise judge, formatted.
type pairwiseRow struct {
	Target, Scorer, Baseline      string
	Wins, Ties, Losses, Undecided string
	Win, Tie, Loss, Net, P        string
}

func pairwiseRows(rep *analysis.Report) []pairwiseRow {
	var out []pairwiseRow
	for _, t := range rep.Targets {
		for _, p := range t.Pairwise {
			r := pairwiseRow{Target: t.Name, Scorer: p.Scorer, Baseline: p.Baseline,
				Wins: units.Count(p.Wins), Ties: units.Count(p.Ties), Losses: units.Count(p.Losses), Undecided: units.Count(p.Undecided),
				Win: units.Missing, Tie: units.Missing, Loss: units.Missing, Net: units.Missing, P: units.Missing}
			if p.N > 0 {
				r.Win = units.Pct(p.WinRate) + " " + units.PctCI(p.WinCI)
				r.Tie = units.Pct(p.TieRate)
				r.Loss = units.Pct(p.LossRate) + " " + units.PctCI(p.LossCI)
				r.Net = units.Delta(p.Net) + " " + units.DeltaCI(p.NetCI)
				r.P = units.PValueCell(p.NetPValue)
			}
			out = append(out, r)
		}
	}
	return out
}

// pairwiseEpochNote says how epochs enter the intervals ("" with one).
func pairwiseEpochNote(rep *analysis.Report) string {
	if rep.Run.Epochs > 1 {
		return " With epochs, each case's epochs are averaged first (its repeats are not independent): the rates' intervals are over cases, the net lead's the paired t over cases."
	}
	return ""
}

// textPairwise writes the pairwise judges' wins, ties and losses.
func textPairwise(w io.Writer, rep *analysis.Report) error {
	rows := pairwiseRows(rep)
	if len(rows) == 0 {
		return nil
	}
	fmt.Fprintln(w, "\npairwise judges (against their baseline target):")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tjudge\tbaseline\twins\tties\tlosses\tundecided\twin rate [95% CI]\tloss rate [95% CI]\tnet pts [95% CI]\tp\t")
	for _, r := range rows {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t\n", term(r.Target), term(r.Scorer), term(r.Baseline),
			r.Wins, r.Ties, r.Losses, r.Undecided, r.Win, r.Loss, r.Net, r.P)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "  %s%s\n", pairwiseNote, pairwiseEpochNote(rep))
	return err
}

// mdPairwise writes the pairwise judges' wins, ties and losses.
func mdPairwise(b *strings.Builder, rep *analysis.Report) {
	rows := pairwiseRows(rep)
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n**Pairwise judges** (against their baseline target)\n\n")
	b.WriteString("| target | judge | baseline | wins / ties / losses | undecided | win rate [95% CI] | loss rate [95% CI] | net pts [95% CI] | p |\n")
	b.WriteString("|:--|:--|:--|--:|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s | %s | %s / %s / %s | %s | %s | %s | %s | %s |\n", mdText(r.Target), mdText(r.Scorer), mdText(r.Baseline),
			r.Wins, r.Ties, r.Losses, r.Undecided, r.Win, r.Loss, r.Net, r.P)
	}
	b.WriteString("\n" + pairwiseNote + pairwiseEpochNote(rep) + "\n")
}

// htmlPairwise is the HTML view of the pairwise judges (nil when none).
type htmlPairwise struct {
	Rows []pairwiseRow
	Note string
}

func newHTMLPairwise(rep *analysis.Report) *htmlPairwise {
	rows := pairwiseRows(rep)
	if len(rows) == 0 {
		return nil
	}
	return &htmlPairwise{Rows: rows, Note: pairwiseNote + pairwiseEpochNote(rep)}
}
