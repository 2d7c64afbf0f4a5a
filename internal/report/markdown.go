package report

import (
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/units"
)

// Markdown limits keep a report inside a pull-request comment (GitHub
// takes 65,536 characters).
const (
	mdMaxSliceValues = 40
	mdMaxOutput      = 1200 // characters of a failure's output shown
	mdMaxLine        = 400  // characters of a failure's reason or expected value shown
)

// Markdown writes the report for a pull-request comment (GitHub-flavoured
// Markdown): the headline table, the paired comparisons, one table per
// slice key, the warnings, and what was measured in a collapsed block.
// Every value that came from a spec, a dataset or a model passes through
// mdText (or a fenced block sized to its content) before it is written.
func Markdown(w io.Writer, rep *analysis.Report) error {
	b := &strings.Builder{}
	r := rep.Run
	title := r.Spec
	if title == "" {
		title = r.ID
	}
	fmt.Fprintf(b, "## assay report: %s\n\n", mdText(title))
	line := []string{"run " + mdText(r.ID), "status **" + mdText(r.Status) + "**",
		units.Count(r.Cases) + " cases × " + plural(r.Epochs, "epoch")}
	if s := primaryScorer(rep); s != "" {
		line = append(line, "primary scorer "+mdText(s))
	}
	if l := rescoredLine(r); l != "" {
		line = append(line, "**"+mdText(l)+"**")
	}
	b.WriteString(strings.Join(line, " · ") + "\n\n")

	if len(rep.Targets) > 0 {
		mdHeadline(b, rep)
	}
	mdFirstToken(b, rep)
	mdScorers(b, rep)
	mdFields(b, rep)
	mdCalls(b, rep)
	mdClasses(b, rep)
	mdPairwise(b, rep)
	mdNoise(b, rep)
	if notes := targetNotes(rep, mdText); len(notes) > 0 {
		b.WriteString("\n**Notes**\n\n")
		for _, n := range notes {
			b.WriteString("- " + n + "\n")
		}
	}
	if len(rep.Warnings) > 0 {
		b.WriteString("\n**Warnings**\n\n")
		for _, wn := range rep.Warnings {
			b.WriteString("- " + mdText(wn) + "\n")
		}
	}
	if len(rep.Comparisons) > 0 {
		mdComparisons(b, rep)
	}
	if rep.Ledger != nil {
		mdLedger(b, rep.Ledger)
	}
	if len(rep.Ranking) > 0 || len(rep.Pareto) > 0 {
		b.WriteString("\n")
		if len(rep.Ranking) > 0 {
			b.WriteString("**Ranking** (targets the paired comparisons cannot separate share a rank): " + mdRanking(rep.Ranking) + "\n\n")
		}
		if len(rep.Pareto) > 0 {
			b.WriteString("**Quality × cost × p95 latency frontier:** " + mdJoin(rep.Pareto) + "\n")
		}
	}
	mdSlices(b, rep)
	if len(rep.Worst) > 0 {
		mdWorst(b, rep)
	}
	mdMeasured(b, r)
	_, err := io.WriteString(w, b.String())
	return err
}

func mdHeadline(b *strings.Builder, rep *analysis.Report) {
	b.WriteString("| target | pass rate [95% CI] | passed / n | loud / silent failures | p95 latency | cost per case | per month |\n")
	b.WriteString("|:--|--:|--:|--:|--:|--:|--:|\n")
	for _, t := range rep.Targets {
		fmt.Fprintf(b, "| %s | %s | %s / %s | %s / %s | %s | %s | %s |\n",
			mdText(t.Name), rateCI(t.Primary), units.Count(t.Primary.Passed), units.Count(t.Primary.N),
			units.Count(t.Failures.Loud), units.Count(t.Failures.Silent), units.MS(t.LatencyMS.P95),
			units.USD(t.CostUSD.PerCase), usdPtr(t.CostUSD.PerMonth))
	}
	method := "Wilson"
	if len(rep.Targets) > 0 {
		method = intervalWord(rep.Targets[0].Primary.CIMethod)
	}
	b.WriteString("\nRates are passed/n of the primary scorer with " + method + " 95% intervals (percent). " +
		"Loud failures announce themselves (error, timeout, refusal, empty, unparseable); silent ones are well-formed and wrong.\n")
}

