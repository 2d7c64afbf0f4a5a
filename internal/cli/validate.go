package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/spf13/cobra"

	"github.com/assay-eval/assay/internal/dataset"
	"github.com/assay-eval/assay/internal/spec"
	"github.com/assay-eval/assay/internal/task"
)

type validateOptions struct {
	// Files are overlays merged over the spec (-f).
	Files        []string
	Spec         string
	Deep         bool
	Strict       bool
	DupThreshold float64
	MinBucket    int
	Top          int
	Format       string
}

func (o *validateOptions) AddFlags(cmd *cobra.Command) {
	f := cmd.Flags()
	addOverlayFlag(cmd, &o.Files)
	f.BoolVar(&o.Deep, "deep", false, "also check the dataset's health: duplicates, missing expected values, label and tag distributions")
	f.BoolVar(&o.Strict, "strict", false, "with --deep: fail (exit 4) on warnings (duplicate cases) too")
	f.Float64Var(&o.DupThreshold, "dup-threshold", dataset.DefaultDupThreshold, "with --deep: token-set overlap (Jaccard, 0 to 1] at or above which two cases are near-duplicates")
	f.IntVar(&o.MinBucket, "min-bucket", dataset.DefaultMinBucket, "with --deep: tag values with fewer cases are flagged as small")
	f.IntVar(&o.Top, "top", dataset.DefaultTopLabels, "with --deep: how many expected values the label distribution lists")
	f.StringVar(&o.Format, "format", "text", "output format: text|json")
}

func (o *validateOptions) check(cmd *cobra.Command) error {
	if err := checkFormat(o.Format, []string{"text", "json"}); err != nil {
		return err
	}
	if !o.Deep {
		for _, name := range []string{"strict", "dup-threshold", "min-bucket", "top"} {
			if cmd.Flags().Changed(name) {
				return usageError{fmt.Errorf("--%s applies to the dataset health check: add --deep", name)}
			}
		}
	}
	if !(o.DupThreshold > 0 && o.DupThreshold <= 1) {
		return usageError{fmt.Errorf("--dup-threshold %v: want a similarity above 0 and at most 1, e.g. 0.9", o.DupThreshold)}
	}
	if o.MinBucket < 1 {
		return usageError{fmt.Errorf("--min-bucket %d: want at least 1 case", o.MinBucket)}
	}
	if o.Top < 1 {
		return usageError{fmt.Errorf("--top %d: want at least 1 value", o.Top)}
	}
	return nil
}

func newValidateCommand(g *Globals) *cobra.Command {
	o := &validateOptions{}
	cmd := &cobra.Command{
		Use:   "validate SPEC",
		Short: "Check the spec, prompt, scorers and dataset; report every problem at once",
		Long: `Load the spec and everything it names (prompt files, dataset, replay files),
and report every problem at once as FILE:LINE:COL: message. Calls no model.

With --deep, also check the dataset's health (see docs/dataset-health.md):
exact and near-duplicate inputs, cases whose expected value is missing or
not extractable, the distribution of expected values and of each tag's
values, small and missing buckets. A case without a usable expected value
cannot be graded: it makes the dataset invalid (exit 4). Duplicates are
warnings (exit 0) unless --strict.

Exit codes: 0 valid, 4 invalid.`,
		Args: exactArgs(1),
		PreRunE: func(cmd *cobra.Command, args []string) error {
			return o.check(cmd)
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			o.Spec = args[0]
			return runValidate(cmd.Context(), g, o)
		},
	}
	o.AddFlags(cmd)
	return cmd
}

// validateReport is `assay validate --format json`.
type validateReport struct {
	Spec     string            `json:"spec"`
	Valid    bool              `json:"valid"`
	Name     string            `json:"name,omitempty"`
	Cases    int               `json:"cases"`
	Targets  int               `json:"targets"`
	Scorers  int               `json:"scorers"`
	Hashes   map[string]string `json:"hashes,omitempty"`
	Problems spec.Problems     `json:"problems"`
	Warnings []string          `json:"warnings"`
	Health   *dataset.Health   `json:"health,omitempty"`

	// Candidates are the targets a run calls by default; Judges the
	// targets that only grade them.
	Candidates []string `json:"candidates,omitempty"`
	Judges     []string `json:"judges,omitempty"`
}

