package report

import (
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"
	"text/tabwriter"
	"unicode/utf8"

	"github.com/assay-eval/assay/internal/analysis"
	"github.com/assay-eval/assay/internal/stats"
	"github.com/assay-eval/assay/internal/units"
)

// Renderers for `assay diff` (what changed between two runs) and `assay
// drift` (whether a target's outputs changed under the same name), in text,
// JSON and Markdown. Outputs, case IDs, target names, fingerprints and spec
// values come from models, datasets or providers: all are escaped.

// outputShown bounds an output shown in a text or Markdown diff (runes).
const outputShown = 300

// RunDiff writes d in format (text, json or markdown).
func RunDiff(w io.Writer, format string, d *analysis.RunDiff) error {
	return NewRegistry().Diff.Render(w, format, d)
}

// Drift writes r in format (text, json or markdown).
func Drift(w io.Writer, format string, r *analysis.DriftReport) error {
	return NewRegistry().Drift.Render(w, format, r)
}

// diffQuoted shows an output on one line, quoted with Go escapes (\n,
// \x1b, \u202e …) so that spaces at its ends and every control or
// invisible character show. Longer than n runes, it keeps the first two
// thirds and the last third (where a model usually puts its answer) and
// says how much it left out between them.
func diffQuoted(s string, n int) string {
	runes := utf8.RuneCountInString(s)
	if runes <= n {
		return strconv.Quote(s)
	}
	head := diffRuneOffset(s, n*2/3)
	tail := diffRuneOffset(s, runes-n/3)
	return fmt.Sprintf("%s … (%d characters) … %s", strconv.Quote(s[:head]), runes-n*2/3-n/3, strconv.Quote(s[tail:]))
}

// diffRuneOffset returns the byte offset of the n-th rune of s (len(s) when s
// is shorter).
func diffRuneOffset(s string, n int) int {
	k := 0
	for i := range s {
		if k == n {
			return i
		}
		k++
	}
	return len(s)
}

func diffOrNone(s string) string {
	if s == "" {
		return "(none)"
	}
	return s
}