func mdComparisons(b *strings.Builder, rep *analysis.Report) {
	b.WriteString("\n### Paired comparisons\n\n")
	b.WriteString("| A vs B | n | Δ A − B (points) [95% CI] | p | adjusted p | verdict |\n")
	b.WriteString("|:--|--:|--:|--:|--:|:--|\n")
	for _, c := range rep.Comparisons {
		delta := deltaCI(c)
		if decisive(c.Verdict) {
			delta = "**" + delta + "**"
		}
		fmt.Fprintf(b, "| %s vs %s | %s | %s | %s | %s | %s |\n",
			mdText(c.A), mdText(c.B), units.Count(c.N), delta, units.PValue(c.PValue), units.PValue(c.PAdjusted), mdText(verdictWords(c)))
	}
	b.WriteString("\nBoth targets on the same cases; p from the " + mdText(analysis.MethodLabel(rep.Comparisons)) + ", Holm-adjusted over all pairs.\n")
}

// mdNoise writes the between-run standard deviation beside the standard
// error across cases, for targets whose cases ran several epochs.
func mdNoise(b *strings.Builder, rep *analysis.Report) {
	rows := noiseRows(rep)
	if len(rows) == 0 {
		return
	}
	b.WriteString("\n### Noise across epochs\n\n")
	b.WriteString("| target | SE across cases (points) | between-run SD (points) | K epochs | epoch rates (%) | within-case share |\n")
	b.WriteString("|:--|--:|--:|--:|--:|--:|\n")
	for _, r := range rows {
		fmt.Fprintf(b, "| %s | %s | %s | %d | %s | %s |\n", mdText(r.name), r.se, r.sd, r.k, r.rates, r.share)
	}
	b.WriteString("\n" + noiseNote + "\n")
}

// mdLedger writes the selection ledger: how many variants were tried in
// the experiment, and whether the chosen one's lead survives.
func mdLedger(b *strings.Builder, l *analysis.Ledger) {
	b.WriteString("\n### Selection ledger\n\n")
	fmt.Fprintf(b, "Experiment %s: **%s tried** in %s, primary scorer %s.\n\n",
		mdText(l.Experiment), plural(l.Variants, "variant"), plural(l.Runs, "run"), mdText(l.Scorer))
	b.WriteString(mdText(l.Summary) + "\n\n")
	if len(l.Tried) > 0 {
		b.WriteString("| | |\n|:--|:--|\n")
		fmt.Fprintf(b, "| chosen | %s: %s |\n", mdText(l.Chosen.Name()), units.Pct(l.Chosen.Rate))
		fmt.Fprintf(b, "| reference | %s: %s (%s) |\n", mdText(l.Reference.Name()), units.Pct(l.Reference.Rate), mdText(referenceWords(l)))
		if c := l.Chosen.VsReference; c != nil {
			fmt.Fprintf(b, "| lead | %s points; p %s alone, %s after Holm over %s: **%s** |\n",
				deltaCI(*c), units.PValue(c.PValue), units.PValue(c.PAdjusted), plural(l.Family, "comparison"), survivesWords(l))
		}
		fmt.Fprintf(b, "| expected best-of-%d inflation | %s points = %s σ, σ = %s points (standard error of a variant's rate) |\n",
			l.Variants, units.Pts(l.Inflation), units.Z(l.ExpectedMaxZ), units.Pts(l.Sigma))
		fmt.Fprintf(b, "| deflated rate | %s (observed %s) |\n", units.Pct(l.DeflatedRate), units.Pct(l.Chosen.Rate))
	}
	if len(l.Tried) > 1 {
		shown := ledgerShown(l)
		fmt.Fprintf(b, "\n<details><summary>Variants tried (%d of %d)</summary>\n\n", len(shown), len(l.Tried))
		b.WriteString("| variant | started | cases | rate | Δ vs reference (points) [95% CI] | p | Holm p | verdict |\n")
		b.WriteString("|:--|:--|--:|--:|--:|--:|--:|:--|\n")
		for _, v := range shown {
			d, p, pa := "—", "—", "—"
			if c := v.VsReference; c != nil {
				d, p, pa = deltaCI(*c), units.PValue(c.PValue), units.PValue(c.PAdjusted)
			}
			fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", mdText(v.Name()), mdText(v.Started), units.Count(v.Cases),
				units.Pct(v.Rate), d, p, pa, mdText(ledgerRole(v)))
		}
		b.WriteString("\n</details>\n")
	}
	for _, n := range l.Notes {
		b.WriteString("\n- " + mdText(n))
	}
	if len(l.Notes) > 0 {
		b.WriteString("\n")
	}
}