func runValidate(ctx context.Context, g *Globals, o *validateOptions) error {
	t, err := task.LoadWith(o.Spec, specOptions(g, o.Files))
	var problems spec.Problems
	if err != nil && !errors.As(err, &problems) {
		return err
	}
	rep := validateReport{Spec: o.Spec, Problems: spec.Problems{}, Warnings: []string{}}
	var sp *spec.Spec
	if t != nil {
		sp = t.Spec
	}
	if sp != nil {
		rep.Name, rep.Targets, rep.Scorers = sp.Name, len(sp.Targets), len(sp.Scorers)
		rep.Candidates, rep.Judges = sp.CandidateNames(), runJudges(sp, sp.CandidateNames())
		if t.Dataset != nil {
			rep.Cases = t.Dataset.Count
		}
		if len(problems) == 0 {
			rep.Hashes = map[string]string{"spec": sp.Hash, "dataset": t.Dataset.Hash, "dataset_file": t.Dataset.FileHash, "prompt": sp.PromptHash(), "scorers": sp.ScorersHash()}
		}
		if t.Dataset != nil {
			for _, p := range t.Dataset.Warnings {
				rep.Warnings = append(rep.Warnings, p.String())
			}
		}
		for i := range sp.Targets {
			missing, unusable := g.providers().KeyProblems(sp, i, g.Getenv)
			problems = append(problems, unusable...) // set, but unusable
			for _, p := range missing {
				rep.Warnings = append(rep.Warnings, p.String())
			}
		}
	}

	var healthWarnings []string
	if o.Deep && sp != nil && t.Dataset != nil {
		h, herr := dataset.CheckHealth(sp, dataset.HealthOptions{
			TextFields:   healthTextFields(t),
			DupThreshold: o.DupThreshold,
			MinBucket:    o.MinBucket,
			TopLabels:    o.Top,
		})
		var hp spec.Problems
		switch {
		case errors.As(herr, &hp):
			// The dataset cannot be read: task.Load has said why.
		case herr != nil:
			return herr
		default:
			rep.Health = h
			problems = append(problems, expectedProblems(sp, h, problems)...)
			healthWarnings = h.Warnings()
			rep.Warnings = append(rep.Warnings, healthWarnings...)
		}
	}

	strictFail := o.Strict && len(healthWarnings) > 0
	rep.Valid = len(problems) == 0 && !strictFail
	if len(problems) > 0 {
		rep.Problems = problems
	}

	if o.Format == "json" {
		enc := json.NewEncoder(g.Stdout)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(rep); err != nil {
			return err
		}
		if !rep.Valid {
			return &ExitError{Code: ExitInvalid, Err: errSilent}
		}
		return nil
	}

	if len(problems) == 0 {
		fmt.Fprintf(g.Stdout, "%s: ok — spec %q, %d cases, %d targets, %d scorers\n",
			o.Spec, sp.Name, t.Dataset.Count, len(sp.Targets), len(sp.Scorers))
		fmt.Fprintf(g.Stdout, "  spec %s\n  dataset %s (cases; file %s)\n  prompt %s\n  scorers %s\n", sp.Hash, t.Dataset.Hash, t.Dataset.FileHash, sp.PromptHash(), sp.ScorersHash())
		if len(rep.Judges) > 0 {
			fmt.Fprintf(g.Stdout, "  candidates %s; judges %s (they grade, they are not run or ranked)\n", strings.Join(rep.Candidates, ", "), strings.Join(rep.Judges, ", "))
		}
	}
	if rep.Health != nil {
		if len(problems) == 0 {
			fmt.Fprintln(g.Stdout)
		}
		writeHealth(g.Stdout, sp, rep.Health, o)
	}
	for _, w := range rep.Warnings {
		if !slices.Contains(healthWarnings, w) {
			fmt.Fprintf(g.Stderr, "warning: %s\n", w)
		}
	}
	if len(problems) > 0 {
		if sp == nil {
			return problems
		}
		return problems.Sort(sp.File)
	}
	if strictFail {
		return &ExitError{Code: ExitInvalid, Err: fmt.Errorf("--strict: the dataset has %d health warning(s)", len(healthWarnings))}
	}
	return nil
}