// RunDiffText writes a terminal summary of what changed between two runs.
func RunDiffText(w io.Writer, d *analysis.RunDiff) error {
	fmt.Fprintf(w, "before %s (%s, started %s)\nafter  %s (%s, started %s)\n",
		oneLine(d.Before.ID), oneLine(d.Before.Spec), d.Before.Started, oneLine(d.After.ID), oneLine(d.After.Spec), d.After.Started)

	fmt.Fprintln(w, "\nversions")
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	for _, v := range d.Versions {
		if v.Same {
			fmt.Fprintf(tw, "  %s\tsame\t%s\n", v.Name, oneLine(diffOrNone(v.Before)))
		} else {
			fmt.Fprintf(tw, "  %s\tCHANGED\t%s → %s\n", v.Name, oneLine(diffOrNone(v.Before)), oneLine(diffOrNone(v.After)))
		}
	}
	if err := tw.Flush(); err != nil {
		return err
	}

	if d.Spec != nil {
		fmt.Fprintln(w, "\nspec changes")
		s := d.Spec
		if s.Empty() {
			fmt.Fprintln(w, "  none: the resolved specs are the same")
		}
		for _, n := range s.TargetsAdded {
			fmt.Fprintf(w, "  target added: %s\n", oneLine(n))
		}
		for _, n := range s.TargetsRemoved {
			fmt.Fprintf(w, "  target removed: %s\n", oneLine(n))
		}
		for _, t := range s.Targets {
			fmt.Fprintf(w, "  target %s changed:\n", oneLine(t.Name))
			diffTextFields(w, t.Changes)
		}
		for _, g := range []struct {
			title string
			cs    []analysis.FieldChange
		}{{"prompt text changed", s.Prompt}, {"scorer configuration changed", s.Scorers}, {"dataset settings changed", s.Dataset}, {"other settings changed", s.Other}} {
			if len(g.cs) > 0 {
				fmt.Fprintf(w, "  %s:\n", g.title)
				diffTextFields(w, g.cs)
			}
		}
		for _, f := range s.Files {
			fmt.Fprintf(w, "  file %s %s (read by the %s)\n", oneLine(f.Path), oneLine(f.Change), oneLine(f.For))
		}
	}

	c := d.Cases
	fmt.Fprintf(w, "\ncases  before %d, after %d: %d shared, %d added, %d removed", c.Before, c.After, c.Shared, c.Added, c.Removed)
	if c.Changed > 0 {
		fmt.Fprintf(w, ", %d shared with a changed expected value or tags", c.Changed)
	}
	fmt.Fprintln(w)
	diffTextIDs(w, "added", c.AddedIDs, c.Added)
	diffTextIDs(w, "removed", c.RemovedIDs, c.Removed)
	diffTextIDs(w, "changed", c.ChangedIDs, c.Changed)
	for _, n := range d.TargetsAdded {
		fmt.Fprintf(w, "target only in the after run: %s\n", oneLine(n))
	}
	for _, n := range d.TargetsRemoved {
		fmt.Fprintf(w, "target only in the before run: %s\n", oneLine(n))
	}

	if len(d.Models) > 0 {
		fmt.Fprintln(w, "\nmodels reported (model fingerprint ×results)")
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
		fmt.Fprintln(tw, "  target\tbefore\tafter\t")
		for _, m := range d.Models {
			mark := "same"
			switch {
			case m.Changed:
				mark = "CHANGED"
			case len(m.Before) == 0 || len(m.After) == 0:
				mark = ""
			}
			fmt.Fprintf(tw, "  %s\t%s\t%s\t%s\n", oneLine(m.Target), diffModels(m.Before), diffModels(m.After), mark)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}

	for _, f := range d.Flips {
		fmt.Fprintf(w, "\n%s: %d pairs scored in both runs (primary scorer %s, by case and epoch): %d pass→fail, %d fail→pass\n",
			oneLine(f.Target), f.Paired, oneLine(f.Scorer), f.PassToFail, f.FailToPass)
		for _, fc := range f.Cases {
			dir := "pass→fail"
			if fc.Direction == analysis.FailToPass {
				dir = "fail→pass"
			}
			fmt.Fprintf(w, "  case %s, epoch %d: %s", oneLine(fc.CaseID), fc.Epoch, dir)
			if fc.Expected != "" {
				fmt.Fprintf(w, ", expected %s", diffQuoted(fc.Expected, 90))
			}
			fmt.Fprintf(w, "\n    before: %s\n    after:  %s\n", diffQuoted(fc.Before, outputShown), diffQuoted(fc.After, outputShown))
		}
		if f.Unlisted > 0 {
			fmt.Fprintf(w, "  … and %d more (--limit N lists more)\n", f.Unlisted)
		}
	}
	if len(d.Warnings) > 0 {
		fmt.Fprintln(w)
	}
	for _, wn := range d.Warnings {
		fmt.Fprintf(w, "warning: %s\n", oneLine(wn))
	}
	return nil
}

func diffTextFields(w io.Writer, cs []analysis.FieldChange) {
	v := func(s string) string { return oneLine(diffCut(s, outputShown)) }
	for _, c := range cs {
		switch {
		case len(c.Lines) > 0:
			fmt.Fprintf(w, "    %s:\n", oneLine(c.Field))
			for _, l := range diffLines(c) {
				fmt.Fprintf(w, "      %s\n", l)
			}
		case c.Before == "":
			fmt.Fprintf(w, "    %s: added %s\n", oneLine(c.Field), v(c.After))
		case c.After == "":
			fmt.Fprintf(w, "    %s: removed (was %s)\n", oneLine(c.Field), v(c.Before))
		default:
			fmt.Fprintf(w, "    %s: %s → %s\n", oneLine(c.Field), v(c.Before), v(c.After))
		}
	}
}

func diffTextIDs(w io.Writer, what string, ids []string, n int) {
	if n == 0 {
		return
	}
	shown := make([]string, len(ids))
	for i, id := range ids {
		shown[i] = oneLine(id)
	}
	more := ""
	if n > len(ids) {
		more = fmt.Sprintf(" … (%d in all)", n)
	}
	fmt.Fprintf(w, "  %s: %s%s\n", what, strings.Join(shown, ", "), more)
}

func diffModels(ms []analysis.ModelCount) string {
	if len(ms) == 0 {
		return "—"
	}
	parts := make([]string, len(ms))
	for i, m := range ms {
		s := modelName(m)
		parts[i] = oneLine(s) + " ×" + strconv.Itoa(m.Results)
	}
	return strings.Join(parts, ", ")
}

// DriftText writes a terminal summary of a drift check.
func DriftText(w io.Writer, r *analysis.DriftReport) error {
	level := units.PlainPct(1 - r.Alpha)
	fmt.Fprintf(w, "before %s\nafter  %s\n", driftSide(r.Before, r.BeforeFile), driftSide(r.After, r.AfterFile))
	fmt.Fprintf(w, "\nsame target, same cases, paired by case and epoch; %s Wilson intervals; %s on the primary verdicts\n", level, driftTests(r))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "target\tverdict\tpaired\tflipped\tflip rate [CI]\tpass→fail\tfail→pass\tflip p\tidentical [CI]\ttemperature\tfingerprint\t")
	for _, t := range r.Targets {
		fp := "same"
		if t.Fingerprints.Changed {
			fp = "CHANGED"
		}
		fmt.Fprintf(tw, "%s\t%s\t%d\t%d/%d\t%s %s\t%d\t%d\t%s\t%s %s\t%s\t%s\t\n", oneLine(t.Target), driftVerdictWord(t.Verdict),
			t.Paired, t.Flips.Flipped, t.Flips.N, units.Pct(t.Flips.Rate), units.PctCI(t.Flips.CI), t.Flips.PassToFail, t.Flips.FailToPass,
			units.PValueCell(t.Flips.PValue), units.Pct(t.Identical.Rate), units.PctCI(t.Identical.CI), driftTemperature(t.Temperature), fp)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, t := range r.Targets {
		fmt.Fprintf(w, "\n%s: %s\n", oneLine(t.Target), t.Verdict)
		for _, s := range t.Reasons {
			fmt.Fprintf(w, "  - %s\n", oneLine(s))
		}
		fmt.Fprintf(w, "  models before: %s\n  models after:  %s\n", diffModels(t.Fingerprints.Before), diffModels(t.Fingerprints.After))
		fmt.Fprintf(w, "  calls before: %s\n  calls after:  %s\n", driftHealth(t.Health.Before), driftHealth(t.Health.After))
		if h := t.Health.Calibration; h != nil {
			fmt.Fprintf(w, "  calls of the calibration: %s\n", driftHealth(*h))
		}
		if c := t.Calibration; c != nil {
			fmt.Fprintf(w, "  calibration (%s): %d of %d identical (%s), %d of %d flipped (%s); tests at %s\n",
				oneLine(c.Source), c.Identical, c.Pairs, units.Pct(c.Rate), c.Flipped, c.FlipN, units.Pct(c.FlipRate), units.PValueCell(c.Level))
		}
		for _, s := range t.Notes {
			fmt.Fprintf(w, "  note: %s\n", oneLine(s))
		}
		if ids := driftFlippedList(t.FlippedCases, oneLine); ids != "" {
			fmt.Fprintf(w, "  flipped: %s\n", ids)
		}
	}
	if len(r.Only) > 0 {
		names := make([]string, len(r.Only))
		for i, n := range r.Only {
			names[i] = oneLine(n)
		}
		fmt.Fprintf(w, "\nin one run only (not checked): %s\n", strings.Join(names, ", "))
	}
	if len(r.Warnings) > 0 {
		fmt.Fprintln(w)
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(w, "warning: %s\n", oneLine(wn))
	}
	for _, c := range r.CannotJudge {
		fmt.Fprintf(w, "\n%s", oneLine(c))
	}
	fmt.Fprintf(w, "\n%s\n", driftSummary(r))
	return nil
}

// driftHealth is a side's calls of a target: "152 calls, 152 failed
// (152 auth)".
func driftHealth(h analysis.DriftSideHealth) string {
	if h.Failed == 0 {
		return fmt.Sprintf("%s, none failed", diffCount(h.Calls, "call"))
	}
	kinds := make([]string, 0, len(h.Kinds))
	for k, n := range h.Kinds {
		kinds = append(kinds, fmt.Sprintf("%d %s", n, oneLine(k)))
	}
	slices.Sort(kinds)
	return fmt.Sprintf("%s, %d failed (%s)", diffCount(h.Calls, "call"), h.Failed, strings.Join(kinds, ", "))
}

// driftFlippedList lists the first flipped cases, escaped by esc, and how
// many more there are ("" when none flipped). JSON lists them all.
func driftFlippedList(fs []analysis.DriftFlippedCase, esc func(string) string) string {
	const shown = 20
	if len(fs) == 0 {
		return ""
	}
	parts := make([]string, 0, min(len(fs), shown))
	for i, f := range fs {
		if i == shown {
			break
		}
		arrow := "pass→fail"
		if f.Direction == "fail_to_pass" {
			arrow = "fail→pass"
		}
		id := esc(f.Case)
		if f.Epoch > 1 {
			id += fmt.Sprintf(" (epoch %d)", f.Epoch)
		}
		parts = append(parts, id+" "+arrow)
	}
	out := strings.Join(parts, ", ")
	if len(fs) > shown {
		out += fmt.Sprintf(" … and %d more (--format json lists them all)", len(fs)-shown)
	}
	return out
}

func driftSummary(r *analysis.DriftReport) string {
	if len(r.CannotJudge) > 0 && len(r.Drifted) == 0 {
		return fmt.Sprintf("CANNOT JUDGE: %d of %s could not be judged (a side's calls failed, or too few pairs): no drift verdict", countVerdict(r, analysis.DriftCannotJudge), diffCount(len(r.Targets), "target"))
	}
	if len(r.Drifted) == 0 {
		return fmt.Sprintf("no drift: %s checked, none drifted", diffCount(len(r.Targets), "target"))
	}
	names := make([]string, len(r.Drifted))
	for i, n := range r.Drifted {
		names[i] = oneLine(n)
	}
	return fmt.Sprintf("DRIFT: %d of %s drifted (%s)", len(r.Drifted), diffCount(len(r.Targets), "target"), strings.Join(names, ", "))
}

func countVerdict(r *analysis.DriftReport, v string) int {
	n := 0
	for _, t := range r.Targets {
		if t.Verdict == v {
			n++
		}
	}
	return n
}

func diffCount(n int, word string) string {
	if n == 1 {
		return "1 " + word
	}
	return strconv.Itoa(n) + " " + word + "s"
}

func driftTemperature(t analysis.DriftTemperature) string {
	f := func(x *float64, unknown bool) string {
		switch {
		case unknown:
			return "unknown"
		case x == nil:
			return "unset"
		}
		return units.Plain(*x)
	}
	b, a := f(t.Before, t.BeforeUnknown), f(t.After, t.AfterUnknown)
	if b == a {
		return b
	}
	return b + "→" + a
}

// driftSide names one side of a drift check: its run, and the baseline
// file it was read from.
func driftSide(ri analysis.RunInfo, file string) string {
	if file == "" {
		return fmt.Sprintf("%s (%s, started %s)", oneLine(ri.ID), oneLine(ri.Spec), ri.Started)
	}
	return fmt.Sprintf("%s (%s, started %s), from the baseline file %s", oneLine(ri.ID), oneLine(ri.Spec), ri.Started, oneLine(file))
}

// RunDiffMarkdown writes what changed between two runs as Markdown (for a
// pull-request comment).
func RunDiffMarkdown(w io.Writer, d *analysis.RunDiff) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## assay diff: %s → %s\n\n", mdText(d.Before.ID), mdText(d.After.ID))
	b.WriteString("| | before | after | |\n|---|---|---|---|\n")
	for _, v := range d.Versions {
		mark := "same"
		if !v.Same {
			mark = "**changed**"
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", v.Name, mdText(diffOrNone(v.Before)), mdText(diffOrNone(v.After)), mark)
	}
	if s := d.Spec; s != nil && !s.Empty() {
		b.WriteString("\n### Spec changes\n\n")
		for _, n := range s.TargetsAdded {
			fmt.Fprintf(&b, "- target added: %s\n", mdText(n))
		}
		for _, n := range s.TargetsRemoved {
			fmt.Fprintf(&b, "- target removed: %s\n", mdText(n))
		}
		for _, t := range s.Targets {
			for _, c := range t.Changes {
				fmt.Fprintf(&b, "- target %s: %s\n", mdText(t.Name), diffMDField(c))
			}
		}
		for _, cs := range [][]analysis.FieldChange{s.Prompt, s.Scorers, s.Dataset, s.Other} {
			for _, c := range cs {
				if len(c.Lines) > 0 {
					fmt.Fprintf(&b, "- %s changed:\n\n%s\n\n", mdText(c.Field), diffFence(diffLines(c)))
					continue
				}
				fmt.Fprintf(&b, "- %s\n", diffMDField(c))
			}
		}
		for _, f := range s.Files {
			fmt.Fprintf(&b, "- file %s %s (read by the %s)\n", mdText(f.Path), mdText(f.Change), mdText(f.For))
		}
	}
	c := d.Cases
	fmt.Fprintf(&b, "\n### Cases\n\n%d before, %d after: %d shared, %d added, %d removed, %d changed.\n", c.Before, c.After, c.Shared, c.Added, c.Removed, c.Changed)
	for _, g := range []struct {
		what string
		ids  []string
		n    int
	}{{"added", c.AddedIDs, c.Added}, {"removed", c.RemovedIDs, c.Removed}, {"changed", c.ChangedIDs, c.Changed}} {
		if g.n == 0 {
			continue
		}
		ids := make([]string, len(g.ids))
		for i, id := range g.ids {
			ids[i] = mdText(id)
		}
		fmt.Fprintf(&b, "- %s: %s", g.what, strings.Join(ids, ", "))
		if g.n > len(g.ids) {
			fmt.Fprintf(&b, " … (%d in all)", g.n)
		}
		b.WriteString("\n")
	}
	if len(d.Models) > 0 {
		b.WriteString("\n### Models reported\n\n| target | before | after | |\n|---|---|---|---|\n")
		for _, m := range d.Models {
			mark := "same"
			switch {
			case m.Changed:
				mark = "**changed**"
			case len(m.Before) == 0 || len(m.After) == 0:
				mark = ""
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", mdText(m.Target), mdText(diffModelsPlain(m.Before)), mdText(diffModelsPlain(m.After)), mark)
		}
	}
	for _, f := range d.Flips {
		fmt.Fprintf(&b, "\n### %s: %d pass→fail, %d fail→pass (of %d paired)\n", mdText(f.Target), f.PassToFail, f.FailToPass, f.Paired)
		for _, fc := range f.Cases {
			dir := "pass→fail"
			if fc.Direction == analysis.FailToPass {
				dir = "fail→pass"
			}
			fmt.Fprintf(&b, "\n**%s** (epoch %d) %s", mdText(fc.CaseID), fc.Epoch, dir)
			if fc.Expected != "" {
				fmt.Fprintf(&b, ", expected %s", mdText(fc.Expected))
			}
			fmt.Fprintf(&b, "\n\nbefore:\n\n%s\n\nafter:\n\n%s\n", mdFence(diffElide(fc.Before, 4*outputShown)), mdFence(diffElide(fc.After, 4*outputShown)))
		}
		if f.Unlisted > 0 {
			fmt.Fprintf(&b, "\n… and %d more.\n", f.Unlisted)
		}
	}
	for _, wn := range d.Warnings {
		fmt.Fprintf(&b, "\n> warning: %s\n", mdText(wn))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// diffLines renders a field's line diff, unified-style, one line each
// (a line's control characters and line breaks made visible), and says
// how many changed lines were left out.
func diffLines(c analysis.FieldChange) []string {
	out := make([]string, 0, len(c.Lines)+1)
	for _, l := range c.Lines {
		if l.Op == "@@" {
			out = append(out, oneLine(l.Text))
			continue
		}
		out = append(out, l.Op+oneLine(l.Text))
	}
	if c.LinesOmitted > 0 {
		out = append(out, fmt.Sprintf("… and %d more changed lines", c.LinesOmitted))
	}
	return out
}

// diffFence is a Markdown code block of a line diff: its fence is longer
// than any run of backticks inside, so no line can close it.
func diffFence(lines []string) string {
	s := strings.Join(lines, "\n")
	fence := fenceFor(s)
	return fence + "diff\n" + s + "\n" + fence
}

func diffMDField(c analysis.FieldChange) string {
	switch {
	case c.Before == "":
		return fmt.Sprintf("%s added: %s", mdText(c.Field), mdText(diffCut(c.After, outputShown)))
	case c.After == "":
		return fmt.Sprintf("%s removed (was %s)", mdText(c.Field), mdText(diffCut(c.Before, outputShown)))
	}
	return fmt.Sprintf("%s: %s → %s", mdText(c.Field), mdText(diffCut(c.Before, outputShown)), mdText(diffCut(c.After, outputShown)))
}

func diffCut(s string, n int) string {
	if i := diffRuneOffset(s, n); i < len(s) {
		return s[:i] + "…"
	}
	return s
}

func diffModelsPlain(ms []analysis.ModelCount) string {
	if len(ms) == 0 {
		return "—"
	}
	parts := make([]string, len(ms))
	for i, m := range ms {
		s := modelName(m)
		parts[i] = s + " ×" + strconv.Itoa(m.Results)
	}
	return strings.Join(parts, ", ")
}

// DriftMarkdown writes a drift check as Markdown.
func DriftMarkdown(w io.Writer, r *analysis.DriftReport) error {
	var b strings.Builder
	fmt.Fprintf(&b, "## assay drift: %s → %s\n\n", mdText(r.Before.ID), mdText(r.After.ID))
	for _, f := range []struct{ side, file string }{{"before", r.BeforeFile}, {"after", r.AfterFile}} {
		if f.file != "" {
			fmt.Fprintf(&b, "The %s run is read from the baseline file %s.\n\n", f.side, mdText(f.file))
		}
	}
	fmt.Fprintf(&b, "%s\n\n", mdText(driftSummary(r)))
	fmt.Fprintf(&b, "Flip p: the %s on the primary verdicts.\n\n", mdText(driftTests(r)))
	b.WriteString("| target | verdict | paired | flip rate [CI] | pass→fail | fail→pass | flip p | identical [CI] | temperature | fingerprint |\n|---|---|---:|---|---:|---:|---:|---|---|---|\n")
	for _, t := range r.Targets {
		fp := "same"
		if t.Fingerprints.Changed {
			fp = "**changed**"
		}
		v := t.Verdict
		if v == analysis.DriftDrifted {
			v = "**drifted**"
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %s %s | %d | %d | %s | %s %s | %s | %s |\n", mdText(t.Target), v, t.Paired,
			units.Pct(t.Flips.Rate), units.PctCI(t.Flips.CI), t.Flips.PassToFail, t.Flips.FailToPass, units.PValue(t.Flips.PValue),
			units.Pct(t.Identical.Rate), units.PctCI(t.Identical.CI), driftTemperature(t.Temperature), fp)
	}
	for _, t := range r.Targets {
		if len(t.Reasons)+len(t.Notes)+len(t.FlippedCases) == 0 && t.Calibration == nil {
			continue
		}
		fmt.Fprintf(&b, "\n**%s**\n\n", mdText(t.Target))
		for _, s := range t.Reasons {
			fmt.Fprintf(&b, "- %s\n", mdText(s))
		}
		for _, s := range t.Notes {
			fmt.Fprintf(&b, "- note: %s\n", mdText(s))
		}
		if c := t.Calibration; c != nil {
			fmt.Fprintf(&b, "- calibration (%s): %d of %d identical (%s), %d of %d flipped (%s); tests at %s\n",
				mdText(c.Source), c.Identical, c.Pairs, units.Pct(c.Rate), c.Flipped, c.FlipN, units.Pct(c.FlipRate), units.PValue(c.Level))
		}
		if ids := driftFlippedList(t.FlippedCases, mdText); ids != "" {
			fmt.Fprintf(&b, "- flipped: %s\n", ids)
		}
	}
	for _, c := range r.CannotJudge {
		fmt.Fprintf(&b, "\n> **%s**\n", mdText(c))
	}
	for _, wn := range r.Warnings {
		fmt.Fprintf(&b, "\n> warning: %s\n", mdText(wn))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func driftVerdictWord(v string) string {
	if v == analysis.DriftDrifted {
		return "DRIFTED"
	}
	return v
}

// modelName is a model and fingerprint as reported ("none reported" when
// the provider said nothing, as replayed outputs do).
func modelName(m analysis.ModelCount) string {
	switch {
	case m.Model == "" && m.Fingerprint == "":
		return "none reported"
	case m.Fingerprint == "":
		return m.Model
	case m.Model == "":
		return "(no model) " + m.Fingerprint
	}
	return m.Model + " " + m.Fingerprint
}

// diffElide keeps the first two thirds and the last third of n runes of a
// longer s, marking what it left out on a line of its own.
func diffElide(s string, n int) string {
	runes := utf8.RuneCountInString(s)
	if runes <= n {
		return s
	}
	head := diffRuneOffset(s, n*2/3)
	tail := diffRuneOffset(s, runes-n/3)
	return fmt.Sprintf("%s\n… (%d characters left out) …\n%s", s[:head], runes-n*2/3-n/3, s[tail:])
}

// driftTests names the flip tests a drift check used (one per design; the
// exact McNemar test, drift's default, when no target was compared).
func driftTests(r *analysis.DriftReport) string {
	var names []string
	for _, t := range r.Targets {
		if l := analysis.TestLabel(t.Flips.Test); t.Flips.Test != "" && !slices.Contains(names, l) {
			names = append(names, l)
		}
	}
	if len(names) == 0 {
		return analysis.TestLabel(stats.TestMcNemarExact)
	}
	return strings.Join(names, ", ")
}