func mdRanking(groups []analysis.RankGroup) string {
	parts := make([]string, len(groups))
	for i, g := range groups {
		s := fmt.Sprintf("%d. %s", g.Rank, mdJoin(g.Targets))
		if len(g.Targets) > 1 {
			s += " (tied)"
		}
		parts[i] = s
	}
	return strings.Join(parts, "; ")
}

func mdJoin(names []string) string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = mdText(n)
	}
	return strings.Join(out, ", ")
}

// mdSlices writes one table per tag key: a row per value (tiers in order),
// a column per target, and a column per pair of targets with the paired
// difference on that slice (bold where the slice's verdict names a winner).
func mdSlices(b *strings.Builder, rep *analysis.Report) {
	for _, key := range sliceKeys(rep) {
		values := sliceValues(rep, key)
		fmt.Fprintf(b, "\n### By %s\n\n", mdText(key))
		var pairs []analysis.Comparison
		for _, c := range rep.Comparisons {
			if len(c.Slices[key]) > 0 {
				pairs = append(pairs, c)
			}
		}
		b.WriteString("| " + mdText(key) + " |")
		align := "|:--|"
		for _, t := range rep.Targets {
			b.WriteString(" " + mdText(t.Name) + " |")
			align += "--:|"
		}
		for _, c := range pairs {
			b.WriteString(" Δ " + mdText(c.A) + " − " + mdText(c.B) + " |")
			align += "--:|"
		}
		b.WriteString("\n" + align + "\n")
		shown := values
		if len(shown) > mdMaxSliceValues {
			shown = shown[:mdMaxSliceValues]
		}
		for _, v := range shown {
			b.WriteString("| " + mdText(v) + " |")
			for _, t := range rep.Targets {
				r, ok := t.Slices[key][v]
				if !ok {
					b.WriteString(" — |")
					continue
				}
				fmt.Fprintf(b, " %s (%s/%s) |", rateCI(r), units.Count(r.Passed), units.Count(r.N))
			}
			for _, c := range pairs {
				sc, ok := c.Slices[key][v]
				switch {
				case !ok:
					b.WriteString(" — |")
				case decisive(sc.Verdict):
					b.WriteString(" **" + deltaCI(sc) + "** |")
				default:
					b.WriteString(" " + deltaCI(sc) + " |")
				}
			}
			b.WriteString("\n")
		}
		if len(values) > len(shown) {
			fmt.Fprintf(b, "\n%d more values not shown; the HTML and JSON reports have them all.\n", len(values)-len(shown))
		}
		if len(pairs) > 0 {
			b.WriteString("\nSlice differences are paired; bold: the slice's verdict is decisive, its p-value Holm-adjusted over every slice comparison of the tag.\n")
		}
	}
}