// healthTextFields are the fields whose text is a case's input: those the
// prompt uses, but the ID and the expected answer. Nil (every string field)
// when the prompt uses none or did not compile.
func healthTextFields(t *task.Task) []string {
	if t.Prompt == nil {
		return nil
	}
	ds := &t.Spec.Dataset
	var out []string
	for _, f := range t.Prompt.Fields() {
		if f != ds.Expected && f != ds.ID {
			out = append(out, f)
		}
	}
	return out
}

// expectedProblems turns cases without a usable expected value into
// problems at their lines in the dataset, skipping lines task.Load already
// reported (an expected_extract that does not match is one of its
// problems).
func expectedProblems(sp *spec.Spec, h *dataset.Health, have spec.Problems) spec.Problems {
	file := sp.Resolve(sp.Dataset.Path)
	seen := map[int]bool{}
	for _, p := range have {
		if p.File == file {
			seen[p.Line] = true
		}
	}
	e := &h.Expected
	var out spec.Problems
	add := func(list []dataset.CaseRef, total int, msg, hint string) {
		shown := 0
		for _, c := range list {
			if seen[c.Line] {
				continue
			}
			out = append(out, spec.Problem{File: file, Line: c.Line, Col: 1, Msg: fmt.Sprintf(msg, showID(c.ID)), Hint: hint})
			shown++
		}
		if more := total - len(list); more > 0 && shown > 0 {
			last := list[len(list)-1]
			out = append(out, spec.Problem{File: file, Line: last.Line, Col: 1, Msg: fmt.Sprintf("… and %d more such cases", more)})
		}
	}
	add(e.MissingList, e.Missing, "case %s has no expected value (field "+strconv.Quote(e.Field)+" is missing, null or blank)",
		"every graded case needs one; a case whose right answer is a refusal belongs in bucket should-refuse")
	add(e.UnextractableList, e.Unextractable, "case %s: expected field "+strconv.Quote(e.Field)+" does not match dataset.expected_extract", "")
	return out
}