// mdWorst lists the failures the report carries (--failures), costliest
// first, and says how to list them all.
func mdWorst(b *strings.Builder, rep *analysis.Report) {
	fmt.Fprintf(b, "\n<details><summary>Worst failures (%s of %s)</summary>\n\n", units.Count(len(rep.Worst)), units.Count(failureCount(rep)))
	b.WriteString("Costliest first (expected error cost), then silent before loud.\n\n")
	for _, f := range rep.Worst {
		head := []string{"**" + mdText(f.Target) + "**", "case " + mdText(f.CaseID)}
		if f.Epoch > 1 {
			head = append(head, fmt.Sprintf("epoch %d", f.Epoch))
		}
		head = append(head, mdText(f.Shape)+" / "+mdText(f.Kind))
		if f.ErrorCost > 0 {
			head = append(head, "error cost "+units.USD(f.ErrorCost))
		}
		b.WriteString(strings.Join(head, " · ") + "\n\n")
		if f.Reason != "" {
			b.WriteString("Reason: " + mdText(cutRunes(f.Reason, mdMaxLine)) + "\n\n")
		}
		if f.Expected != "" {
			b.WriteString("Expected: " + mdText(cutRunes(f.Expected, mdMaxLine)) + "\n\n")
		}
		switch {
		case f.Raw != "":
			b.WriteString(mdFence(truncate(f.Raw, mdMaxOutput)) + "\n\n")
		case len(f.Calls) == 0:
			b.WriteString("*(empty output)*\n\n")
		}
		if len(f.Calls) > 0 {
			b.WriteString("Calls:\n\n" + mdFence(truncate(analysis.CallsText(f.Calls), mdMaxOutput)) + "\n\n")
		}
	}
	if h := failuresHint(rep); h != "" {
		b.WriteString(mdText(h) + "\n\n")
	}
	b.WriteString("</details>\n")
}

func mdMeasured(b *strings.Builder, r analysis.RunInfo) {
	b.WriteString("\n<details><summary>What was measured</summary>\n\n")
	b.WriteString("| | |\n|:--|:--|\n")
	row := func(k, v string) {
		if v != "" {
			b.WriteString("| " + k + " | " + mdText(v) + " |\n")
		}
	}
	row("run", r.ID)
	row("spec", r.Spec)
	row("spec hash", r.SpecHash)
	row("dataset hash", r.DatasetHash)
	row("prompt hash", r.PromptHash)
	row("git commit", r.GitCommit)
	row("started", r.Started)
	row("ended", r.Ended)
	if r.Scoring > 0 {
		row("scoring", fmt.Sprint(r.Scoring))
	}
	row("scorers hash", r.ScorersHash)
	if r.Scoring > 1 {
		h := r.ScoringScorersHash
		if h == "" {
			h = "not recorded"
		}
		row(fmt.Sprintf("scorers hash of scoring %d", r.Scoring), h)
	}
	b.WriteString("\n</details>\n")
}