// writeHealth renders the health report as text.
func writeHealth(w io.Writer, sp *spec.Spec, h *dataset.Health, o *validateOptions) {
	source := "the fields the prompt uses"
	if h.TextSource != "prompt" {
		source = "every string field but the id and expected ones"
	}
	fmt.Fprintf(w, "dataset health: %s, %d cases", showText(h.Path, 80), h.Cases)
	if h.Skipped > 0 {
		fmt.Fprintf(w, " (%d rows skipped: see the problems)", h.Skipped)
	}
	fmt.Fprintln(w)
	if sp.Dataset.Limit > 0 {
		fmt.Fprintf(w, "  the whole file is checked; dataset.limit (%d) applies to runs only\n", sp.Dataset.Limit)
	}
	fmt.Fprintf(w, "  input compared for duplicates: %s (%s)\n", strings.Join(showAll(h.TextFields), ", "), source)

	// Expected values.
	e := &h.Expected
	if e.Field == "" {
		fmt.Fprintln(w, "  expected values: none (dataset.expected is not set)")
	} else {
		usable := 0
		if h.Labels != nil {
			usable = h.Labels.Values
		}
		fmt.Fprintf(w, "  expected values (%s): %d of %d cases have one", showText(e.Field, 40), usable, h.Cases)
		if e.ShouldRefuseExempt > 0 {
			fmt.Fprintf(w, "; %d should-refuse case(s) need none", e.ShouldRefuseExempt)
		}
		fmt.Fprintln(w)
		if e.Missing > 0 {
			fmt.Fprintf(w, "    PROBLEM: %d case(s) have no expected value: %s\n", e.Missing, caseList(e.MissingList, e.Missing))
		}
		if e.Unextractable > 0 {
			fmt.Fprintf(w, "    PROBLEM: %d case(s) where expected_extract does not match: %s\n", e.Unextractable, caseList(e.UnextractableList, e.Unextractable))
		}
		if l := h.Labels; l != nil && l.Values > 0 {
			kind := ""
			if l.Numeric {
				kind = ", all numeric (the top values say little; a dominant one is what a constant answer scores)"
			}
			fmt.Fprintf(w, "    %d distinct value(s)%s\n", l.Distinct, kind)
			writeCounts(w, "      ", l.Top)
			if l.Other > 0 {
				fmt.Fprintf(w, "      … %d more case(s) with other values\n", l.Other)
			}
			writeFieldLabels(w, l)
		}
	}

	// Duplicates.
	ex := &h.Exact
	if ex.Groups == 0 {
		fmt.Fprintln(w, "  exact duplicates: none")
	} else {
		fmt.Fprintf(w, "  WARNING: %d group(s) of exact duplicates (%d cases; %d beyond the first of each)\n", ex.Groups, ex.Cases, ex.Extra)
		for _, gr := range ex.List {
			fmt.Fprintf(w, "    %s: %s\n", caseList(gr.Cases, len(gr.Cases)), showText(gr.Text, 80))
			if len(gr.Expected) > 1 {
				fmt.Fprintf(w, "      expect different answers: %s\n", strings.Join(showAll(gr.Expected), ", "))
			}
		}
		if n := ex.Groups - len(ex.List); n > 0 {
			fmt.Fprintf(w, "    … %d more group(s) (see --format json)\n", n)
		}
	}
	nd := &h.Near
	if nd.Pairs == 0 {
		fmt.Fprintf(w, "  near duplicates (token overlap ≥ %s): none\n", strconv.FormatFloat(nd.Threshold, 'f', -1, 64))
	} else {
		fmt.Fprintf(w, "  WARNING: %d near-duplicate pair(s) (token overlap ≥ %s) among %d cases\n", nd.Pairs, strconv.FormatFloat(nd.Threshold, 'f', -1, 64), nd.Cases)
		for i, p := range nd.List {
			if i == 10 {
				fmt.Fprintf(w, "    … %d more pair(s) (see --format json)\n", nd.Pairs-10)
				break
			}
			fmt.Fprintf(w, "    %s ~ %s  %.2f  only in the first: %s; only in the second: %s\n",
				caseRef(p.A), caseRef(p.B), p.Similarity, wordList(p.OnlyA), wordList(p.OnlyB))
		}
	}

	// Tags.
	for _, tg := range h.Tags {
		fmt.Fprintf(w, "  tag %s: %d value(s)", showText(tg.Key, 40), len(tg.Values))
		if tg.Missing > 0 {
			fmt.Fprintf(w, "; %d case(s) have none: %s", tg.Missing, caseList(tg.MissingList, tg.Missing))
		}
		fmt.Fprintln(w)
		writeCounts(w, "    ", tg.Values)
	}
	if len(h.MissingBuckets) > 0 {
		fmt.Fprintf(w, "  no case is in bucket(s) %s: nothing shows how a target does there\n", strings.Join(h.MissingBuckets, ", "))
	}
	if ws := h.Warnings(); len(ws) > 0 && !o.Strict {
		fmt.Fprintf(w, "  %d warning(s); --strict makes them fail validation\n", len(ws))
	}
}