// mdText escapes text from outside (a target name, a slice value, a kind,
// a reason) for GitHub-flavoured Markdown, inline or in a table cell: it
// renders as exactly the characters given, forms no link, image, emphasis,
// code span, math ($…$), HTML, table cell break or block (heading, list,
// quote), and mentions nobody. GitHub's extended autolinks (a bare
// "https://…", "www.…" or "name@host") are broken by an invisible word
// joiner after the ":" of "://", before the "." of "www." and after "@".
// Line breaks show as ↵ and control characters as \xNN.
func mdText(s string) string {
	s = visible(s, false)
	var b strings.Builder
	b.Grow(len(s) + len(s)/4)
	for i, r := range s {
		switch r {
		case '&':
			b.WriteString("&amp;")
		case '<':
			b.WriteString("&lt;")
		case '>':
			b.WriteString("&gt;")
		case '\\', '`', '*', '_', '[', ']', '(', ')', '|', '~', '#', '!', '$':
			b.WriteByte('\\')
			b.WriteRune(r)
		case '-', '+', '=':
			// Only at the start can these open a list, a thematic break or
			// a setext heading underline (inside a list item "- …").
			if i == 0 {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		case ' ':
			// Leading spaces could indent the text into a code block or a
			// nested list; as a character reference they are just spaces.
			if strings.TrimLeft(s[:i], " ") == "" {
				b.WriteString("&#32;")
				continue
			}
			b.WriteRune(r)
		case '@':
			// A word joiner keeps GitHub from turning @name into a mention
			// that notifies someone, or name@host into a mailto: link.
			b.WriteString("@\u2060")
		case ':':
			// "scheme://" starts an extended autolink; with a word joiner
			// after the ":" it does not.
			b.WriteRune(r)
			if strings.HasPrefix(s[i+1:], "//") {
				b.WriteString("\u2060")
			}
		case '.':
			if i >= 3 && strings.EqualFold(s[i-3:i], "www") {
				// "www." starts an extended autolink; with a word
				// joiner before the "." it does not.
				b.WriteString("\u2060.")
				continue
			}
			// "1. x" at the start opens an ordered list ("1) x" is covered
			// by escaping ")").
			if i > 0 && isDigits(s[:i]) {
				b.WriteByte('\\')
			}
			b.WriteRune(r)
		default:
			b.WriteRune(r)
		}
	}
	return b.String()
}

func isDigits(s string) bool {
	for _, c := range s {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// mdFence puts text in a fenced code block whose fence is longer than any
// run of backticks in it, so the text cannot close it.
func mdFence(s string) string {
	s = visible(s, true)
	fence := fenceFor(s)
	if !strings.HasSuffix(s, "\n") {
		s += "\n"
	}
	return fence + "text\n" + s + fence
}

// fenceFor is a Markdown code fence longer than any run of backticks in s
// (at least three), so no line of s can close it.
func fenceFor(s string) string {
	longest, run := 0, 0
	for _, c := range s {
		if c == '`' {
			run++
			longest = max(longest, run)
		} else {
			run = 0
		}
	}
	return strings.Repeat("`", max(3, longest+1))
}

// truncate cuts s to at most n runes, saying so.
func truncate(s string, n int) string { return cutAt(s, n, "\n… (truncated)") }

func plural(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return units.Count(n) + " " + word + "s"
}

// primaryScorer names the primary scorer of the first target that has one.
func primaryScorer(rep *analysis.Report) string {
	for _, t := range rep.Targets {
		if t.Primary.Scorer != "" {
			return t.Primary.Scorer
		}
	}
	return ""
}

// sliceKeys are the tag keys any target has slices for, sorted.
func sliceKeys(rep *analysis.Report) []string {
	seen := map[string]bool{}
	for _, t := range rep.Targets {
		for k := range t.Slices {
			seen[k] = true
		}
	}
	keys := make([]string, 0, len(seen))
	for k := range seen {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

// sliceValues are the values of a tag key across targets, in analysis.SortValues
// order (tiers numerically, ordinal words by rank).
func sliceValues(rep *analysis.Report, key string) []string {
	seen := map[string]bool{}
	for _, t := range rep.Targets {
		for v := range t.Slices[key] {
			seen[v] = true
		}
	}
	values := make([]string, 0, len(seen))
	for v := range seen {
		values = append(values, v)
	}
	sort.Strings(values)
	analysis.SortValues(values)
	return values
}

// mdFirstToken writes the time to first token of the targets that
// streamed (nothing when none did).
func mdFirstToken(b *strings.Builder, rep *analysis.Report) {
	ts := streamed(rep)
	if len(ts) == 0 {
		return
	}
	b.WriteString("\n**Time to first token** (targets that streamed)\n\n")
	b.WriteString("| target | p50 | p95 | p99 |\n|:--|--:|--:|--:|\n")
	for _, t := range ts {
		ft := t.LatencyMS.FirstToken
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", mdText(t.Name), units.MS(ft.P50), units.MS(ft.P95), units.MS(ft.P99))
	}
}

// mdTable writes a Markdown table: the head, the separator and the rows,
// each cell through cell (mdText, or mdCell for numbers), then a blank
// line.
func mdTable(b *strings.Builder, head []string, rows [][]string, cell func(string) string) {
	line := func(r []string) {
		out := make([]string, len(r))
		for i, c := range r {
			out[i] = cell(c)
		}
		b.WriteString("| " + strings.Join(out, " | ") + " |\n")
	}
	line(head)
	b.WriteString("|" + strings.Repeat("---|", len(head)) + "\n")
	for _, r := range rows {
		line(r)
	}
	b.WriteString("\n")
}