// writeFieldLabels prints the distribution of each field of object-valued
// expected values: the top values of a text field, the range and median of
// a numeric one (its values say little one by one).
func writeFieldLabels(w io.Writer, l *dataset.Labels) {
	if len(l.Fields) == 0 {
		return
	}
	fmt.Fprintf(w, "    by field (%d of the values are objects):\n", l.Objects)
	for _, f := range l.Fields {
		missing := ""
		if f.Missing > 0 {
			missing = fmt.Sprintf("; missing or null in %d", f.Missing)
		}
		if f.Numeric {
			fmt.Fprintf(w, "      %s: numeric in %d case(s)%s: min %s, median %s, max %s\n", showText(f.Field, 40), f.Values, missing,
				sixDigits(*f.Min), sixDigits(*f.Median), sixDigits(*f.Max))
			continue
		}
		fmt.Fprintf(w, "      %s: %d distinct value(s) in %d case(s)%s\n", showText(f.Field, 40), f.Distinct, f.Values, missing)
		writeCounts(w, "        ", f.Top)
		if f.Other > 0 {
			fmt.Fprintf(w, "        … %d more case(s) with other values\n", f.Other)
		}
	}
	if l.FieldsOmitted > 0 {
		fmt.Fprintf(w, "      … %d more field(s) not summarised (at most %d are)\n", l.FieldsOmitted, dataset.MaxLabelFields)
	}
}

// sixDigits writes x to six significant digits, without an exponent
// (12442, 1.5, 0.333333, 1234570).
func sixDigits(x float64) string {
	v, _ := strconv.ParseFloat(strconv.FormatFloat(x, 'g', 6, 64), 64)
	return strconv.FormatFloat(v, 'f', -1, 64)
}

// writeCounts prints values with counts, shares and, for small tag values,
// how wide their intervals will be.
func writeCounts(w io.Writer, indent string, vs []dataset.ValueCount) {
	width := 0
	for _, v := range vs {
		width = max(width, utf8.RuneCountInString(showText(v.Value, 40)))
	}
	for _, v := range vs {
		s := showText(v.Value, 40)
		fmt.Fprintf(w, "%s%s%s %6d  %5.1f%%", indent, s, strings.Repeat(" ", width-utf8.RuneCountInString(s)), v.Count, 100*v.Share)
		if v.Small {
			fmt.Fprintf(w, "  small: a rate on %d case(s) has a 95%% interval up to ±%d points", v.Count, int(math.Round(100*v.HalfWidth)))
		}
		fmt.Fprintln(w)
	}
}

func caseRef(c dataset.CaseRef) string {
	if c.ID == strconv.Itoa(c.Line) {
		return "line " + c.ID
	}
	return fmt.Sprintf("%s (line %d)", showID(c.ID), c.Line)
}

// caseList names up to 8 cases and counts the rest.
func caseList(cs []dataset.CaseRef, total int) string {
	const show = 8
	var parts []string
	for i, c := range cs {
		if i == show {
			break
		}
		parts = append(parts, caseRef(c))
	}
	s := strings.Join(parts, ", ")
	if more := total - len(parts); more > 0 {
		s += fmt.Sprintf(" and %d more", more)
	}
	return s
}

func wordList(ws []string) string {
	if len(ws) == 0 {
		return "—"
	}
	return strings.Join(showAll(ws), " ")
}

func showID(id string) string { return showText(id, 40) }

func showAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = showText(s, 40)
	}
	return out
}

// showText renders dataset text for a terminal: cut to max characters, and
// quoted (escapes shown, not obeyed) when it is empty, has spaces at its
// ends or holds anything unprintable.
func showText(s string, max int) string {
	if r := []rune(s); len(r) > max {
		s = string(r[:max]) + "…"
	}
	plain := s != "" && strings.TrimSpace(s) == s
	for _, r := range s {
		if !unicode.IsPrint(r) && r != ' ' {
			plain = false
			break
		}
	}
	if plain {
		return s
	}
	return strconv.Quote(s)
}

func jsonUnmarshal(b []byte, v any) error { return json.Unmarshal(b, v) }
